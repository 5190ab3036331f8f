package v1beta2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MachineTemplateSpec is the Machine template of a MachineDeployment, MachineSet or MachinePool.
type MachineTemplateSpec struct {
	// ObjectMeta is a named field here (Cluster API embeds it); the wire is the same "metadata".
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Spec MachineSpec `json:"spec,omitempty,omitzero"`
}

// MachineSpec is a Machine's spec, and the spec of the Machines a pool's template stamps out.
type MachineSpec struct {
	// +required
	ClusterName string `json:"clusterName,omitempty"`
	// +required
	Bootstrap Bootstrap `json:"bootstrap,omitempty,omitzero"`
	// +required
	InfrastructureRef ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	ProviderID string `json:"providerID,omitempty"`
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// MinReadySeconds lives on the Machine in v1beta2 (v1beta1 kept it on the pool).
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
}

// Bootstrap is how a Machine gets its bootstrap data: from a bootstrap config or a ready secret.
type Bootstrap struct {
	// +optional
	ConfigRef ContractVersionedObjectReference `json:"configRef,omitempty,omitzero"`
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// MachineDeletionSpec bounds the steps of deleting a Machine: draining its Node, waiting for its
// volumes to detach, deleting the Node. Nil leaves Cluster API's default; 0 waits without limit.
// Control plane and MachinePool classes and topologies use it as their "deletion" too.
type MachineDeletionSpec struct {
	// +optional
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`
	// +optional
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`
	// +optional
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// MachineSetDeletionOrder is which Machines go first when a MachineSet scales down.
// +kubebuilder:validation:Enum=Random;Newest;Oldest
type MachineSetDeletionOrder string

// The deletion orders.
const (
	RandomMachineSetDeletionOrder MachineSetDeletionOrder = "Random"
	NewestMachineSetDeletionOrder MachineSetDeletionOrder = "Newest"
	OldestMachineSetDeletionOrder MachineSetDeletionOrder = "Oldest"
)

// MachineStatus is the part of a Machine's status topoflow reads: readiness and the version its
// Node's kubelet reports (an upgrade waits for the Machines of a pool to run the new version).
type MachineStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Initialization MachineInitializationStatus `json:"initialization,omitempty,omitzero"`
	// +optional
	NodeRef MachineNodeReference `json:"nodeRef,omitempty,omitzero"`
	// +optional
	NodeInfo *corev1.NodeSystemInfo `json:"nodeInfo,omitempty"`
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MachineInitializationStatus says how far a Machine (or a MachinePool) got in being created.
type MachineInitializationStatus struct {
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`
	// +optional
	BootstrapDataSecretCreated *bool `json:"bootstrapDataSecretCreated,omitempty"`
}

// MachineNodeReference names a Machine's Node (Nodes are cluster-scoped in the workload cluster).
type MachineNodeReference struct {
	// +required
	Name string `json:"name,omitempty"`
}

// Machine is one (virtual) host of a Cluster. topoflow only reads Machines.
//
// +kubebuilder:object:root=true
type Machine struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status MachineStatus `json:"status,omitempty,omitzero"`
}

// MachineList is a list of Machines.
//
// +kubebuilder:object:root=true
type MachineList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Machine `json:"items"`
}

// MachineSetSpec is a MachineSet's spec. topoflow reads MachineSets to know which templates the
// Machines of a MachineDeployment still use, so the whole spec is kept.
type MachineSetSpec struct {
	// +required
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +required
	Selector metav1.LabelSelector `json:"selector,omitempty,omitzero"`
	// +required
	Template MachineTemplateSpec `json:"template,omitempty,omitzero"`
	// +optional
	MachineNaming NamingSpec `json:"machineNaming,omitempty,omitzero"`
	// +optional
	Deletion DeletionOrderSpec `json:"deletion,omitempty,omitzero"`
}

// DeletionOrderSpec is how a MachineSet (or the MachineSets of a MachineDeployment) picks the
// Machines to delete when scaling down.
type DeletionOrderSpec struct {
	// +optional
	Order MachineSetDeletionOrder `json:"order,omitempty"`
}

// MachineSetStatus is a MachineSet's replica counters and conditions.
type MachineSetStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
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
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// MachineSet keeps a number of Machines of one template; a MachineDeployment rolls out through
// MachineSets. topoflow only reads them.
//
// +kubebuilder:object:root=true
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec MachineSetSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status MachineSetStatus `json:"status,omitempty,omitzero"`
}

// MachineSetList is a list of MachineSets.
//
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}
