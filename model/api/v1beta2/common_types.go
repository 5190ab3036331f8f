package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectMeta is the metadata a topology or class may put on the objects it generates: labels and
// annotations only, since names, owners and the rest are topoflow's to decide.
type ObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// APIEndpoint is where an API server listens. Both parts are omitted when zero, so an unset
// endpoint does not appear on the wire at all.
type APIEndpoint struct {
	// +optional
	Host string `json:"host,omitempty"`
	// +optional
	Port int32 `json:"port,omitempty"`
}

// IsZero says neither host nor port is set (it also makes omitzero drop the endpoint).
func (e APIEndpoint) IsZero() bool { return e.Host == "" && e.Port == 0 }

// IsValid says both host and port are set.
func (e APIEndpoint) IsValid() bool { return e.Host != "" && e.Port != 0 }

// ContractVersionedObjectReference points at a provider object in the referrer's namespace by API
// group, kind and name. It names no version: the version is the one the provider's CRD marks as
// serving the Cluster API contract, looked up when the object is read.
type ContractVersionedObjectReference struct {
	// +required
	Kind string `json:"kind,omitempty"`
	// +required
	Name string `json:"name,omitempty"`
	// +required
	APIGroup string `json:"apiGroup,omitempty"`
}

// IsDefined says any part of the reference is set (a value field cannot be nil).
func (r *ContractVersionedObjectReference) IsDefined() bool {
	return r != nil && (r.Kind != "" || r.Name != "" || r.APIGroup != "")
}

// ClusterClassTemplateReference points at a template in the ClusterClass's namespace. Unlike a
// contract reference it carries the full apiVersion, because a class pins its templates.
type ClusterClassTemplateReference struct {
	// +required
	Kind string `json:"kind,omitempty"`
	// +required
	Name string `json:"name,omitempty"`
	// +required
	APIVersion string `json:"apiVersion,omitempty"`
}

// IsDefined says any part of the reference is set.
func (r *ClusterClassTemplateReference) IsDefined() bool {
	return r != nil && (r.Kind != "" || r.Name != "" || r.APIVersion != "")
}

// ConditionPolarity says whether a gate's condition is good when True (Positive, the default) or
// when False (Negative).
// +kubebuilder:validation:Enum=Positive;Negative
type ConditionPolarity string

// The two polarities.
const (
	PositivePolarityCondition ConditionPolarity = "Positive"
	NegativePolarityCondition ConditionPolarity = "Negative"
)

// ClusterAvailabilityGate is an extra condition the Cluster needs before it counts as Available.
type ClusterAvailabilityGate struct {
	// +required
	ConditionType string `json:"conditionType,omitempty"`
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// MachineReadinessGate is an extra condition a Machine needs before it counts as Ready.
type MachineReadinessGate struct {
	// +required
	ConditionType string `json:"conditionType,omitempty"`
	// +optional
	Polarity ConditionPolarity `json:"polarity,omitempty"`
}

// MachineTaintPropagation says when Cluster API puts a taint on a Machine's Node.
// +kubebuilder:validation:Enum=Always;OnInitialization
type MachineTaintPropagation string

// Always keeps the taint on the Node; OnInitialization sets it once, when the Node joins.
const (
	MachineTaintPropagationAlways           MachineTaintPropagation = "Always"
	MachineTaintPropagationOnInitialization MachineTaintPropagation = "OnInitialization"
)

// MachineTaint is a taint Cluster API puts on the Nodes of a group of Machines; key and effect
// together identify it in a list.
type MachineTaint struct {
	// +required
	Key string `json:"key,omitempty"`
	// +optional
	Value string `json:"value,omitempty"`
	// +required
	// +kubebuilder:validation:Enum=NoSchedule;PreferNoSchedule;NoExecute
	Effect corev1.TaintEffect `json:"effect,omitempty"`
	// +required
	Propagation MachineTaintPropagation `json:"propagation,omitempty"`
}

// NamingSpec is a name template ("{{ .cluster.name }}-{{ .random }}" and the like). Every place
// v1beta2 lets a class or pool name what it generates uses this one shape.
type NamingSpec struct {
	// +optional
	Template string `json:"template,omitempty"`
}

// StatusVersion counts the machines (or nodes) that run one Kubernetes version.
type StatusVersion struct {
	// +required
	Version string `json:"version,omitempty"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// StatusUpgradePlanVersion is one step of the upgrade plan a status reports.
type StatusUpgradePlanVersion struct {
	// +required
	Version string `json:"version,omitempty"`
}

// V1Beta1Condition is a condition as v1beta1 objects carried them (with a severity). v1beta2
// objects keep such conditions only under status.deprecated.v1beta1, for clients not yet moved
// to metav1.Condition; the model's own conditions are metav1.Conditions.
type V1Beta1Condition struct {
	Type   string                 `json:"type"`
	Status corev1.ConditionStatus `json:"status"`
	// +optional
	Severity           string      `json:"severity,omitempty"`
	LastTransitionTime metav1.Time `json:"lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// V1Beta1Conditions is a list of v1beta1 conditions.
type V1Beta1Conditions []V1Beta1Condition
