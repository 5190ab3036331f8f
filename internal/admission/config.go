package admission

import (
	"context"
	"encoding/json"
	"fmt"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/labels"
)

// ConfigName names topoflow's webhook configurations ("topoflow-mutating-webhook-configuration"
// and "-validating-"); a suffix keeps test registrations apart.
func ConfigName(kind, suffix string) string {
	return "topoflow-" + kind + "-webhook-configuration" + suffix
}

// Configurations are the mutating and validating webhook configurations for the server at base
// (clientConfig with a url, for servers outside the cluster such as the local stack's, or a
// service with an empty path), limited to namespaces matching nsSelector when given. Every
// webhook fails closed (failurePolicy Fail, as Cluster API's): while topoflow's webhooks are down,
// Clusters and ClusterClasses cannot be changed, so nothing unchecked gets in, and topology
// objects cannot be deleted (the delete hold could not tell whether their Cluster allows it).
func Configurations(base admissionregv1.WebhookClientConfig, nsSelector *metav1.LabelSelector, suffix string) (*admissionregv1.MutatingWebhookConfiguration, *admissionregv1.ValidatingWebhookConfiguration) {
	fail := admissionregv1.Fail
	none := admissionregv1.SideEffectClassNone
	equivalent := admissionregv1.Equivalent
	timeout := int32(10)
	at := func(path string) admissionregv1.WebhookClientConfig { return clientConfigAt(base, path) }
	selects := func(resource string) (namespaces, objects *metav1.LabelSelector) {
		return selectorsFor(resource, nsSelector)
	}
	create, update, del := admissionregv1.Create, admissionregv1.Update, admissionregv1.Delete
	m := &admissionregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName("mutating", suffix)},
	}
	for _, w := range []struct{ name, path, resource string }{
		{"default.cluster.cluster.x-k8s.io", PathMutateCluster, "clusters"},
		{"default.clusterclass.cluster.x-k8s.io", PathMutateClusterClass, "clusterclasses"},
		{"default.extensionconfig.runtime.addons.cluster.x-k8s.io", PathMutateExtensionConfig, "extensionconfigs"},
	} {
		ns, obj := selects(w.resource)
		m.Webhooks = append(m.Webhooks, admissionregv1.MutatingWebhook{
			Name: w.name, ClientConfig: at(w.path), Rules: rulesFor(w.resource, create, update),
			FailurePolicy: &fail, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: ns, ObjectSelector: obj,
		})
	}
	v := &admissionregv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: ConfigName("validating", suffix)},
	}
	for _, w := range []struct {
		name, path, resource string
		ops                  []admissionregv1.OperationType
	}{
		{"validation.cluster.cluster.x-k8s.io", PathValidateCluster, "clusters", []admissionregv1.OperationType{create, update}},
		{"validation.clusterclass.cluster.x-k8s.io", PathValidateClusterClass, "clusterclasses", []admissionregv1.OperationType{create, update, del}},
		{"validation.extensionconfig.runtime.cluster.x-k8s.io", PathValidateExtensionConfig, "extensionconfigs", []admissionregv1.OperationType{create, update}},
		{"validation.rollout.topoflow.dev", PathValidateRollout, "rollouts", []admissionregv1.OperationType{create, update}},
		{"validation.rolloutstrategy.topoflow.dev", PathValidateRolloutStrategy, "rolloutstrategies", []admissionregv1.OperationType{create, update}},
	} {
		ns, obj := selects(w.resource)
		v.Webhooks = append(v.Webhooks, admissionregv1.ValidatingWebhook{
			Name: w.name, ClientConfig: at(w.path), Rules: rulesFor(w.resource, w.ops...),
			FailurePolicy: &fail, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeout,
			AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: ns, ObjectSelector: obj,
		})
	}
	// The delete hold: deletes of any namespaced object carrying the topology-owned label (the
	// API server only calls for those), refused while the Cluster waits for BeforeClusterDelete.
	scope := admissionregv1.NamespacedScope
	v.Webhooks = append(v.Webhooks, admissionregv1.ValidatingWebhook{
		Name: "hold-delete.topology.topoflow.dev", ClientConfig: at(PathHoldTopologyDelete),
		Rules: []admissionregv1.RuleWithOperations{{Operations: []admissionregv1.OperationType{del}, Rule: admissionregv1.Rule{
			APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}, Scope: &scope}}},
		ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: labels.TopologyOwned, Operator: metav1.LabelSelectorOpExists}}},
		FailurePolicy:  &fail, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeout,
		AdmissionReviewVersions: []string{"v1"}, NamespaceSelector: nsSelector,
	})
	return m, v
}

