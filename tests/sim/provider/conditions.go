package provider

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// What the simulated controllers report beyond the counters, as Cluster API v1.14's controllers
// report it on a v1beta1 object: the deprecated v1beta1 conditions in status.conditions, and the
// v1beta2 conditions and counters under status.v1beta2 (where a v1beta2 client reads them as
// status.conditions and status.*Replicas). The Cluster's v1beta2 status is computed from them
// (topoflow's Cluster controller role, model/status): WorkersAvailable from the MachineDeployments'
// Available conditions, ControlPlaneAvailable from the control plane's, RollingOut and
// ScalingUp/Down from both.

// cond is one condition the simulator reports; a v1beta1 condition takes a severity when False.
type cond struct {
	Type, Status, Reason, Message, Severity string
}

func trueCond(t, reason string) cond { return cond{Type: t, Status: "True", Reason: reason} }

func falseCond(t, reason, message string) cond {
	return cond{Type: t, Status: "False", Reason: reason, Message: message}
}

// v1beta1Conditions is status.conditions in Cluster API's v1beta1 shape (severity on a False
// condition, no reason on a True one), each keeping the object's current transition time while
// its status stays.
func v1beta1Conditions(u *unstructured.Unstructured, conds ...cond) []any {
	current, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make([]any, 0, len(conds))
	for _, c := range conds {
		m := map[string]any{"type": c.Type, "status": c.Status, "lastTransitionTime": transitionTime(current, c)}
		if c.Status != "True" {
			if c.Severity != "" {
				m["severity"] = c.Severity
			}
			if c.Reason != "" {
				m["reason"] = c.Reason
			}
			if c.Message != "" {
				m["message"] = c.Message
			}
		}
		out = append(out, m)
	}
	return out
}

// v1beta2Status is status.v1beta2 of a v1beta1 object: conditions (metav1.Condition: reason and
// message always there, observedGeneration the object's generation), and the counters given.
func v1beta2Status(u *unstructured.Unstructured, counters map[string]any, conds ...cond) map[string]any {
	current, _, _ := unstructured.NestedSlice(u.Object, "status", "v1beta2", "conditions")
	list := make([]any, 0, len(conds))
	for _, c := range conds {
		list = append(list, map[string]any{"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message,
			"observedGeneration": u.GetGeneration(), "lastTransitionTime": transitionTime(current, c)})
	}
	out := map[string]any{"conditions": list}
	for k, v := range counters {
		out[k] = v
	}
	return out
}

// transitionTime is the current condition's lastTransitionTime when its status is c's, else now
// (to the second, as Cluster API's conditions.Set).
func transitionTime(current []any, c cond) string {
	for _, item := range current {
		m, _ := item.(map[string]any)
		if m["type"] == c.Type && m["status"] == c.Status {
			if t, ok := m["lastTransitionTime"].(string); ok && t != "" {
				return t
			}
		}
	}
	return time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
}

// versionsOf is status.versions: every replica at version (nil, the field removed, while no
// version is known).
func versionsOf(version string, replicas int64) any {
	if version == "" {
		return nil
	}
	return []any{map[string]any{"version": version, "replicas": replicas}}
}

// poolConditions are a MachineDeployment's v1beta2 conditions as Cluster API v1.14's
// MachineDeployment controller sets them (machinedeployment_status.go): Available once the
// available replicas reach spec.replicas (maxUnavailable 0, the default), RollingOut while
// replicas are not up to date, ScalingUp and ScalingDown while the replicas differ from spec.
func poolConditions(desired, replicas, available, notUpToDate int64) []cond {
	conds := []cond{trueCond(capiv1beta2.MachineDeploymentAvailableCondition, capiv1beta2.MachineDeploymentAvailableReason)}
	if available < desired {
		conds[0] = falseCond(capiv1beta2.MachineDeploymentAvailableCondition, capiv1beta2.MachineDeploymentNotAvailableReason,
			fmt.Sprintf("%d available replicas, at least %d required", available, desired))
	}
	if notUpToDate > 0 {
		conds = append(conds, cond{Type: capiv1beta2.MachineDeploymentRollingOutCondition, Status: "True",
			Reason: capiv1beta2.MachineDeploymentRollingOutReason, Message: fmt.Sprintf("Rolling out %d not up-to-date replicas", notUpToDate)})
	} else {
		conds = append(conds, falseCond(capiv1beta2.MachineDeploymentRollingOutCondition, capiv1beta2.MachineDeploymentNotRollingOutReason, ""))
	}
	return append(conds, scaling(desired, replicas)...)
}

// scaling is the ScalingUp and ScalingDown conditions of an object with replicas of desired.
func scaling(desired, replicas int64) []cond {
	up := falseCond(capiv1beta2.ScalingUpCondition, capiv1beta2.NotScalingUpReason, "")
	if replicas < desired {
		up = cond{Type: capiv1beta2.ScalingUpCondition, Status: "True", Reason: capiv1beta2.ScalingUpReason,
			Message: fmt.Sprintf("Scaling up from %d to %d replicas", replicas, desired)}
	}
	down := falseCond(capiv1beta2.ScalingDownCondition, capiv1beta2.NotScalingDownReason, "")
	if replicas > desired {
		down = cond{Type: capiv1beta2.ScalingDownCondition, Status: "True", Reason: capiv1beta2.ScalingDownReason,
			Message: fmt.Sprintf("Scaling down from %d to %d replicas", replicas, desired)}
	}
	return []cond{up, down}
}
