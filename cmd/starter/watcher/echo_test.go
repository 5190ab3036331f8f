package watcher

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/rollout"
)

var t0 = metav1.NewTime(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))

func entry(manager string, op metav1.ManagedFieldsOperationType, sub string, at metav1.Time, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Subresource: sub, APIVersion: "v1", Time: &at,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func object(rv string, deleting bool, mfs ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "SimCluster"}}
	u.SetName("c1-abcde")
	u.SetResourceVersion(rv)
	if deleting {
		u.SetDeletionTimestamp(&t0)
	}
	u.SetManagedFields(mfs)
	return u
}

// TestEcho: only an update whose managedFields changed for topoflow's managers alone is an echo.
func TestEcho(t *testing.T) {
	ours := map[string]bool{"capi-topology": true, "topoflow": true}
	t1 := metav1.NewTime(t0.Add(time.Second))
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	topo := entry("capi-topology", apply, "", t0, `{"f:spec":{"f:region":{}}}`)
	sim := entry("simprovider", update, "status", t0, `{"f:status":{"f:ready":{}}}`)
	tests := []struct {
		name     string
		old, cur *unstructured.Unstructured
		want     bool
	}{
		{"topoflow re-applied with a new field", object("1", false, topo, sim),
			object("2", false, entry("capi-topology", apply, "", t1, `{"f:spec":{"f:region":{},"f:zone":{}}}`), sim), true},
		{"topoflow added its owner reference (a new manager entry)", object("1", false, topo, sim),
			object("2", false, topo, sim, entry("topoflow", apply, "", t1, `{"f:metadata":{"f:ownerReferences":{}}}`)), true},
		{"a provider wrote status", object("1", false, topo, sim),
			object("2", false, topo, entry("simprovider", update, "status", t1, `{"f:status":{"f:ready":{},"f:endpoint":{}}}`)), false},
		{"a provider changed only values it owned (no entry changed)", object("1", false, topo, sim), object("2", false, topo, sim), false},
		{"a provider took a field from topoflow (both entries changed)", object("1", false, topo, sim),
			object("2", false, entry("capi-topology", apply, "", t0, `{}`), entry("simprovider", update, "", t1, `{"f:spec":{"f:region":{}}}`), sim), false},
		{"another manager's entry went away", object("1", false, topo, sim), object("2", false, entry("capi-topology", apply, "", t1, `{}`)), false},
		{"delete requested", object("1", false, topo, sim), object("2", true, entry("capi-topology", apply, "", t1, `{}`), sim), false},
		{"same resourceVersion (a resync)", object("1", false, topo, sim), object("1", false, topo, sim), false},
		{"no managedFields read", object("1", false), object("2", false), false},
		{"no old object (an add)", nil, object("2", false, topo), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := echo(tt.old, tt.cur, ours); got != tt.want {
				t.Errorf("echo = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRolloutWriteIsNoEcho: a Rollout writing a Cluster's version again (a second Rollout over
// the same Clusters: only the topoflow-rollout entry changes) is a spec change the Cluster's
// workflow must see, whereas a write by the workflow's own status manager is an echo.
func TestRolloutWriteIsNoEcho(t *testing.T) {
	ours := ourManagers()
	t1 := metav1.NewTime(t0.Add(time.Second))
	apply := metav1.ManagedFieldsOperationApply
	version := `{"f:spec":{"f:topology":{"f:version":{}}}}`
	old := object("1", false, entry(rollout.FieldManager, apply, "", t0, version))
	rewritten := object("2", false, entry(rollout.FieldManager, apply, "", t1, version))
	if echo(old, rewritten, ours) {
		t.Error("a Rollout's write was taken for an echo: the Cluster's workflow would not be signalled")
	}
	status := object("2", false, entry(rollout.FieldManager, apply, "", t0, version),
		entry(activities.StatusFieldManager, metav1.ManagedFieldsOperationUpdate, "status", t1, `{"f:status":{}}`))
	if !echo(old, status, ours) {
		t.Error("the workflow's own status write is an echo")
	}
}

// TestOwnCreate: an added object only topoflow's managers wrote is its own create.
func TestOwnCreate(t *testing.T) {
	ours := map[string]bool{"capi-topology": true, "topoflow": true}
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	topo := entry("capi-topology", apply, "", t0, `{"f:spec":{"f:region":{}}}`)
	owner := entry("topoflow", apply, "", t0, `{"f:metadata":{"f:ownerReferences":{}}}`)
	sim := entry("simprovider", update, "status", t0, `{"f:status":{"f:ready":{}}}`)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"created by the topology apply", object("1", false, topo), true},
		{"and owned by the Cluster", object("2", false, topo, owner), true},
		{"a provider wrote it since (seen first at a starter's start)", object("3", false, topo, sim), false},
		{"made by someone else", object("1", false, sim), false},
		{"no managedFields", object("1", false), false},
		{"terminating", object("4", true, topo), false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownCreate(tt.obj, ours); got != tt.want {
				t.Errorf("ownCreate = %v, want %v", got, tt.want)
			}
		})
	}
}