// clientConfigAt is the webhooks' client config with the path of one webhook.
func clientConfigAt(base admissionregv1.WebhookClientConfig, path string) admissionregv1.WebhookClientConfig {
	cc := *base.DeepCopy()
	switch {
	case cc.URL != nil:
		u := *cc.URL + path
		cc.URL = &u
	case cc.Service != nil:
		cc.Service.Path = &path
	}
	return cc
}

// rulesFor is the rule of a webhook for one resource of Cluster API (ExtensionConfigs in the
// runtime group, the rest in the core group) or of topoflow (Rollouts and RolloutStrategies).
func rulesFor(resource string, ops ...admissionregv1.OperationType) []admissionregv1.RuleWithOperations {
	group, version := "cluster.x-k8s.io", "v1beta1"
	switch resource {
	case "extensionconfigs":
		group, version = "runtime.cluster.x-k8s.io", "v1alpha1"
	case "rollouts", "rolloutstrategies":
		group, version = "topoflow.dev", "v1alpha1"
	}
	return []admissionregv1.RuleWithOperations{{Operations: ops, Rule: admissionregv1.Rule{
		APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}}}}
}

// selectorsFor limits a webhook to the namespaces selected. ExtensionConfigs are cluster-scoped: a
// namespace selector does not limit which the API server sends, so a registration limited to some
// namespaces takes only ExtensionConfigs labelled like them (the integration tests'
// registrations, one per test namespace).
func selectorsFor(resource string, nsSelector *metav1.LabelSelector) (namespaces, objects *metav1.LabelSelector) {
	if resource == "extensionconfigs" {
		return nil, nsSelector
	}
	return nsSelector, nil
}

// Register applies both configurations (server-side apply, field manager "topoflow").
func Register(ctx context.Context, kc *kube.Client, m *admissionregv1.MutatingWebhookConfiguration, v *admissionregv1.ValidatingWebhookConfiguration) error {
	for _, obj := range []any{m, v} {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		delete(u, "status")
		if meta, ok := u["metadata"].(map[string]any); ok {
			delete(meta, "creationTimestamp")
		}
		if _, err := kc.Apply(ctx, &unstructured.Unstructured{Object: u}, "topoflow"); err != nil {
			return fmt.Errorf("registering the admission webhooks: %w", err)
		}
	}
	return nil
}

// Unregister deletes both configurations (absent ones are fine).
func Unregister(ctx context.Context, kc *kube.Client, suffix string) error {
	for _, kind := range []string{"mutating", "validating"} {
		gvr := admissionregv1.SchemeGroupVersion.WithResource(kind + "webhookconfigurations")
		err := kc.Dynamic.Resource(gvr).Delete(ctx, ConfigName(kind, suffix), metav1.DeleteOptions{})
		if err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("removing the %s webhook configuration: %w", kind, err)
		}
	}
	return nil
}

// ConversionLabel marks the CRDs whose conversion webhook topoflow serves (deploy/crds-v1beta2);
// CRDs converted by Cluster API do not carry it and are left alone.
const ConversionLabel = "topoflow.dev/conversion"

// RegisterConversion points the conversion webhook of every CRD labelled ConversionLabel at the
// server at base (its PathConvert, trusted through caBundle), for servers outside the cluster
// such as the local stack's. It returns the names of the CRDs it pointed.
func RegisterConversion(ctx context.Context, kc *kube.Client, base string, caBundle []byte) ([]string, error) {
	list, err := kc.Dynamic.Resource(kube.CustomResourceDefinitions).List(ctx, metav1.ListOptions{LabelSelector: ConversionLabel + "=true"})
	if err != nil {
		return nil, fmt.Errorf("listing the CRDs topoflow converts: %w", err)
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": map[string]any{
		"strategy": "Webhook",
		"webhook": map[string]any{"conversionReviewVersions": []string{"v1"},
			"clientConfig": map[string]any{"url": base + PathConvert, "caBundle": caBundle, "service": nil}},
	}}})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, crd := range list.Items {
		if _, err := kc.MergePatch(ctx, kube.CustomResourceDefinitions, "", crd.GetName(), patch, "topoflow"); err != nil {
			return names, fmt.Errorf("pointing the conversion webhook of CRD %s: %w", crd.GetName(), err)
		}
		names = append(names, crd.GetName())
	}
	return names, nil
}
