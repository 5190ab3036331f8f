//go:build integration

package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/labels"
)

// TestPatchesSetMetadata: a class's inline patch sets a label on the control plane through its
// template's spec.template.metadata, as Cluster API v1.14 lets it (inline patches stay under
// /spec; a template's own metadata is open to external patches, see the desired-state test);
// the cluster-name label stays.
func TestPatchesSetMetadata(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() != "ClusterClass" {
			return
		}
		ps, _, _ := unstructured.NestedSlice(u.Object, "spec", "patches")
		ps = append(ps, map[string]any{"name": "metadata", "definitions": []any{
			map[string]any{
				"selector": map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlaneTemplate",
					"matchResources": map[string]any{"controlPlane": true}},
				"jsonPatches": []any{
					map[string]any{"op": "add", "path": "/spec/template/metadata/labels/team", "value": "a"},
					map[string]any{"op": "replace", "path": "/spec/template/metadata/labels/cluster.x-k8s.io~1cluster-name", "value": "other"},
				},
			},
		}})
		require.NoError(t, unstructured.SetNestedSlice(u.Object, ps, "spec", "patches"))
	})
	e.applyFile(clusterFile)
	c := e.waitReconciled("demo", 90*time.Second)

	cp := e.get(c.Spec.ControlPlaneRef)
	assert.Equal(t, "a", cp.GetLabels()["team"])
	assert.Equal(t, "demo", cp.GetLabels()[labels.ClusterName])
	e.waitSettled("demo")
}
