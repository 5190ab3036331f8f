package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineDeploymentRolloutStrategyType is how a MachineDeployment replaces its Machines.
// +kubebuilder:validation:Enum=RollingUpdate;OnDelete
type MachineDeploymentRolloutStrategyType string

// RollingUpdate replaces Machines a few at a time; OnDelete only when someone deletes them.
const (
	RollingUpdateMachineDeploymentStrategyType MachineDeploymentRolloutStrategyType = "RollingUpdate"
	OnDeleteMachineDeploymentStrategyType      MachineDeploymentRolloutStrategyType = "OnDelete"
)

// MachineDeploymentRolloutSpec is when and how a MachineDeployment rolls its Machines out: the
// shape of a MachineDeployment's spec.rollout and of its topology's rollout.
type MachineDeploymentRolloutSpec struct {
	// After rolls the Machines out once this time has passed, even if nothing else changed.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
	// +optional
	Strategy MachineDeploymentRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// MachineDeploymentRolloutStrategy is the strategy of a MachineDeployment, its class or its
// topology (the same shape in all three).
type MachineDeploymentRolloutStrategy struct {
	// +required
	Type MachineDeploymentRolloutStrategyType `json:"type,omitempty"`
	// +optional
	RollingUpdate MachineDeploymentRolloutStrategyRollingUpdate `json:"rollingUpdate,omitempty,omitzero"`
}

// MachineDeploymentRolloutStrategyRollingUpdate bounds a rolling update.
type MachineDeploymentRolloutStrategyRollingUpdate struct {
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`
}

// MachineDeploymentRemediationSpec caps how many Machines a MachineDeployment remediates at once.
type MachineDeploymentRemediationSpec struct {
	// +optional
	MaxInFlight *intstr.IntOrString `json:"maxInFlight,omitempty"`
}

// MachineDeploymentSpec is the spec topoflow computes for a MachineDeployment of the topology.
type MachineDeploymentSpec struct {
	// +required
	ClusterName string `json:"clusterName,omitempty"`
	// Replicas is nil when the topology leaves scaling to someone else (an autoscaler).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Rollout MachineDeploymentRolloutSpec `json:"rollout,omitempty,omitzero"`
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`
	// +optional
	MachineNaming NamingSpec `json:"machineNaming,omitempty,omitzero"`
	// +optional
	Remediation MachineDeploymentRemediationSpec `json:"remediation,omitempty,omitzero"`
	// +optional
	Deletion DeletionOrderSpec `json:"deletion,omitempty,omitzero"`
	// Paused is a pointer so that an explicit false survives (v1beta1 could not tell it from unset).
	// +optional
	Paused *bool `json:"paused,omitempty"`
}

// MachineDeploymentStatus is what topoflow reads of a MachineDeployment to report the workers and
// to pace upgrades.
type MachineDeploymentStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=version
	Versions []StatusVersion `json:"versions,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=ScalingUp;ScalingDown;Running;Failed;Unknown
	Phase string `json:"phase,omitempty"`
	// +optional
	Deprecated *MachineDeploymentDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachineDeploymentDeprecatedStatus is a MachineDeployment's status.deprecated.
type MachineDeploymentDeprecatedStatus struct {
	// +optional
	V1Beta1 *MachineDeploymentV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachineDeploymentV1Beta1DeprecatedStatus keeps the v1beta1 conditions and counters. The
// counters are always written, zero included, as v1beta1 wrote them.
type MachineDeploymentV1Beta1DeprecatedStatus struct {
	// +optional
	Conditions V1Beta1Conditions `json:"conditions,omitempty"`
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`
}

// MachineDeployment is a pool of Machines rolled out like a Deployment rolls out Pods.
//
// +kubebuilder:object:root=true
type MachineDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineDeploymentSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status MachineDeploymentStatus `json:"status,omitempty,omitzero"`
}

// MachineDeploymentList is a list of MachineDeployments.
//
// +kubebuilder:object:root=true
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}

// MachinePoolSpec is the spec topoflow computes for a MachinePool of the topology.
type MachinePoolSpec struct {
	// +required
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`
	// ProviderIDList is the infrastructure provider's to fill; topoflow leaves it alone.
	// +optional
	// +listType=atomic
	ProviderIDList []string `json:"providerIDList,omitempty"`
	// +optional
	// +listType=atomic
	FailureDomains []string `json:"failureDomains,omitempty"`
}

// MachinePoolStatus is what topoflow reads of a MachinePool: its Nodes (an upgrade waits for
// their kubelets) and the counters and conditions for the Cluster's status.
type MachinePoolStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Initialization MachineInitializationStatus `json:"initialization,omitempty,omitzero"`
	// +optional
	// +listType=atomic
	NodeRefs []corev1.ObjectReference `json:"nodeRefs,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// +optional
	// +listType=atomic
	Versions []StatusVersion `json:"versions,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Deprecated *MachinePoolDeprecatedStatus `json:"deprecated,omitempty"`
}

// MachinePoolDeprecatedStatus is a MachinePool's status.deprecated.
type MachinePoolDeprecatedStatus struct {
	// +optional
	V1Beta1 *MachinePoolV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// MachinePoolV1Beta1DeprecatedStatus keeps the v1beta1 conditions, failure and counters. Unlike a
// MachineDeployment's, these counters are omitted when zero.
type MachinePoolV1Beta1DeprecatedStatus struct {
	// +optional
	Conditions V1Beta1Conditions `json:"conditions,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
}

// MachinePool is a group of Machines the infrastructure provider manages as one (a cloud's scale
// set).
//
// +kubebuilder:object:root=true
type MachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachinePoolSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status MachinePoolStatus `json:"status,omitempty,omitzero"`
}

// MachinePoolList is a list of MachinePools.
//
// +kubebuilder:object:root=true
type MachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachinePool `json:"items"`
}
