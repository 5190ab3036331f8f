package watcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
