package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

func TestPhase(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		want string
	}{
		{"nothing yet", Facts{}, clusterv1.ClusterPhasePending},
		{"refs set, infrastructure provisioning", Facts{RefsSet: true}, clusterv1.ClusterPhaseProvisioning},
		{"infrastructure ready, no endpoint yet", Facts{RefsSet: true, InfrastructureReady: true}, clusterv1.ClusterPhaseProvisioning},
		{"ready with endpoint", Facts{RefsSet: true, InfrastructureReady: true, EndpointValid: true}, clusterv1.ClusterPhaseProvisioned},
		{"endpoint without ready infrastructure", Facts{RefsSet: true, EndpointValid: true}, clusterv1.ClusterPhaseProvisioning},
		{"failed", Facts{RefsSet: true, Failed: true}, clusterv1.ClusterPhaseFailed},
		{"deleting wins", Facts{Deleting: true, Failed: true, RefsSet: true}, clusterv1.ClusterPhaseDeleting},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Phase(tc.f)) })
	}
}

func TestMerge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(time.Hour)
	current := clusterv1.V1Beta1Conditions{
		{Type: "Ready", Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
		{Type: TopologyReconciled, Status: corev1.ConditionFalse, Reason: "x", LastTransitionTime: metav1.NewTime(t0)},
		{Type: InfrastructureReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)},
	}
	got := Merge(current, []Condition{
		True(TopologyReconciled),
		True(InfrastructureReady),
		False(ControlPlaneReady, "Waiting", SeverityInfo, "msg"),
	}, t1)

	require.Len(t, got, 4)
	assert.Equal(t, "Ready", got[0].Type, "Ready stays first")
	assert.Equal(t, []string{"Ready", ControlPlaneReady, InfrastructureReady, TopologyReconciled},
		[]string{got[0].Type, got[1].Type, got[2].Type, got[3].Type})
	tr := find(got, TopologyReconciled)
	assert.Equal(t, corev1.ConditionTrue, tr.Status)
	assert.Equal(t, t1, tr.LastTransitionTime.Time, "status changed: new transition time")
	assert.Empty(t, tr.Reason)
	assert.Equal(t, t0, find(got, InfrastructureReady).LastTransitionTime.Time, "unchanged status keeps its time")
	cp := find(got, ControlPlaneReady)
	assert.Equal(t, SeverityInfo, cp.Severity)
	assert.Equal(t, "msg", cp.Message)
	assert.Equal(t, t1, cp.LastTransitionTime.Time)
	assert.Equal(t, corev1.ConditionFalse, find(current, TopologyReconciled).Status, "input not modified")
}

// TestV1Beta2: TopologyReconciled as Cluster API v1.11+ writes it among the v1beta2 conditions
// (api/core/v1beta2 ClusterTopologyReconcileSucceededReason, ClusterTopologyReconciledFailedReason).
func TestV1Beta2(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 2, 1, 0, 0, 0, 500, time.UTC)
	tests := []struct {
		name       string
		in         Condition
		current    *metav1.Condition
		wantStatus metav1.ConditionStatus
		wantReason string
		wantTime   metav1.Time
	}{
		{"reconciled", True(TopologyReconciled), nil, metav1.ConditionTrue, "ReconcileSucceeded", metav1.NewTime(now.Truncate(time.Second))},
		{"failed", False(TopologyReconciled, ReasonReconcileFailed, "Error", "boom"), nil, metav1.ConditionFalse, "ReconcileFailed", metav1.NewTime(now.Truncate(time.Second))},
		{"same reason in both versions", False(TopologyReconciled, ReasonClusterUpgrading, "Info", ""), nil, metav1.ConditionFalse, "ClusterUpgrading", metav1.NewTime(now.Truncate(time.Second))},
		{"status unchanged keeps its time", False(TopologyReconciled, ReasonDeleting, "Info", ""),
			&metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: then}, metav1.ConditionFalse, "Deleting", then},
		{"status changed takes now", True(TopologyReconciled),
			&metav1.Condition{Status: metav1.ConditionFalse, LastTransitionTime: then}, metav1.ConditionTrue, "ReconcileSucceeded", metav1.NewTime(now.Truncate(time.Second))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := V1Beta2(tt.in, tt.current, 3, now)
			if got.Type != "TopologyReconciled" || got.Status != tt.wantStatus || got.Reason != tt.wantReason ||
				got.ObservedGeneration != 3 || !got.LastTransitionTime.Equal(&tt.wantTime) || got.Message != tt.in.Message {
				t.Errorf("V1Beta2 = %+v", got)
			}
		})
	}
}
