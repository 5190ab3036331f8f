package adapt

import (
	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// The v1beta1 conditions and the v1beta2 status of a v1beta1 Cluster, for the callers of
// model/status that still hold v1beta1 objects (the status activities, the runtime extension
// registry's ExtensionConfig, whose conditions are v1beta1 ones).

// ConditionsToHub is a v1beta1 conditions list as the hub keeps it
// (Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions); nil stays nil.
func ConditionsToHub(in v1beta1.Conditions) v1beta2.V1Beta1Conditions {
	if in == nil {
		return nil
	}
	return conditionsToHub(in)
}

// ConditionsFromHub is the inverse of ConditionsToHub; nil stays nil.
func ConditionsFromHub(in v1beta2.V1Beta1Conditions) v1beta1.Conditions {
	if in == nil {
		return nil
	}
	out := make(v1beta1.Conditions, len(in))
	for i, c := range in {
		out[i] = v1beta1.Condition{Type: v1beta1.ConditionType(c.Type), Status: c.Status, Severity: v1beta1.ConditionSeverity(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
	return out
}
