package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ObjectMeta is the subset of metadata that topology fields can set on generated objects.
type ObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// APIEndpoint is a host and port where an API server listens.
type APIEndpoint struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
}

// IsZero reports whether neither host nor port is set.
func (e APIEndpoint) IsZero() bool { return e.Host == "" && e.Port == 0 }

// IsValid reports whether both host and port are set.
func (e APIEndpoint) IsValid() bool { return e.Host != "" && e.Port != 0 }

// ConditionType names a condition.
type ConditionType string

// ConditionSeverity expresses how bad a False condition is.
type ConditionSeverity string

// Condition severities as Cluster API defines them.
const (
	ConditionSeverityError   ConditionSeverity = "Error"
	ConditionSeverityWarning ConditionSeverity = "Warning"
	ConditionSeverityInfo    ConditionSeverity = "Info"
	ConditionSeverityNone    ConditionSeverity = ""
)

// Condition is a Cluster API v1beta1 condition (it carries a severity, unlike metav1.Condition).
type Condition struct {
	Type   ConditionType          `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity           ConditionSeverity `json:"severity,omitempty"`
	LastTransitionTime metav1.Time       `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Conditions is a list of conditions.
type Conditions []Condition

// Get returns the condition of the given type, or nil.
func (c Conditions) Get(t ConditionType) *Condition {
	for i := range c {
		if c[i].Type == t {
			return &c[i]
		}
	}
	return nil
}

// MachineReadinessGate adds a condition that a Machine must have to be Ready.
type MachineReadinessGate struct {
	ConditionType string `json:"conditionType"`
	// +optional
	Polarity string `json:"polarity,omitempty"`
}

// MachineTaint is a taint Cluster API puts on the Node of a Machine (Cluster API v1.13, feature
// gate MachineTaintPropagation; backported to v1beta1 in v1.13).
type MachineTaint struct {
	// Key is the taint key: a qualified name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
	Key string `json:"key,omitempty"`
	// Value is the taint value: a label value.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`
	// Propagation is Always (kept on the Node) or OnInitialization (set once when the Node joins).
	// +required
	Propagation MachineTaintPropagation `json:"propagation,omitempty"`
}

// MachineTaintPropagation says when a taint goes to the Node.
// +kubebuilder:validation:Enum=Always;OnInitialization
type MachineTaintPropagation string

const (
	MachineTaintPropagationAlways           MachineTaintPropagation = "Always"
	MachineTaintPropagationOnInitialization MachineTaintPropagation = "OnInitialization"
)

// UnhealthyMachineCondition marks a Machine unhealthy once its condition of that type has had
// that status for the timeout (Cluster API v1.12).
type UnhealthyMachineCondition struct {
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$`
	Type string `json:"type,omitempty"`
	// +required
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status metav1.ConditionStatus `json:"status,omitempty"`
	// +required
	Timeout metav1.Duration `json:"timeout"`
}

// ClusterAvailabilityGate adds a condition that a Cluster must have to be Available.
type ClusterAvailabilityGate struct {
	ConditionType string `json:"conditionType"`
	// +optional
	Polarity string `json:"polarity,omitempty"`
}

// UnhealthyCondition marks a Node unhealthy when it has a condition with this status for longer than timeout.
type UnhealthyCondition struct {
	Type    corev1.NodeConditionType `json:"type"`
	Status  corev1.ConditionStatus   `json:"status"`
	Timeout metav1.Duration          `json:"timeout"`
}

// MachineDeploymentStrategyType is how a MachineDeployment replaces Machines.
type MachineDeploymentStrategyType string

// MachineDeploymentStrategy describes how old Machines are replaced by new ones.
type MachineDeploymentStrategy struct {
	// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
	// +optional
	Type MachineDeploymentStrategyType `json:"type,omitempty"`
	// +optional
	RollingUpdate *MachineRollingUpdateDeployment `json:"rollingUpdate,omitempty"`
	// +optional
	Remediation *RemediationStrategy `json:"remediation,omitempty"`
}

// MachineRollingUpdateDeployment tunes a rolling update.
type MachineRollingUpdateDeployment struct {
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
	// +kubebuilder:validation:Enum=Random;Newest;Oldest
	// +optional
	DeletePolicy *string `json:"deletePolicy,omitempty"`
}

// RemediationStrategy limits concurrent remediation.
type RemediationStrategy struct {
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
}

// LocalObjectTemplate points at a template object in the ClusterClass namespace.
type LocalObjectTemplate struct {
	Ref *corev1.ObjectReference `json:"ref"`
}
