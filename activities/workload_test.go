package activities

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestWorkloadClients: the workload cluster's client comes from the kubeconfig Secret
// <cluster>-kubeconfig (key value), as Cluster API's ClusterCache reads it; it is kept for the
// next pass, and built again once dropped. A missing Secret or one without a kubeconfig is an
// error naming the Secret, never showing its content.
func TestWorkloadClients(t *testing.T) {
	kubeconfig := []byte(`apiVersion: v1
kind: Config
clusters: [{name: w, cluster: {server: "https://w.example:6443"}}]
users: [{name: u, user: {token: not-shown}}]
contexts: [{name: c, context: {cluster: w, user: u}}]
current-context: c
`)
	secret := func(name string, data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": name, "namespace": "ns"}, "data": data}}
	}
	dyn := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(),
		secret("good-kubeconfig", map[string]any{"value": base64.StdEncoding.EncodeToString(kubeconfig)}),
		secret("empty-kubeconfig", map[string]any{"other": base64.StdEncoding.EncodeToString(kubeconfig)}))
	a := &Activities{Kube: &kube.Client{Dynamic: dyn}}
	cluster := func(name string) *hubv1.Cluster {
		c := &hubv1.Cluster{}
		c.Namespace, c.Name = "ns", name
		return c
	}
	ctx := context.Background()

	first, err := a.workload.get(ctx, a.Kube, cluster("good"))
	require.NoError(t, err)
	again, err := a.workload.get(ctx, a.Kube, cluster("good"))
	require.NoError(t, err)
	assert.Same(t, first, again, "kept for the next pass")
	a.workload.drop("ns", "good")
	rebuilt, err := a.workload.get(ctx, a.Kube, cluster("good"))
	require.NoError(t, err)
	assert.NotSame(t, first, rebuilt, "built again once dropped")

	_, err = a.workload.get(ctx, a.Kube, cluster("missing"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reading the kubeconfig Secret ns/missing-kubeconfig")
	_, err = a.workload.get(ctx, a.Kube, cluster("empty"))
	require.EqualError(t, err, "the kubeconfig Secret ns/empty-kubeconfig has no data.value")
	assert.NotContains(t, err.Error(), "not-shown")
}
