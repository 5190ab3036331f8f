//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestUnknownFieldsTolerated (#13): a newer Cluster API adds fields to the Cluster; topoflow's
// reads tolerate them (a warning, not an invalid Cluster) and the Cluster is reconciled. The
// Clusters CRD gets a field topoflow's types do not know for the test's duration.
func TestUnknownFieldsTolerated(t *testing.T) {
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	const path = "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/futureField"
	add := fmt.Sprintf(`[{"op":"add","path":%q,"value":{"type":"string"}}]`, path)
	_, err := kc.Dynamic.Resource(crds).Patch(t.Context(), "clusters.cluster.x-k8s.io", types.JSONPatchType, []byte(add), metav1.PatchOptions{FieldManager: "integration-test"})
	require.NoError(t, err)
	t.Cleanup(func() {
		remove := fmt.Sprintf(`[{"op":"remove","path":%q}]`, path)
		_, _ = kc.Dynamic.Resource(crds).Patch(context.Background(), "clusters.cluster.x-k8s.io", types.JSONPatchType, []byte(remove), metav1.PatchOptions{})
	})

	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	// The schema change takes a moment to reach the API server's handlers: apply until the field stays.
	e.eventually(20*time.Second, "the Cluster stored with the new field", func() (bool, string) {
		e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
			if u.GetKind() == "Cluster" {
				_ = unstructured.SetNestedField(u.Object, "from a newer API", "spec", "futureField")
			}
		})
		u, err := kc.Dynamic.Resource(schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "clusters"}).
			Namespace(e.ns).Get(e.ctx, "demo", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		v, _, _ := unstructured.NestedString(u.Object, "spec", "futureField")
		return v != "", "pruned"
	})
	c := e.waitReconciled("demo", 90*time.Second)
	require.NotNil(t, c.Spec.ControlPlaneRef, "the topology was created")
}
