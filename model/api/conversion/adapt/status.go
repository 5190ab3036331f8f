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

// ClusterV1Beta2StatusToHub is a v1beta1 Cluster's status.v1beta2 as the hub's status holds it
// (status.conditions, status.controlPlane, status.workers; the rest unset), as ClusterToHub
// converts it. Nil is the zero status.
func ClusterV1Beta2StatusToHub(in *v1beta1.ClusterV1Beta2Status) *v1beta2.ClusterStatus {
	out := &v1beta2.ClusterStatus{}
	if in == nil {
		return out
	}
	out.Conditions = in.Conditions
	if cp := in.ControlPlane; cp != nil {
		out.ControlPlane = &v1beta2.ClusterReplicasStatus{DesiredReplicas: cp.DesiredReplicas, Replicas: cp.Replicas,
			UpToDateReplicas: cp.UpToDateReplicas, ReadyReplicas: cp.ReadyReplicas, AvailableReplicas: cp.AvailableReplicas,
			Versions: statusVersionsToHub(cp.Versions), UpgradePlan: statusUpgradePlanToHub(cp.UpgradePlan)}
	}
	if w := in.Workers; w != nil {
		out.Workers = &v1beta2.ClusterReplicasStatus{DesiredReplicas: w.DesiredReplicas, Replicas: w.Replicas,
			UpToDateReplicas: w.UpToDateReplicas, ReadyReplicas: w.ReadyReplicas, AvailableReplicas: w.AvailableReplicas,
			Versions: statusVersionsToHub(w.Versions), UpgradePlan: statusUpgradePlanToHub(w.UpgradePlan)}
	}
	return out
}

// ClusterV1Beta2StatusFromHub is what a v1beta1 Cluster holds under status.v1beta2 of a hub
// status's conditions, controlPlane and workers (Cluster API's
// Convert_v1beta2_ClusterStatus_To_v1beta1_ClusterStatus for these fields); the hub's other status
// fields are not read. Nil is nil.
func ClusterV1Beta2StatusFromHub(in *v1beta2.ClusterStatus) *v1beta1.ClusterV1Beta2Status {
	if in == nil {
		return nil
	}
	out := &v1beta1.ClusterV1Beta2Status{Conditions: in.Conditions}
	if cp := in.ControlPlane; cp != nil {
		out.ControlPlane = &v1beta1.ClusterControlPlaneStatus{DesiredReplicas: cp.DesiredReplicas, Replicas: cp.Replicas,
			UpToDateReplicas: cp.UpToDateReplicas, ReadyReplicas: cp.ReadyReplicas, AvailableReplicas: cp.AvailableReplicas,
			Versions: statusVersionsFromHub(cp.Versions), UpgradePlan: statusUpgradePlanFromHub(cp.UpgradePlan)}
	}
	if w := in.Workers; w != nil {
		out.Workers = &v1beta1.WorkersStatus{DesiredReplicas: w.DesiredReplicas, Replicas: w.Replicas,
			UpToDateReplicas: w.UpToDateReplicas, ReadyReplicas: w.ReadyReplicas, AvailableReplicas: w.AvailableReplicas,
			Versions: statusVersionsFromHub(w.Versions), UpgradePlan: statusUpgradePlanFromHub(w.UpgradePlan)}
	}
	return out
}

func statusVersionsFromHub(in []v1beta2.StatusVersion) []v1beta1.StatusVersion {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.StatusVersion, len(in))
	for i, v := range in {
		out[i] = v1beta1.StatusVersion{Version: v.Version, Replicas: v.Replicas}
	}
	return out
}

func statusUpgradePlanFromHub(in []v1beta2.StatusUpgradePlanVersion) []v1beta1.StatusUpgradePlanVersion {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.StatusUpgradePlanVersion, len(in))
	for i, v := range in {
		out[i] = v1beta1.StatusUpgradePlanVersion{Version: v.Version}
	}
	return out
}
