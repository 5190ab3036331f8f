package provider

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestPoolConditions: a MachineDeployment's v1beta2 conditions as Cluster API v1.14 sets them.
func TestPoolConditions(t *testing.T) {
	byType := func(conds []cond) map[string]cond {
		out := map[string]cond{}
		for _, c := range conds {
			out[c.Type] = c
		}
		return out
	}
	settled := byType(poolConditions(2, 2, 2, 0))
	assert.Equal(t, cond{Type: "Available", Status: "True", Reason: "Available"}, settled["Available"])
	assert.Equal(t, cond{Type: "RollingOut", Status: "False", Reason: "NotRollingOut"}, settled["RollingOut"])
	assert.Equal(t, cond{Type: "ScalingUp", Status: "False", Reason: "NotScalingUp"}, settled["ScalingUp"])
	assert.Equal(t, cond{Type: "ScalingDown", Status: "False", Reason: "NotScalingDown"}, settled["ScalingDown"])

	rolling := byType(poolConditions(3, 3, 1, 3))
	assert.Equal(t, cond{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "1 available replicas, at least 3 required"}, rolling["Available"])
	assert.Equal(t, cond{Type: "RollingOut", Status: "True", Reason: "RollingOut", Message: "Rolling out 3 not up-to-date replicas"}, rolling["RollingOut"])
	assert.Equal(t, "Scaling down from 3 to 1 replicas", byType(scaling(1, 3))["ScalingDown"].Message)
}

// TestConditionsKeepTransitionTimes: a condition whose status stays keeps its transition time,
// so a status written again is the same; one that changes gets a new one.
func TestConditionsKeepTransitionTimes(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"generation": int64(4)}, "status": map[string]any{
		"conditions": []any{map[string]any{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}},
		"v1beta2": map[string]any{"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "Available", "lastTransitionTime": "2026-01-02T03:04:05Z"},
			map[string]any{"type": "RollingOut", "status": "True", "reason": "RollingOut", "lastTransitionTime": "2026-01-02T03:04:05Z"}}},
	}}}
	v1 := v1beta1Conditions(u, trueCond("Available", ""), cond{Type: "Ready", Status: "False", Reason: "Waiting", Severity: "Info"})
	require.Len(t, v1, 2)
	assert.Equal(t, map[string]any{"type": "Available", "status": "True", "lastTransitionTime": "2026-01-02T03:04:05Z"}, v1[0],
		"a True v1beta1 condition has no reason")
	ready := v1[1].(map[string]any)
	assert.Equal(t, "Info", ready["severity"])
	assert.NotEqual(t, "2026-01-02T03:04:05Z", ready["lastTransitionTime"])

	v2 := v1beta2Status(u, map[string]any{"readyReplicas": int64(2)}, poolConditions(2, 2, 2, 0)...)
	assert.Equal(t, int64(2), v2["readyReplicas"])
	conds := v2["conditions"].([]any)
	available, rollingOut := conds[0].(map[string]any), conds[1].(map[string]any)
	assert.Equal(t, "2026-01-02T03:04:05Z", available["lastTransitionTime"], "Available stayed True")
	assert.Equal(t, int64(4), available["observedGeneration"])
	assert.Equal(t, "", available["message"], "a metav1.Condition always carries a message")
	assert.NotEqual(t, "2026-01-02T03:04:05Z", rollingOut["lastTransitionTime"], "RollingOut went False")
}

// TestControlPlaneConditions: a simulated control plane reports what a v1beta1 KubeadmControlPlane
// does: waiting for kubeadm init, then available, rolling out while replicas are not up to date.
func TestControlPlaneConditions(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	reason := func(st map[string]any, t string) string {
		conds, _, _ := unstructured.NestedSlice(st, "v1beta2", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == t {
				return m["status"].(string) + "/" + m["reason"].(string)
			}
		}
		return ""
	}

	st := map[string]any{}
	controlPlaneConditions(u, st, false, 3, 0, "")
	assert.Equal(t, "False/NotAvailable", reason(st, "Available"))
	assert.Equal(t, "False/NotInitialized", reason(st, "Initialized"))
	assert.Equal(t, "True/ScalingUp", reason(st, "ScalingUp"))
	assert.Nil(t, st["versions"])
	assert.Equal(t, "WaitingForKubeadmInit", st["conditions"].([]any)[1].(map[string]any)["reason"])

	st = map[string]any{}
	controlPlaneConditions(u, st, true, 3, 0, "v1.31.2")
	assert.Equal(t, "True/Available", reason(st, "Available"))
	assert.Equal(t, "True/RollingOut", reason(st, "RollingOut"))
	assert.Equal(t, "False/NotScalingUp", reason(st, "ScalingUp"))
	assert.Equal(t, []any{map[string]any{"version": "v1.31.2", "replicas": int64(3)}}, st["versions"])
	upToDate, _, _ := unstructured.NestedInt64(st, "v1beta2", "upToDateReplicas")
	assert.Zero(t, upToDate)

	st = map[string]any{}
	controlPlaneConditions(u, st, true, 3, 3, "v1.32.0")
	assert.Equal(t, "False/NotRollingOut", reason(st, "RollingOut"))
}
