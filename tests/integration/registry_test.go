//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/tests/extension"
)

// TestClusterClassStatus: a ClusterClass gets its effective variables in status.variables, the
// VariablesReady condition (VariablesReconciled read in v1beta1) and its observed generation; a
// change is reflected.
func TestClusterClassStatus(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	var class clusterv1.ClusterClass
	e.eventually(30*time.Second, "status.variables written", func() (bool, string) {
		class = clusterv1.ClusterClass{}
		require.NoError(t, kc.GetTyped(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", &class))
		return len(class.Status.Variables) == 3 && class.Status.ObservedGeneration == class.Generation, fmt.Sprintf("%+v", class.Status)
	})
	names := []string{}
	for _, v := range class.Status.Variables {
		names = append(names, v.Name)
		require.Len(t, v.Definitions, 1)
		assert.Equal(t, "inline", v.Definitions[0].From)
	}
	assert.Equal(t, []string{"imageRepository", "region", "workerInstanceType"}, names)
	cond := class.Status.Conditions.Get("VariablesReconciled")
	require.NotNil(t, cond)
	assert.Equal(t, corev1.ConditionTrue, cond.Status)
	// The same status on the hub, as Cluster API v1.14's ClusterClass controller writes it.
	var hub hubv1.ClusterClass
	require.NoError(t, kc.GetTyped(e.ctx, kube.ClusterClasses, e.ns, "quick-start", &hub))
	ready := meta.FindStatusCondition(hub.Status.Conditions, "VariablesReady")
	require.NotNil(t, ready, "%+v", hub.Status)
	assert.Equal(t, metav1.ConditionTrue, ready.Status)
	assert.Equal(t, "VariablesReady", ready.Reason)
	assert.Equal(t, hub.Generation, ready.ObservedGeneration)
	require.NotNil(t, hub.Status.Deprecated)
	require.NotNil(t, hub.Status.Deprecated.V1Beta1)
	require.Len(t, hub.Status.Deprecated.V1Beta1.Conditions, 1)
	assert.Equal(t, "VariablesReconciled", hub.Status.Deprecated.V1Beta1.Conditions[0].Type)
	require.Len(t, hub.Status.Variables, 3)

	// The class owns every template it references (Cluster API's ClusterClass controller,
	// reconcileExternalReferences), the other owners kept.
	for _, tr := range desired.TemplateRefs(&hub) {
		u := e.get(tr.Ref)
		owners := map[string]string{}
		for _, o := range u.GetOwnerReferences() {
			owners[o.Kind+"/"+o.Name] = string(o.UID)
		}
		assert.Equal(t, string(class.UID), owners["ClusterClass/quick-start"], "%s %s owned by the class", tr.Ref.Kind, tr.Ref.Name)
	}

	// An invalid change is reported on the class.
	e.applyFile(classFile, onlyKinds("ClusterClass"), func(u *unstructured.Unstructured) {
		if u.GetKind() != "ClusterClass" {
			return
		}
		// Valid for the CRD schema, invalid for topoflow: patches may only touch /spec/.
		patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "patches")
		def := patches[0].(map[string]any)["definitions"].([]any)[0].(map[string]any)
		def["jsonPatches"].([]any)[0].(map[string]any)["path"] = "/metadata/labels/region"
		require.NoError(t, unstructured.SetNestedSlice(u.Object, patches, "spec", "patches"))
	})
	e.eventually(30*time.Second, "invalid class reported", func() (bool, string) {
		class = clusterv1.ClusterClass{}
		require.NoError(t, kc.GetTyped(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", &class))
		c := class.Status.Conditions.Get("VariablesReconciled")
		return c != nil && c.Status == corev1.ConditionFalse && class.Status.ObservedGeneration == class.Generation, fmt.Sprint(c)
	})
	assert.Contains(t, class.Status.Conditions.Get("VariablesReconciled").Message,
		`spec.patches[0].definitions[0].jsonPatches[0].path: Invalid value: "/metadata/labels/region": must start with "/spec/"`)
}

// TestExtensionDiscovery: an ExtensionConfig is discovered when it is registered (before any
// Cluster needs it) and again whenever it changes.
func TestExtensionDiscovery(t *testing.T) {
	e := newEnv(t, envOptions{extensionConfigs: true})
	ext, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	e.registerExtension(ext)
	handlers := func() []string {
		cfg := &runtimev1.ExtensionConfig{}
		require.NoError(t, kc.GetTyped(e.ctx, extensionConfigs, "", "ext-"+e.ns, cfg))
		var out []string
		for _, h := range cfg.Status.Handlers {
			out = append(out, h.RequestHook.Hook)
		}
		return out
	}
	e.eventually(30*time.Second, "discovered on registration", func() (bool, string) {
		h := handlers()
		return len(h) == 1 && h[0] == hooksv1.BeforeClusterCreate, fmt.Sprint(h)
	})

	ext.SetHooks(hooksv1.BeforeClusterCreate, hooksv1.BeforeClusterDelete)
	cfg := &runtimev1.ExtensionConfig{}
	require.NoError(t, kc.GetTyped(e.ctx, extensionConfigs, "", "ext-"+e.ns, cfg))
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": runtimev1.GroupVersion.String(), "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": cfg.Name},
		"spec":     map[string]any{"settings": map[string]any{"owner": "integration-test", "revision": "2"}},
	}}
	_, err = kc.Apply(e.ctx, obj, "integration-test-update") // its own field manager: the rest of the spec stays
	require.NoError(t, err)
	e.eventually(30*time.Second, "re-discovered after the change", func() (bool, string) {
		h := handlers()
		return len(h) == 2, fmt.Sprint(h)
	})
	discovered := func() *clusterv1.Condition {
		cfg := &runtimev1.ExtensionConfig{}
		require.NoError(t, kc.GetTyped(e.ctx, extensionConfigs, "", "ext-"+e.ns, cfg))
		return cfg.Status.Conditions.Get(runtimev1.DiscoveredCondition)
	}
	require.NotNil(t, discovered())
	assert.Equal(t, corev1.ConditionTrue, discovered().Status)

	// A failing discovery is recorded at once (Discovered=False, Cluster API's reason and message),
	// the handlers found before stay, and discovery is retried until it answers.
	ext.FailDiscovery("not ready yet")
	obj.Object["spec"] = map[string]any{"settings": map[string]any{"owner": "integration-test", "revision": "3"}}
	_, err = kc.Apply(e.ctx, obj, "integration-test-update")
	require.NoError(t, err)
	want := "Error in discovery: discovery of ExtensionConfig ext-" + e.ns + " failed: not ready yet"
	e.eventually(30*time.Second, "the failed discovery recorded", func() (bool, string) {
		c := discovered()
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == runtimev1.DiscoveryFailedReason &&
			c.Severity == clusterv1.ConditionSeverityError && c.Message == want, fmt.Sprint(c)
	})
	assert.Len(t, handlers(), 2, "the handlers found before stay")
	ext.FailDiscovery("")
	e.eventually(30*time.Second, "discovered again once it answers", func() (bool, string) {
		c := discovered()
		return c != nil && c.Status == corev1.ConditionTrue, fmt.Sprint(c)
	})
}

// TestCAInjection: an ExtensionConfig without a caBundle but with the inject-ca-from-secret
// annotation gets the Secret's ca.crt, and discovery verifies the extension with it.
func TestCAInjection(t *testing.T) {
	e := newEnv(t, envOptions{extensionConfigs: true})
	ext, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "ext-serving-cert", "namespace": e.ns},
		"data":     map[string]any{"ca.crt": b64(ext.CABundle), "tls.crt": b64([]byte("unused"))},
	}}
	_, err = kc.Apply(e.ctx, secret, "integration-test")
	require.NoError(t, err)
	name := "ext-ca-" + e.ns
	cfg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": runtimev1.GroupVersion.String(), "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{
			"runtime.cluster.x-k8s.io/inject-ca-from-secret": e.ns + "/ext-serving-cert"}},
		"spec": map[string]any{
			"clientConfig":      map[string]any{"url": ext.URL},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"topoflow.dev/test": e.ns}},
		},
	}}
	_, err = kc.Apply(e.ctx, cfg, "integration-test")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kc.Dynamic.Resource(extensionConfigs).Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	e.eventually(30*time.Second, "CA injected and handlers discovered", func() (bool, string) {
		got := &runtimev1.ExtensionConfig{}
		require.NoError(t, kc.GetTyped(e.ctx, extensionConfigs, "", name, got))
		return len(got.Status.Handlers) == 1 && string(got.Spec.ClientConfig.CABundle) == string(ext.CABundle),
			fmt.Sprintf("handlers %v, caBundle %d bytes", got.Status.Handlers, len(got.Spec.ClientConfig.CABundle))
	})
}
