package watcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
)

// TestUpgradeTarget: events go straight to an upgrade's workflow only while the Cluster says
// ClusterUpgrading, and to the one named by its topology version.
func TestUpgradeTarget(t *testing.T) {
	cluster := func(conds ...map[string]any) *unstructured.Unstructured {
		list := make([]any, 0, len(conds))
		for _, c := range conds {
			list = append(list, c)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"spec":   map[string]any{"topology": map[string]any{"version": "v1.33.1"}},
			"status": map[string]any{"conditions": list},
		}}
	}
	upgrading := map[string]any{"type": "TopologyReconciled", "status": "False", "reason": "ClusterUpgrading"}
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"upgrading", cluster(map[string]any{"type": "Ready", "status": "True"}, upgrading), "v1.33.1"},
		{"reconciled", cluster(map[string]any{"type": "TopologyReconciled", "status": "True"}), ""},
		{"held by another reason", cluster(map[string]any{"type": "TopologyReconciled", "status": "False", "reason": "TopologyReconcileFailed"}), ""},
		{"no status yet", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"topology": map[string]any{"version": "v1.33.1"}}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, upgradeTarget(tc.u)) })
	}
}

// TestClusterChanged: a Cluster's own updates wake its workflow for its spec and metadata, not
// for a status write; beside Cluster API, whose v1beta1 view of a Cluster carries its v1beta2
// status in the conversion-data annotation, not for that annotation either.
func TestClusterChanged(t *testing.T) {
	cluster := func(edit func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "c1", "namespace": "ns", "generation": int64(2),
				"annotations": map[string]any{conversion.DataAnnotation: `{"status":{"conditions":[]}}`}},
			"spec":   map[string]any{"topology": map[string]any{"version": "v1.33.1"}},
			"status": map[string]any{"phase": "Provisioning"},
		}}
		if edit != nil {
			edit(u)
		}
		return u
	}
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		cur  *unstructured.Unstructured
		want bool
	}{
		{"a status write", cluster(func(u *unstructured.Unstructured) { u.Object["status"] = map[string]any{"phase": "Provisioned"} }), false},
		{"Cluster API's conversion data", cluster(func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{conversion.DataAnnotation: `{"status":{"conditions":[{"type":"Available"}]}}`})
		}), false},
		{"the spec", cluster(func(u *unstructured.Unstructured) { u.SetGeneration(3) }), true},
		{"an annotation", cluster(func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{conversion.DataAnnotation: `{"status":{"conditions":[]}}`, "cluster.x-k8s.io/paused": ""})
		}), true},
		{"a label", cluster(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"env": "prod"}) }), true},
		{"a finalizer", cluster(func(u *unstructured.Unstructured) { u.SetFinalizers([]string{"cluster.cluster.x-k8s.io"}) }), true},
		{"deleting", cluster(func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(&now) }), true},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, clusterChanged(cluster(nil), tc.cur)) })
	}
}
