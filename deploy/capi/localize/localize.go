// Command localize turns Cluster API's rendered CRD and webhook manifests (kubectl kustomize of a
// provider's config/crd and config/webhook) into ones a local kube-apiserver can use: every
// webhook, conversion included, is called by URL on 127.0.0.1 with the local CA instead of through
// an in-cluster Service, configurations get the provider's name prefix (as clusterctl installs
// them), CRDs the provider label, and the admission webhooks for resources topoflow takes over
// (Cluster, ClusterClass) are left out. Only CRDs and webhook configurations are kept.
package main

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// options say where the provider's webhook server listens and what to leave out.
type options struct {
	// url is the webhook server's base URL (https://127.0.0.1:PORT); paths are appended.
	url string
	// ca is the PEM CA that signed the server's certificate.
	ca []byte
	// prefix is put before each webhook configuration's name ("capi-").
	prefix string
	// provider is the value of the cluster.x-k8s.io/provider label put on CRDs ("cluster-api").
	provider string
	// drop lists resources ("clusters") whose admission webhooks are left out.
	drop []string
}

// providerLabel is the label clusterctl puts on a provider's objects; topoflow reads it on the
// Clusters CRD to tell that Cluster API core is installed.
const providerLabel = "cluster.x-k8s.io/provider"

// localize rewrites the documents; it fails on a webhook that names no service path.
func localize(docs []*unstructured.Unstructured, o options) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, d := range docs {
		switch d.GetKind() {
		case "CustomResourceDefinition":
			if err := localizeCRD(d, o); err != nil {
				return nil, fmt.Errorf("CRD %s: %w", d.GetName(), err)
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if err := localizeWebhooks(d, o); err != nil {
				return nil, fmt.Errorf("%s %s: %w", d.GetKind(), d.GetName(), err)
			}
			if hooks, _, _ := unstructured.NestedSlice(d.Object, "webhooks"); len(hooks) == 0 {
				continue
			}
		default:
			continue
		}
		out = append(out, d)
	}
	return out, nil
}

func localizeCRD(d *unstructured.Unstructured, o options) error {
	if o.provider != "" {
		labels := d.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[providerLabel] = o.provider
		d.SetLabels(labels)
	}
	cc, found, err := unstructured.NestedMap(d.Object, "spec", "conversion", "webhook", "clientConfig")
	if err != nil || !found {
		return err
	}
	cc, err = byURL(cc, o)
	if err != nil {
		return err
	}
	return unstructured.SetNestedMap(d.Object, cc, "spec", "conversion", "webhook", "clientConfig")
}

func localizeWebhooks(d *unstructured.Unstructured, o options) error {
	d.SetName(o.prefix + d.GetName())
	hooks, _, err := unstructured.NestedSlice(d.Object, "webhooks")
	if err != nil {
		return err
	}
	kept := hooks[:0]
	for _, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			return fmt.Errorf("a webhook is not an object")
		}
		if targets(hook, o.drop) {
			continue
		}
		cc, _, err := unstructured.NestedMap(hook, "clientConfig")
		if err != nil {
			return err
		}
		if cc, err = byURL(cc, o); err != nil {
			return fmt.Errorf("webhook %v: %w", hook["name"], err)
		}
		hook["clientConfig"] = cc
		kept = append(kept, hook)
	}
	return unstructured.SetNestedSlice(d.Object, kept, "webhooks")
}

// targets says whether a webhook's rules name one of the resources.
func targets(hook map[string]any, resources []string) bool {
	rules, _, _ := unstructured.NestedSlice(hook, "rules")
	for _, r := range rules {
		rule, _ := r.(map[string]any)
		names, _, _ := unstructured.NestedStringSlice(rule, "resources")
		for _, n := range names {
			if slices.Contains(resources, strings.Split(n, "/")[0]) {
				return true
			}
		}
	}
	return false
}

// byURL replaces a service client config by the URL of the same path and the CA.
func byURL(cc map[string]any, o options) (map[string]any, error) {
	path, _, _ := unstructured.NestedString(cc, "service", "path")
	if path == "" {
		return nil, fmt.Errorf("clientConfig has no service path")
	}
	return map[string]any{
		"url":      strings.TrimSuffix(o.url, "/") + path,
		"caBundle": base64.StdEncoding.EncodeToString(o.ca),
	}, nil
}
