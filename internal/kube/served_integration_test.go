//go:build integration

package kube

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1beta2 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestHubAgainstV1Beta1Server runs the hub resources against a running stack (KUBECONFIG, as
// tests/integration reads it) whose API server serves cluster.x-k8s.io in v1beta1 only (the
// default TOPOFLOW_CRDS=topoflow): a Cluster created, read, applied in part, patched, listed and
// deleted as v1beta2 is stored as v1beta1, and reads the same either way. Once without a cache and
// once through it (the informer watches the v1beta1 resource).
func TestHubAgainstV1Beta1Server(t *testing.T) {
	if os.Getenv("KUBECONFIG") == "" {
		t.Skip("needs KUBECONFIG of a running stack (deploy/stack/up.sh; source .stack/<name>/env)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := RESTConfig("")
	require.NoError(t, err)
	probe, err := New(cfg)
	require.NoError(t, err)
	if v, err := probe.PreferredVersion(v1beta1.Group, "Cluster"); err != nil || v != "v1beta1" {
		t.Skipf("the API server prefers Clusters in %q (%v): this test wants a v1beta1-only stack", v, err)
	}
	ns := fmt.Sprintf("kube-hub-%d", time.Now().UnixNano())
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	_, err = probe.Dynamic.Resource(namespaces).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = probe.Dynamic.Resource(namespaces).Delete(context.Background(), ns, metav1.DeleteOptions{})
	})

	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached=%v", cached), func(t *testing.T) {
			c, err := New(cfg)
			require.NoError(t, err)
			if cached {
				c.UseCache(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), "kube-test")
			}
			hubRoundTrip(ctx, t, c, ns, fmt.Sprintf("c-%v", cached))
		})
	}
}

