package activities

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/status"
)

// TestV1Beta2Field: the status.v1beta2 the Cluster controller role applies holds its conditions
// (message always sent: an empty one clears the last), its counters (a counter it does not know
// is left out, so the apply removes it) and the topology role's upgrade plans.
func TestV1Beta2Field(t *testing.T) {
	three := int32(3)
	ltt := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	v := &clusterv1.ClusterV1Beta2Status{
		Conditions:   []metav1.Condition{{Type: "Available", Status: "True", Reason: "Available", ObservedGeneration: 2, LastTransitionTime: ltt}},
		ControlPlane: &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: &three},
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
	got, err = v1beta2Field(&clusterv1.ClusterV1Beta2Status{}, &status.UpgradePlan{})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, got)
}
