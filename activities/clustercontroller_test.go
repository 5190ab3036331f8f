package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/model/api/conversion"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/status"
)

// TestV1Beta2Field: the v1beta2 status the Cluster controller role applies holds its conditions
// (message always sent: an empty one clears the last), its counters (a counter it does not know
// is left out, so the apply removes it) and the topology role's upgrade plans.
func TestV1Beta2Field(t *testing.T) {
	three := int32(3)
	ltt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	v := &hubv1.ClusterStatus{
		Conditions:   []metav1.Condition{{Type: "Available", Status: "True", Reason: "Available", ObservedGeneration: 2, LastTransitionTime: ltt}},
		ControlPlane: &hubv1.ClusterReplicasStatus{DesiredReplicas: &three},
		Phase:        "Provisioned", // not the v1beta2 part's: left out
	}
	got, err := v1beta2Field(v, &status.UpgradePlan{Workers: []string{"v1.33.0"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "Available", "message": "",
			"observedGeneration": int64(2), "lastTransitionTime": "2026-01-01T00:00:00Z"}},
		"controlPlane": map[string]any{"desiredReplicas": int64(3)},
		"workers":      map[string]any{"upgradePlan": []any{map[string]any{"version": "v1.33.0"}}},
	}, got)
	assert.Nil(t, v.Workers, "input not modified")

	// Nothing known of either part (a Cluster being deleted): neither is sent, not even as {}.
	got, err = v1beta2Field(&hubv1.ClusterStatus{}, &status.UpgradePlan{})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, got)
}

// TestRoleStatus: the Cluster controller role's status is written on the hub as Cluster API's
// conversion of its v1beta1 form would store it (core/v1beta1 Convert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus):
// the v1beta1 conditions under status.deprecated.v1beta1, readiness as status.initialization, a
// step not taken left out.
func TestRoleStatus(t *testing.T) {
	ltt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := roleFields{phase: "Provisioning", generation: 4,
		initialization: hubv1.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(true), ControlPlaneInitialized: trueOrNil(false)},
		v1beta1:        hubv1.V1Beta1Conditions{{Type: "Ready", Status: "False", Severity: "Info", Reason: "WaitingForControlPlane", LastTransitionTime: ltt}}}
	got, err := f.status(&hubv1.ClusterStatus{}, &status.UpgradePlan{ControlPlane: []string{"v1.33.0"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"phase":              "Provisioning",
		"observedGeneration": int64(4),
		"initialization":     map[string]any{"infrastructureProvisioned": true},
		"deprecated": map[string]any{"v1beta1": map[string]any{"conditions": []any{map[string]any{
			"type": "Ready", "status": "False", "severity": "Info", "reason": "WaitingForControlPlane", "lastTransitionTime": "2026-01-01T00:00:00Z"}}}},
		"controlPlane": map[string]any{"upgradePlan": []any{map[string]any{"version": "v1.33.0"}}},
	}, got)

	st := &hubv1.ClusterStatus{Phase: "Provisioning", ObservedGeneration: 4,
		Initialization: hubv1.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(true)},
		Deprecated:     &hubv1.ClusterDeprecatedStatus{V1Beta1: &hubv1.ClusterV1Beta1DeprecatedStatus{Conditions: f.v1beta1}}}
	assert.True(t, f.same(st), "the status holds it")
	st.Initialization.ControlPlaneInitialized = trueOrNil(true)
	assert.False(t, f.same(st), "a step the status holds and the role does not")
}

// TestRoleStatusAsConverted: the hub status the role writes is what Cluster API's conversion makes
// of the v1beta1 status it wrote before the hub (phase, readiness, v1beta1 conditions and
// status.v1beta2), so the same fields are sent, and owned, on a server storing v1beta2.
func TestRoleStatusAsConverted(t *testing.T) {
	ltt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, ready := range []bool{true, false} {
		f := roleFields{phase: "Provisioned", generation: 3,
			initialization: hubv1.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(ready), ControlPlaneInitialized: trueOrNil(true)},
			v1beta1:        hubv1.V1Beta1Conditions{{Type: "Ready", Status: "True", LastTransitionTime: ltt}}}
		v2 := &hubv1.ClusterStatus{Conditions: []metav1.Condition{{Type: "Available", Status: "True", Reason: "Available", ObservedGeneration: 3, LastTransitionTime: ltt}}}
		got, err := f.status(v2, &status.UpgradePlan{})
		require.NoError(t, err)

		v1beta1 := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": map[string]any{"name": "c", "namespace": "ns"},
			"status": map[string]any{"phase": "Provisioned", "infrastructureReady": ready, "controlPlaneReady": true, "observedGeneration": int64(3),
				"conditions": []any{map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
				"v1beta2": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "Available", "message": "",
					"observedGeneration": int64(3), "lastTransitionTime": "2026-01-01T00:00:00Z"}}}}}}
		converted, _, err := conversion.ToV1Beta2(v1beta1)
		require.NoError(t, err)
		assert.Equal(t, converted.Object["status"], got, "infrastructure ready: %v", ready)
	}
}

// TestRoleStatusRoundTrip: the status the role writes to a server that stores v1beta1 (converted
// there, and read back to the hub) is seen as already written: the next pass writes nothing.
func TestRoleStatusRoundTrip(t *testing.T) {
	ltt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	three := int32(3)
	for _, ready := range []bool{true, false} {
		f := roleFields{phase: "Provisioning", generation: 2,
			initialization: hubv1.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(ready), ControlPlaneInitialized: trueOrNil(false)},
			v1beta1:        hubv1.V1Beta1Conditions{{Type: "Ready", Status: "False", Severity: "Info", Reason: "WaitingForControlPlane", LastTransitionTime: ltt}}}
		v2 := &hubv1.ClusterStatus{
			Conditions:   []metav1.Condition{{Type: "Available", Status: "False", Reason: "NotAvailable", ObservedGeneration: 2, LastTransitionTime: ltt}},
			ControlPlane: &hubv1.ClusterReplicasStatus{DesiredReplicas: &three},
		}
		st, err := f.status(v2, &status.UpgradePlan{})
		require.NoError(t, err)
		written := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": map[string]any{"name": "c", "namespace": "ns"}, "status": st}}
		stored, err := conversion.ToV1Beta1(written, func(string, string) (string, error) { return "v1beta1", nil })
		require.NoError(t, err)
		read, _, err := conversion.ToV1Beta2(stored)
		require.NoError(t, err)
		var c hubv1.Cluster
		require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(read.Object, &c))
		assert.Equal(t, f.initialization, c.Status.Initialization)
		assert.True(t, f.same(&c.Status), "ready %v: %+v", ready, c.Status)
		assert.True(t, status.SameV1Beta2(&c.Status, v2), "ready %v", ready)
	}
}
