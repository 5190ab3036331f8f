package watcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/rollout"
)

// TestUpgradeTarget: events go straight to an upgrade's workflow only while the Cluster says
// ClusterUpgrading, and to the one named by its topology version. The v1beta1 condition (v1beta2's
// status.deprecated.v1beta1.conditions) is read first; the v1beta2 one (status.conditions)
// where there is none.
func TestUpgradeTarget(t *testing.T) {
	list := func(conds []map[string]any) []any {
		out := make([]any, 0, len(conds))
		for _, c := range conds {
			out = append(out, c)
		}
		return out
	}
	cluster := func(v1beta1, v1beta2 []map[string]any) *unstructured.Unstructured {
		st := map[string]any{}
		if v1beta1 != nil {
			st["deprecated"] = map[string]any{"v1beta1": map[string]any{"conditions": list(v1beta1)}}
		}
		if v1beta2 != nil {
			st["conditions"] = list(v1beta2)
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"spec":   map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": "qs"}, "version": "v1.33.1"}},
			"status": st,
		}}
	}
	conds := func(c ...map[string]any) []map[string]any { return c }
	upgrading := map[string]any{"type": "TopologyReconciled", "status": "False", "reason": "ClusterUpgrading"}
	reconciled := map[string]any{"type": "TopologyReconciled", "status": "True"}
	for _, tc := range []struct {
		name string
		u    *unstructured.Unstructured
		want string
	}{
		{"upgrading", cluster(conds(map[string]any{"type": "Ready", "status": "True"}, upgrading), nil), "v1.33.1"},
		{"reconciled", cluster(conds(reconciled), nil), ""},
		{"held by another reason", cluster(conds(map[string]any{"type": "TopologyReconciled", "status": "False", "reason": "TopologyReconcileFailed"}), nil), ""},
		{"both say upgrading", cluster(conds(upgrading), conds(upgrading)), "v1.33.1"},
		{"the v1beta1 condition first", cluster(conds(reconciled), conds(upgrading)), ""},
		{"only v1beta2 conditions", cluster(nil, conds(map[string]any{"type": "Available", "status": "False"}, upgrading)), "v1.33.1"},
		{"only v1beta2 conditions, reconciled", cluster(nil, conds(map[string]any{"type": "TopologyReconciled", "status": "True", "reason": "ReconcileSucceeded"})), ""},
		{"no status yet", cluster(nil, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, upgradeTarget(tc.u)) })
	}
}

// TestClusterChanged: a Cluster's own updates wake its workflow for its spec and metadata, not
// for a status write; nor for Cluster API's conversion-data annotation, which a converted Cluster
// may carry and which follows its status (topology.SameAnnotations).
func TestClusterChanged(t *testing.T) {
	cluster := func(edit func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "c1", "namespace": "ns", "generation": int64(2),
				"annotations": map[string]any{conversion.DataAnnotation: `{"status":{"conditions":[]}}`}},
			"spec":   map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": "qs"}, "version": "v1.33.1"}},
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

// TestFollowClustersReadsV1Beta2: a claimed Cluster of the v1beta2 watch wakes its Rollout when an
// update first reports its topology reconciled for its generation, read from the v1beta2
// condition (status.conditions, with its own observedGeneration) or, without one, from the
// v1beta1 condition (status.deprecated.v1beta1.conditions) with status.observedGeneration.
func TestFollowClustersReadsV1Beta2(t *testing.T) {
	const ltt = "2026-11-24T10:00:00Z"
	cluster := func(rv string, claimed bool, st map[string]any) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "c1", "namespace": "ns", "generation": int64(3), "resourceVersion": rv},
			"spec": map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": "qs"}, "version": "v1.33.1"},
				"controlPlaneRef": map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "c1-x"}},
			"status": st,
		}}
		if claimed {
			u.SetAnnotations(map[string]string{rollout.ClaimAnnotation: "ns/r1"})
		}
		return u
	}
	v1beta2 := func(status string, observed int64) map[string]any {
		return map[string]any{"conditions": []any{map[string]any{"type": "TopologyReconciled", "status": status,
			"reason": "ReconcileSucceeded", "observedGeneration": observed, "lastTransitionTime": ltt}}}
	}
	v1beta1 := func(status string, observed int64) map[string]any {
		return map[string]any{"observedGeneration": observed, "deprecated": map[string]any{"v1beta1": map[string]any{
			"conditions": []any{map[string]any{"type": "TopologyReconciled", "status": status, "lastTransitionTime": ltt}}}}}
	}
	for _, tc := range []struct {
		name     string
		old, cur *unstructured.Unstructured
		want     bool
	}{
		{"v1beta2 condition reconciled for the generation", cluster("1", true, v1beta2("True", 2)), cluster("2", true, v1beta2("True", 3)), true},
		{"v1beta2 condition for an older generation", cluster("1", true, v1beta2("True", 2)), cluster("2", true, v1beta2("True", 2)), false},
		{"v1beta2 condition already reconciled", cluster("1", true, v1beta2("True", 3)), cluster("2", true, v1beta2("True", 3)), false},
		{"v1beta1 condition reconciled for the generation", cluster("1", true, v1beta1("False", 3)), cluster("2", true, v1beta1("True", 3)), true},
		{"v1beta1 condition not reconciled", cluster("1", true, v1beta1("False", 2)), cluster("2", true, v1beta1("False", 3)), false},
		{"not claimed", cluster("1", false, v1beta2("True", 2)), cluster("2", false, v1beta2("True", 3)), false},
		{"a resync", cluster("2", true, v1beta2("True", 2)), cluster("2", true, v1beta2("True", 3)), false},
		{"added reconciled", nil, cluster("2", true, v1beta2("True", 3)), true},
		{"a status field the hub types do not know", cluster("1", true, v1beta2("True", 2)), cluster("2", true, func() map[string]any {
			st := v1beta2("True", 3)
			st["addedByANewerClusterAPI"] = map[string]any{"x": int64(1)}
			return st
		}()), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[rolloutSignal]())
			defer queue.ShutDown()
			w := &Watcher{rollouts: queue}
			var old any
			if tc.old != nil {
				old = tc.old
			}
			w.followClusters(old, tc.cur)
			if !tc.want {
				assert.Zero(t, queue.Len())
				return
			}
			require.Equal(t, 1, queue.Len())
			item, _ := queue.Get()
			assert.Equal(t, rolloutSignal{Key: "ns/r1", Wake: true}, item)
		})
	}
}
