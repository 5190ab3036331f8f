//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/topoflow/topoflow/internal/kube"
)

// TestMigrateStorage: after a CRD's storage version moves from v1 to v2, kube.Client.MigrateStorage
// rewrites every object (each one's resourceVersion changes: the API server encoded it again, in
// v2) and leaves status.storedVersions [v2]; a second run has nothing to do. A CRD of its own, so
// the suite's CRDs are not touched.
func TestMigrateStorage(t *testing.T) {
	e := newEnv(t, envOptions{})
	plural := "w" + strings.ToLower(rand.String(6))
	group := "migrate.topoflow.dev"
	name := plural + "." + group
	version := func(v string, storage bool) map[string]any {
		return map[string]any{"name": v, "served": true, "storage": storage,
			"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			"subresources": map[string]any{"status": map[string]any{}}}
	}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"group": group, "scope": "Namespaced",
			"names":    map[string]any{"plural": plural, "singular": plural, "kind": "Widget" + plural, "listKind": "Widget" + plural + "List"},
			"versions": []any{version("v1", true), version("v2", false)}},
	}}
	_, err := kc.Apply(e.ctx, crd, "test")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = kc.Dynamic.Resource(kube.CustomResourceDefinitions).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	v1 := schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
	rvs := map[string]string{}
	e.eventually(30*time.Second, "the CRD served", func() (bool, string) {
		for i := range 3 {
			n := fmt.Sprintf("w-%d", i)
			if _, ok := rvs[n]; ok {
				continue
			}
			o, err := kc.Dynamic.Resource(v1).Namespace(e.ns).Create(e.ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": group + "/v1", "kind": "Widget" + plural, "metadata": map[string]any{"name": n}, "spec": map[string]any{"size": int64(i)}}},
				metav1.CreateOptions{})
			if err != nil {
				return false, err.Error()
			}
			rvs[n] = o.GetResourceVersion()
		}
		return true, ""
	})

	crd.Object["spec"].(map[string]any)["versions"] = []any{version("v1", false), version("v2", true)}
	_, err = kc.Apply(e.ctx, crd, "test")
	require.NoError(t, err)
	stored := func() []string {
		got, err := kc.Dynamic.Resource(kube.CustomResourceDefinitions).Get(e.ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		s, _, _ := unstructured.NestedStringSlice(got.Object, "status", "storedVersions")
		return s
	}
	require.Equal(t, []string{"v1", "v2"}, stored())

	n, err := kc.MigrateStorage(e.ctx, name)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, []string{"v2"}, stored())
	v2 := schema.GroupVersionResource{Group: group, Version: "v2", Resource: plural}
	for obj, rv := range rvs {
		o, err := kc.Dynamic.Resource(v2).Namespace(e.ns).Get(e.ctx, obj, metav1.GetOptions{})
		require.NoError(t, err)
		assert.NotEqual(t, rv, o.GetResourceVersion(), "%s written again", obj)
		size, _, _ := unstructured.NestedInt64(o.Object, "spec", "size")
		assert.Equal(t, obj, fmt.Sprintf("w-%d", size), "%s unchanged", obj)
	}

	n, err = kc.MigrateStorage(e.ctx, name)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left to migrate")
}
