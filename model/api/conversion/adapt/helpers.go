package adapt

import (
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// ptrTo is a pointer to a copy of v: v1.Convert_bool_To_Pointer_bool and
// v1.Convert_int32_To_Pointer_int32, always a pointer.
func ptrTo[T any](v T) *T { return &v }

// trueOrNil is v1beta2.Convert_bool_To_Pointer_bool without conversion data: true stays true,
// false (which v1beta1 cannot tell from unset) is unset.
func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	return ptrTo(true)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// toSeconds is v1beta2.ConvertToSeconds: whole seconds, truncated, capped at MaxInt32.
func toSeconds(d *metav1.Duration) *int32 {
	if d == nil {
		return nil
	}
	s := math.Trunc(d.Seconds())
	if s > math.MaxInt32 {
		s = math.MaxInt32
	}
	out := int32(s)
	return &out
}

// conditionsToHub is Convert_v1beta1_Conditions_To_v1beta2_Deprecated_V1Beta1_Conditions.
func conditionsToHub(in v1beta1.Conditions) v1beta2.V1Beta1Conditions {
	out := make(v1beta2.V1Beta1Conditions, len(in))
	for i, c := range in {
		out[i] = v1beta2.V1Beta1Condition{Type: string(c.Type), Status: c.Status, Severity: string(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
	return out
}

func objectMetaToHub(in v1beta1.ObjectMeta) v1beta2.ObjectMeta {
	return v1beta2.ObjectMeta{Labels: in.Labels, Annotations: in.Annotations}
}

func readinessGatesToHub(in []v1beta1.MachineReadinessGate) []v1beta2.MachineReadinessGate {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.MachineReadinessGate, len(in))
	for i, g := range in {
		out[i] = v1beta2.MachineReadinessGate{ConditionType: g.ConditionType, Polarity: v1beta2.ConditionPolarity(g.Polarity)}
	}
	return out
}

func availabilityGatesToHub(in []v1beta1.ClusterAvailabilityGate) []v1beta2.ClusterAvailabilityGate {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.ClusterAvailabilityGate, len(in))
	for i, g := range in {
		out[i] = v1beta2.ClusterAvailabilityGate{ConditionType: g.ConditionType, Polarity: v1beta2.ConditionPolarity(g.Polarity)}
	}
	return out
}

func taintsToHub(in []v1beta1.MachineTaint) []v1beta2.MachineTaint {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.MachineTaint, len(in))
	for i, t := range in {
		out[i] = v1beta2.MachineTaint{Key: t.Key, Value: t.Value, Effect: t.Effect, Propagation: v1beta2.MachineTaintPropagation(t.Propagation)}
	}
	return out
}

// deletionToHub is the three node timeouts as seconds.
func deletionToHub(drain, detach, deletion *metav1.Duration) v1beta2.MachineDeletionSpec {
	return v1beta2.MachineDeletionSpec{NodeDrainTimeoutSeconds: toSeconds(drain),
		NodeVolumeDetachTimeoutSeconds: toSeconds(detach), NodeDeletionTimeoutSeconds: toSeconds(deletion)}
}

// healthCheckToHub is what every v1beta1 machineHealthCheck (of a class or a topology) becomes in
// v1beta2: its checks, its remediation trigger and its remediation template.
func healthCheckToHub(in *v1beta1.MachineHealthCheckClass) (v1beta2.HealthCheckChecks, v1beta2.RemediationTriggerIf, v1beta2.MachineHealthCheckRemediationTemplateReference) {
	var checks v1beta2.HealthCheckChecks
	var trigger v1beta2.RemediationTriggerIf
	var template v1beta2.MachineHealthCheckRemediationTemplateReference
	if in == nil {
		return checks, trigger, template
	}
	for _, c := range in.UnhealthyConditions {
		checks.UnhealthyNodeConditions = append(checks.UnhealthyNodeConditions,
			v1beta2.UnhealthyNodeCondition{Type: c.Type, Status: c.Status, TimeoutSeconds: toSeconds(&c.Timeout)})
	}
	for _, c := range in.UnhealthyMachineConditions {
		checks.UnhealthyMachineConditions = append(checks.UnhealthyMachineConditions,
			v1beta2.UnhealthyMachineCondition{Type: c.Type, Status: c.Status, TimeoutSeconds: toSeconds(&c.Timeout)})
	}
	checks.NodeStartupTimeoutSeconds = toSeconds(in.NodeStartupTimeout)
	trigger.UnhealthyLessThanOrEqualTo = in.MaxUnhealthy
	trigger.UnhealthyInRange = deref(in.UnhealthyRange)
	if r := in.RemediationTemplate; r != nil {
		template = v1beta2.MachineHealthCheckRemediationTemplateReference{Kind: r.Kind, Name: r.Name, APIVersion: r.APIVersion}
	}
	return checks, trigger, template
}

// statusVersionsToHub and statusUpgradePlanToHub are Cluster API's helpers of the same names.
func statusVersionsToHub(in []v1beta1.StatusVersion) []v1beta2.StatusVersion {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.StatusVersion, len(in))
	for i, v := range in {
		out[i] = v1beta2.StatusVersion{Version: v.Version, Replicas: v.Replicas}
	}
	return out
}

func statusUpgradePlanToHub(in []v1beta1.StatusUpgradePlanVersion) []v1beta2.StatusUpgradePlanVersion {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.StatusUpgradePlanVersion, len(in))
	for i, v := range in {
		out[i] = v1beta2.StatusUpgradePlanVersion{Version: v.Version}
	}
	return out
}
