package activities

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
)

// revisionOf is a stored revision of a class with its templates ("Kind/name").
func revisionOf(spec map[string]any, variables []any, templates ...string) *revision.Stored {
	s := &revision.Stored{Name: "gold-2", Class: &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "ClusterClass", "spec": spec,
		"status": map[string]any{"variables": variables}}}}
	for _, t := range templates {
		kind, name, _ := strings.Cut(t, "/")
		s.Templates = append(s.Templates, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "infra/v1", "kind": kind, "metadata": map[string]any{"name": name},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"disk": "ssd"}}}}})
	}
	return s
}

// TestPinnedClassOf: a Cluster pinned to a revision is computed from the revision's spec,
// variables and templates, with the live class's metadata; a revision lacking a template the
// class references is refused (no live template is read instead).
func TestPinnedClassOf(t *testing.T) {
	a := New(&kube.Client{}, nil)
	live := &hubv1.ClusterClass{}
	live.Name, live.Namespace, live.Generation = "gold", "ns", 7
	live.Annotations = map[string]string{revision.EnabledAnnotation: revision.Enabled}
	live.Status.ObservedGeneration = 7
	live.Status.Variables = []hubv1.ClusterClassStatusVariable{{Name: "live-only"}}
	spec := map[string]any{"infrastructure": map[string]any{"ref": map[string]any{"apiVersion": "infra/v1", "kind": "SimClusterTemplate", "name": "t1"}},
		"controlPlane": map[string]any{"ref": map[string]any{"apiVersion": "infra/v1", "kind": "SimControlPlaneTemplate", "name": "cp"}}}
	vars := []any{map[string]any{"name": "region", "definitions": []any{map[string]any{"from": "inline", "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "string"}}}}}}

	got, err := a.pinnedClassOf(live, revisionOf(spec, vars, "SimClusterTemplate/t1", "SimControlPlaneTemplate/cp"))
	require.NoError(t, err)
	assert.Equal(t, "gold-2", got.Name)
	assert.Equal(t, live.ObjectMeta, got.Class.ObjectMeta, "the live class's metadata")
	assert.Equal(t, int64(7), got.Class.Status.ObservedGeneration)
	require.Len(t, got.Class.Status.Variables, 1)
	assert.Equal(t, "region", got.Class.Status.Variables[0].Name, "the revision's variables")
	assert.Equal(t, "t1", got.Class.Spec.Infrastructure.TemplateRef.Name, "a revision recorded as v1beta1 is read on the hub")
	tmpl := got.Templates["SimClusterTemplate/ns/t1"]
	require.NotNil(t, tmpl, "keyed by desired.RefKey in the class's namespace: %v", got.Templates)
	assert.Equal(t, "ns", tmpl.GetNamespace())

	_, err = a.pinnedClassOf(live, revisionOf(spec, vars, "SimClusterTemplate/t0", "SimControlPlaneTemplate/cp"))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "ClusterClassRevision ns/gold-2 holds no template SimClusterTemplate t1"), err.Error())
}

// TestHoldsPin: a classRevision change holds once the Cluster's pin names the revision of its
// class, whatever its topology; other changes look at the topology only.
func TestHoldsPin(t *testing.T) {
	c := &hubv1.Cluster{}
	c.Spec.Topology = hubv1.Topology{ClassRef: hubv1.ClusterClassRef{Name: "gold"}, Version: "v1.31.2"}
	for _, tt := range []struct {
		name   string
		pin    string
		change string
		holds  bool
	}{
		{"pinned to the revision", "gold-2", "2", true},
		{"pinned to another", "gold-1", "2", false},
		{"pinned to the number of another class", "silver-2", "2", false},
		{"not pinned", "", "2", false},
	} {
		c.Annotations = map[string]string{revision.PinAnnotation: tt.pin}
		w, err := writeFor(rolloutChange(tt.change), nil, c)
		require.NoError(t, err)
		assert.Equal(t, tt.holds, holds(c, w), tt.name)
		assert.Equal(t, "gold-"+tt.change, w.Pin, tt.name)
	}
	_, err := writeFor(rolloutChange(revision.Latest), nil, c)
	assert.Error(t, err, "latest is resolved when the rollout starts")
}

func rolloutChange(classRevision string) rolloutv1.Change {
	return rolloutv1.Change{ClassRevision: classRevision}
}
