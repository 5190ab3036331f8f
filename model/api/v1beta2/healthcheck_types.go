package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// HealthCheckChecks says when a Machine is unhealthy. Cluster API spells this shape out four
// times (control plane class and topology, MachineDeployment class and topology) plus once in the
// MachineHealthCheck it becomes; one type lets the model carry it from class to object unchanged.
type HealthCheckChecks struct {
	// NodeStartupTimeoutSeconds is how long a Machine may take to get a Node; nil means Cluster
	// API's default, 0 turns the check off.
	// +optional
	NodeStartupTimeoutSeconds *int32 `json:"nodeStartupTimeoutSeconds,omitempty"`
	// +optional
	// +listType=atomic
	UnhealthyNodeConditions []UnhealthyNodeCondition `json:"unhealthyNodeConditions,omitempty"`
	// +optional
	// +listType=atomic
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
}

// UnhealthyNodeCondition marks a Machine unhealthy once its Node has had the condition with this
// status for the timeout.
type UnhealthyNodeCondition struct {
	// +required
	Type corev1.NodeConditionType `json:"type,omitempty"`
	// +required
	Status corev1.ConditionStatus `json:"status,omitempty"`
	// +required
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// UnhealthyMachineCondition marks a Machine unhealthy once it has had its own condition with this
// status for the timeout.
type UnhealthyMachineCondition struct {
	// +required
	Type string `json:"type,omitempty"`
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status,omitempty"`
	// +required
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
}

// HealthCheckRemediation says whether and how unhealthy Machines are remediated: the shape of the
// control plane's health check (class and topology) and of a MachineHealthCheck.
type HealthCheckRemediation struct {
	// +optional
	TriggerIf RemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// MachineDeploymentHealthCheckRemediation is HealthCheckRemediation plus the MachineDeployment's
// cap on concurrent remediations (which v1beta1 kept under strategy.remediation).
type MachineDeploymentHealthCheckRemediation struct {
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
	// +optional
	TriggerIf RemediationTriggerIf `json:"triggerIf,omitempty,omitzero"`
	// +optional
	TemplateRef MachineHealthCheckRemediationTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// RemediationTriggerIf limits remediation to when few enough Machines are unhealthy: at most a
// number or percentage, or a count within a range ("[1-3]").
type RemediationTriggerIf struct {
	// +optional
	UnhealthyLessThanOrEqualTo *intstr.IntOrString `json:"unhealthyLessThanOrEqualTo,omitempty"`
	// +optional
	UnhealthyInRange string `json:"unhealthyInRange,omitempty"`
}

// MachineHealthCheckRemediationTemplateReference points at a remediation template in the
// namespace of the object that uses it; like a class template it pins the apiVersion.
type MachineHealthCheckRemediationTemplateReference struct {
	// +required
	Kind string `json:"kind,omitempty"`
	// +required
	Name string `json:"name,omitempty"`
	// +required
	APIVersion string `json:"apiVersion,omitempty"`
}

// IsDefined says any part of the reference is set.
func (r *MachineHealthCheckRemediationTemplateReference) IsDefined() bool {
	return r != nil && (r.Kind != "" || r.Name != "" || r.APIVersion != "")
}

// MachineHealthCheckSpec is what topoflow generates for a control plane or MachineDeployment
// whose class (or topology) defines a health check.
type MachineHealthCheckSpec struct {
	// +required
	ClusterName string `json:"clusterName,omitempty"`
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`
	// +optional
	Checks HealthCheckChecks `json:"checks,omitempty,omitzero"`
	// +optional
	Remediation HealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineHealthCheckStatus is what Cluster API reports about a MachineHealthCheck; topoflow reads
// the conditions and counters for the Cluster's status.
type MachineHealthCheckStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ExpectedMachines *int32 `json:"expectedMachines,omitempty"`
	// +optional
	CurrentHealthy *int32 `json:"currentHealthy,omitempty"`
	// +optional
	RemediationsAllowed *int32 `json:"remediationsAllowed,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	// +listType=atomic
	Targets []string `json:"targets,omitempty"`
	// +optional
	Deprecated *V1Beta1ConditionsDeprecatedStatus `json:"deprecated,omitempty"`
}

// V1Beta1ConditionsDeprecatedStatus is status.deprecated of the kinds whose only v1beta1 leftover
// is their old conditions (ClusterClass, MachineHealthCheck).
type V1Beta1ConditionsDeprecatedStatus struct {
	// +optional
	V1Beta1 *V1Beta1ConditionsStatus `json:"v1beta1,omitempty"`
}

// V1Beta1ConditionsStatus holds v1beta1 conditions.
type V1Beta1ConditionsStatus struct {
	// +optional
	Conditions V1Beta1Conditions `json:"conditions,omitempty"`
}

// MachineHealthCheck watches a group of Machines and remediates the unhealthy ones.
//
// +kubebuilder:object:root=true
type MachineHealthCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineHealthCheckSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status MachineHealthCheckStatus `json:"status,omitempty,omitzero"`
}

// MachineHealthCheckList is a list of MachineHealthChecks.
//
// +kubebuilder:object:root=true
type MachineHealthCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineHealthCheck `json:"items"`
}
