//go:build integration

package integration

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/tests/extension"
)

// leastPrivilege applies deploy/rbac and returns a client that impersonates its ServiceAccount,
// once the grant is in effect.
func leastPrivilege(t *testing.T) *kube.Client {
	t.Helper()
	data, err := os.ReadFile(repoFile("deploy/rbac/topoflow.yaml"))
	require.NoError(t, err)
	docs, err := decode.Documents(bytes.NewReader(data))
	require.NoError(t, err)
	for _, d := range docs {
		_, err := kc.Apply(t.Context(), d, "integration-test")
		require.NoError(t, err, "applying %s %s", d.GetKind(), d.GetName())
	}
	cfg := rest.CopyConfig(kc.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:topoflow-system:topoflow"}
	sa, err := kube.New(cfg)
	require.NoError(t, err)
	// The grant is in effect once the API server's authorizer has seen the binding (it may take
	// a moment after the apply): reading a Cluster that does not exist then answers NotFound.
	require.Eventually(t, func() bool {
		_, err = sa.Dynamic.Resource(kube.V1Beta1Clusters).Namespace("default").Get(t.Context(), "x", metav1.GetOptions{})
		return kube.IsNotFound(err)
	}, 30*time.Second, 200*time.Millisecond, "reading Clusters is granted")
	// The ServiceAccount cannot do what it was not granted.
	err = sa.Dynamic.Resource(kube.V1Beta1Clusters).Namespace("default").Delete(t.Context(), "x", metav1.DeleteOptions{})
	require.True(t, apierrors.IsForbidden(err), "deleting Clusters is not granted: %v", err)
	return sa
}

// TestLeastPrivilege runs topoflow (worker and watcher) as the ServiceAccount of deploy/rbac, by
// impersonation, through a Cluster's create, its ClusterClass status and its ordered delete: the
// rules shipped are enough, and a missing one fails here rather than in a management cluster.
func TestLeastPrivilege(t *testing.T) {
	e := newEnv(t, envOptions{kube: leastPrivilege(t), extensionConfigs: true})
	// A Runtime Extension whose CA is injected from a Secret: discovery, namespaceSelector, the
	// Secret and a hook call all go through the ServiceAccount.
	ext, err := extension.Start(hooksv1.BeforeClusterCreate, hooksv1.BeforeClusterDelete)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	e.registerExtension(ext)
	secret := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "ext-ca", "namespace": e.ns}, "data": map[string]any{"ca.crt": b64(ext.CABundle)}}}
	_, err = kc.Apply(e.ctx, secret, "integration-test")
	require.NoError(t, err)
	annotate := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": "ext-" + e.ns, "annotations": map[string]any{"runtime.cluster.x-k8s.io/inject-ca-from-secret": e.ns + "/ext-ca"}}}}
	_, err = kc.Apply(e.ctx, annotate, "integration-test-annotate")
	require.NoError(t, err)
	// A stale caBundle (another CA): the change is re-discovered, and the injector puts the
	// Secret's CA back.
	other, err := extension.Start()
	require.NoError(t, err)
	other.Close()
	stale := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": "ext-" + e.ns}, "spec": map[string]any{"clientConfig": map[string]any{"caBundle": b64(other.CABundle)}}}}
	_, err = kc.Apply(e.ctx, stale, "integration-test-stale") // its own manager: the rest of the spec stays
	require.NoError(t, err)
	e.eventually(30*time.Second, "the Secret's CA injected again", func() (bool, string) {
		got := &runtimev1.ExtensionConfig{}
		require.NoError(t, kc.GetTyped(e.ctx, extensionConfigs, "", "ext-"+e.ns, got))
		return string(got.Spec.ClientConfig.CABundle) == string(ext.CABundle), "stale caBundle"
	})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	e.eventually(30*time.Second, "ClusterClass status written", func() (bool, string) {
		var c clusterv1.ClusterClass
		require.NoError(t, kc.GetTyped(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", &c))
		return len(c.Status.Variables) > 0 && c.Status.ObservedGeneration == c.Generation, fmt.Sprintf("%+v", c.Status)
	})
	require.NotEmpty(t, ext.Calls(hooksv1.BeforeClusterCreate), "the hook was called")
	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Delete(e.ctx, "demo", metav1.DeleteOptions{}))
	e.eventually(90*time.Second, "Cluster deleted in order", func() (bool, string) {
		_, err := kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Get(e.ctx, "demo", metav1.GetOptions{})
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
	require.NotEmpty(t, ext.Calls(hooksv1.BeforeClusterDelete), "the delete hook was called")
	// The Events were written under the ServiceAccount too.
	e.eventually(10*time.Second, "Events of the create and the delete", func() (bool, string) {
		got := e.eventReasons("demo")
		return got["TopologyCreated"] > 0 && got["DeleteStep"] > 0, fmt.Sprint(got)
	})
}