func hubRoundTrip(ctx context.Context, t *testing.T, c *Client, ns, name string) {
	assert.Equal(t, V1Beta1Clusters, c.Wire(Clusters))

	created, err := c.Create(ctx, Clusters, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta2.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": "kube-hub"}},
		"spec": map[string]any{
			"paused":          false,
			"controlPlaneRef": map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "SimControlPlane", "name": name},
			"topology":        map[string]any{"classRef": map[string]any{"name": "quick-start"}, "version": "v1.31.2"},
		},
	}}, "kube-test")
	require.NoError(t, err)
	assert.Equal(t, v1beta2.String(), created.GetAPIVersion())

	// Stored as v1beta1, with no conversion data.
	stored, err := c.Dynamic.Resource(V1Beta1Clusters).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	class, _, _ := unstructured.NestedString(stored.Object, "spec", "topology", "class")
	cpVersion, _, _ := unstructured.NestedString(stored.Object, "spec", "controlPlaneRef", "apiVersion")
	assert.Equal(t, "quick-start", class)
	assert.Equal(t, "controlplane.cluster.x-k8s.io/v1beta1", cpVersion)
	assert.NotContains(t, stored.GetAnnotations(), conversion.DataAnnotation)

	// Read back as v1beta2 (typed, the hub) and as v1beta1.
	var hub clusterv1beta2.Cluster
	require.NoError(t, c.GetTyped(ctx, Clusters, ns, name, &hub))
	assert.Equal(t, "quick-start", hub.Spec.Topology.ClassRef.Name)
	assert.Equal(t, "v1.31.2", hub.Spec.Topology.Version)
	assert.Equal(t, "controlplane.cluster.x-k8s.io", hub.Spec.ControlPlaneRef.APIGroup)
	old, err := c.GetUncached(ctx, V1Beta1Clusters, ns, name)
	require.NoError(t, err)
	assert.Equal(t, stored.Object["spec"], old.Object["spec"])

	// A partial v1beta2 apply changes the class and owns that field only: the version stays.
	partial := func(class string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1beta2.String(), "kind": "Cluster", "metadata": map[string]any{"name": name, "namespace": ns},
			"spec": map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": class}}},
		}}
	}
	applied, err := c.Apply(ctx, partial("quick-start-2"), "kube-test-rollout")
	require.NoError(t, err)
	assert.Equal(t, v1beta2.String(), applied.GetAPIVersion())
	classRef, _, _ := unstructured.NestedString(applied.Object, "spec", "topology", "classRef", "name")
	version, _, _ := unstructured.NestedString(applied.Object, "spec", "topology", "version")
	assert.Equal(t, "quick-start-2", classRef)
	assert.Equal(t, "v1.31.2", version, "a partial apply keeps what it does not name")
	assert.NotContains(t, applied.GetAnnotations(), conversion.DataAnnotation)
	stored, err = c.Dynamic.Resource(V1Beta1Clusters).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	owned := ""
	for _, m := range stored.GetManagedFields() {
		if m.Manager == "kube-test-rollout" {
			assert.Equal(t, "cluster.x-k8s.io/v1beta1", m.APIVersion)
			owned = string(m.FieldsV1.Raw)
		}
	}
	assert.Equal(t, `{"f:spec":{"f:topology":{"f:class":{}}}}`, owned, "the partial apply owns the class alone")
	again, err := c.Apply(ctx, partial("quick-start-2"), "kube-test-rollout")
	require.NoError(t, err)
	assert.Equal(t, applied.GetResourceVersion(), again.GetResourceVersion(), "the same apply changes nothing")

	// A merge patch of an annotation, and of the control plane reference, as v1beta2.
	patched, err := c.MergePatch(ctx, Clusters, ns, name,
		[]byte(`{"metadata":{"annotations":{"kube-hub":"yes"}},"spec":{"controlPlaneRef":{"apiGroup":"controlplane.cluster.x-k8s.io","kind":"SimControlPlane","name":"cp-2"}}}`),
		"kube-test")
	require.NoError(t, err)
	assert.Equal(t, "yes", patched.GetAnnotations()["kube-hub"])
	cp, _, _ := unstructured.NestedMap(patched.Object, "spec", "controlPlaneRef")
	assert.Equal(t, map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "SimControlPlane", "name": "cp-2"}, cp)
	_, err = c.MergePatch(ctx, Clusters, ns, name, []byte(`{"status":{"phase":"x"}}`), "kube-test")
	assert.ErrorContains(t, err, `sets "status"`)

	// An update of the object read as v1beta2.
	cur, err := c.Get(ctx, Clusters, ns, name, ResourceVersionOf(patched.GetResourceVersion()))
	require.NoError(t, err)
	cur.SetLabels(map[string]string{"app": "kube-hub", "updated": "yes"})
	updated, err := c.Update(ctx, Clusters, cur, "kube-test")
	require.NoError(t, err)
	assert.Equal(t, "yes", updated.GetLabels()["updated"])
	assert.Equal(t, v1beta2.String(), updated.GetAPIVersion())

	// Listed in either version (the cache may lag its informer: wait for the update).
	require.Eventually(t, func() bool {
		items, err := c.List(ctx, Clusters, ns, "updated=yes")
		return err == nil && len(items) == 1 && items[0].GetName() == name && items[0].GetAPIVersion() == v1beta2.String()
	}, 30*time.Second, 100*time.Millisecond)
	names, err := c.ListNames(ctx, Clusters, ns, "app=kube-hub")
	require.NoError(t, err)
	assert.Contains(t, nameList(names), name)
	olds, err := c.ListUncached(ctx, V1Beta1Clusters, ns, "updated=yes")
	require.NoError(t, err)
	require.Len(t, olds, 1)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", olds[0].GetAPIVersion())
	_, err = c.List(ctx, MachinePools, ns, "")
	require.NoError(t, err, "MachinePools, v1beta1 only on every topoflow stack, listed as v1beta2")

	// Deleted as v1beta2.
	require.NoError(t, c.Delete(ctx, Clusters, ns, name))
	_, err = c.GetUncached(ctx, Clusters, ns, name)
	assert.True(t, IsNotFound(err), "gone: %v", err)
}

func nameList(items []unstructured.Unstructured) string {
	var names []string
	for _, u := range items {
		names = append(names, u.GetName())
	}
	return strings.Join(names, ",")
}
