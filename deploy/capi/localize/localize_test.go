package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/decode"
)

// rendered is shaped like kubectl kustomize of a provider's config/crd and config/webhook.
const rendered = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusters.cluster.x-k8s.io
spec:
  conversion:
    strategy: Webhook
    webhook:
      conversionReviewVersions: ["v1"]
      clientConfig:
        service: {name: webhook-service, namespace: system, path: /convert}
---
apiVersion: v1
kind: Service
metadata: {name: webhook-service, namespace: system}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: validating-webhook-configuration}
webhooks:
- name: validation.cluster.cluster.x-k8s.io
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-cluster-x-k8s-io-v1beta2-cluster}
  rules: [{apiGroups: [cluster.x-k8s.io], resources: [clusters], operations: [CREATE]}]
- name: validation.machine.cluster.x-k8s.io
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate-cluster-x-k8s-io-v1beta2-machine}
  rules: [{apiGroups: [cluster.x-k8s.io], resources: [machines], operations: [CREATE]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutating-webhook-configuration}
webhooks:
- name: default.clusterclass.cluster.x-k8s.io
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate-cluster-x-k8s-io-v1beta2-clusterclass}
  rules: [{apiGroups: [cluster.x-k8s.io], resources: [clusterclasses], operations: [CREATE]}]
`

func TestLocalize(t *testing.T) {
	docs, err := decode.Documents(strings.NewReader(rendered))
	if err != nil {
		t.Fatal(err)
	}
	ca := []byte("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
	out, err := localize(docs, options{url: "https://127.0.0.1:49444/", ca: ca, prefix: "capi-", provider: "cluster-api", drop: []string{"clusters", "clusterclasses"}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range out {
		kinds = append(kinds, d.GetKind()+"/"+d.GetName())
	}
	// The Service goes, and so does the mutating configuration whose only webhook was dropped.
	if got, want := strings.Join(kinds, " "), "CustomResourceDefinition/clusters.cluster.x-k8s.io ValidatingWebhookConfiguration/capi-validating-webhook-configuration"; got != want {
		t.Fatalf("documents = %s, want %s", got, want)
	}
	wantCA := base64.StdEncoding.EncodeToString(ca)

	crd := out[0]
	if crd.GetLabels()[providerLabel] != "cluster-api" {
		t.Errorf("CRD labels = %v", crd.GetLabels())
	}
	cc, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig")
	if cc["url"] != "https://127.0.0.1:49444/convert" || cc["caBundle"] != wantCA || cc["service"] != nil {
		t.Errorf("conversion clientConfig = %v", cc)
	}

	hooks, _, _ := unstructured.NestedSlice(out[1].Object, "webhooks")
	if len(hooks) != 1 {
		t.Fatalf("webhooks = %v, want only the Machine one", hooks)
	}
	hook := hooks[0].(map[string]any)
	cc = hook["clientConfig"].(map[string]any)
	if hook["name"] != "validation.machine.cluster.x-k8s.io" || cc["url"] != "https://127.0.0.1:49444/validate-cluster-x-k8s-io-v1beta2-machine" || cc["caBundle"] != wantCA {
		t.Errorf("webhook = %v", hook)
	}
}

func TestLocalizeRefusesWebhookWithoutPath(t *testing.T) {
	docs, err := decode.Documents(strings.NewReader(`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
webhooks:
- name: x
  clientConfig: {service: {name: s, namespace: n}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := localize(docs, options{url: "https://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "no service path") {
		t.Fatalf("err = %v", err)
	}
}
