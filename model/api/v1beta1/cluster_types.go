package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster phases (seed 004: Pending -> Provisioning -> Provisioned, plus Deleting/Failed/Unknown).
const (
	ClusterPhasePending      = "Pending"
	ClusterPhaseProvisioning = "Provisioning"
	ClusterPhaseProvisioned  = "Provisioned"
	ClusterPhaseDeleting     = "Deleting"
	ClusterPhaseFailed       = "Failed"
	ClusterPhaseUnknown      = "Unknown"
)

// ClusterSpec is the desired state of a Cluster.
type ClusterSpec struct {
	// +optional
	Paused bool `json:"paused,omitempty"`
	// +optional
	ClusterNetwork *ClusterNetwork `json:"clusterNetwork,omitempty"`
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// +optional
	ControlPlaneRef *corev1.ObjectReference `json:"controlPlaneRef,omitempty"`
	// +optional
	InfrastructureRef *corev1.ObjectReference `json:"infrastructureRef,omitempty"`
	// Topology makes this a managed Cluster, shaped by a ClusterClass.
	// +optional
	Topology *Topology `json:"topology,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// Topology is the small, user-facing description of a managed Cluster.
type Topology struct {
	// Class is the name of the ClusterClass.
	// +kubebuilder:validation:MinLength=1
	Class string `json:"class"`
	// ClassNamespace is the namespace of the ClusterClass; empty means the Cluster's namespace.
	// +optional
	ClassNamespace string `json:"classNamespace,omitempty"`
	// Version is the Kubernetes version of the Cluster.
	Version string `json:"version"`
	// RolloutAfter is deprecated in Cluster API and has no function there: topoflow reads it
	// neither (use controlPlane.rollout.after and machineDeployments[].rollout.after).
	// +optional
	RolloutAfter *metav1.Time `json:"rolloutAfter,omitempty"`
	// +optional
	ControlPlane ControlPlaneTopology `json:"controlPlane,omitempty"`
	// +optional
	Workers *WorkersTopology `json:"workers,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Variables []ClusterVariable `json:"variables,omitempty"`
}

// ControlPlaneTopology is the control plane part of a topology.
type ControlPlaneTopology struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`
	// Replicas; nil means the control plane provider decides.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	MachineHealthCheck *MachineHealthCheckTopology `json:"machineHealthCheck,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
	// Rollout.After rolls the machines out after that time even without a change (Cluster API v1.13).
	// +optional
	Rollout *TopologyRollout `json:"rollout,omitempty"`
	// +optional
	Variables *ControlPlaneVariables `json:"variables,omitempty"`
}

// TopologyRollout asks for a rollout of a part's machines (Cluster API v1.13).
// +kubebuilder:validation:MinProperties=1
type TopologyRollout struct {
	// After rolls the machines out once this time has passed, even if nothing else changed.
	// +optional
	After *metav1.Time `json:"after,omitempty"`
}

// WorkersTopology lists the worker pools of a topology.
type WorkersTopology struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	MachineDeployments []MachineDeploymentTopology `json:"machineDeployments,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	MachinePools []MachinePoolTopology `json:"machinePools,omitempty"`
}

// MachineDeploymentTopology is one MachineDeployment of a topology.
type MachineDeploymentTopology struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`
	// Class is the MachineDeploymentClass in the ClusterClass.
	Class string `json:"class"`
	// Name is unique within the topology; it names the generated object.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +optional
	FailureDomain *string `json:"failureDomain,omitempty"`
	// Replicas; nil leaves scaling to someone else (e.g. the autoscaler).
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	MachineHealthCheck *MachineHealthCheckTopology `json:"machineHealthCheck,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
	// Rollout.After rolls the machines out after that time even without a change (Cluster API v1.13).
	// +optional
	Rollout *TopologyRollout `json:"rollout,omitempty"`
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`
	// +optional
	Variables *MachineDeploymentVariables `json:"variables,omitempty"`
}

// MachinePoolTopology is one MachinePool of a topology.
type MachinePoolTopology struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`
	Class    string     `json:"class"`
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`
	// +optional
	FailureDomains []string `json:"failureDomains,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Variables *MachinePoolVariables `json:"variables,omitempty"`
}

// MachineHealthCheckTopology enables and tunes a MachineHealthCheck from the topology.
type MachineHealthCheckTopology struct {
	// Enable turns the check on or off; nil means on when the class defines one.
	// +optional
	Enable *bool `json:"enable,omitempty"`
	// MachineHealthCheckClass overrides the class definition when any field is set.
	MachineHealthCheckClass `json:",inline"`
}

// ClusterVariable is a value for a variable the ClusterClass defines.
type ClusterVariable struct {
	Name string `json:"name"`
	// DefinitionFrom is deprecated in Cluster API and kept only so old manifests decode.
	// +optional
	DefinitionFrom string `json:"definitionFrom,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Value apiextensionsv1.JSON `json:"value"`
}

// ControlPlaneVariables overrides Cluster-level variables for the control plane.
type ControlPlaneVariables struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachineDeploymentVariables overrides Cluster-level variables for one MachineDeployment.
type MachineDeploymentVariables struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// MachinePoolVariables overrides Cluster-level variables for one MachinePool.
type MachinePoolVariables struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// ClusterNetwork describes the workload cluster's networking.
type ClusterNetwork struct {
	// +optional
	APIServerPort *int32 `json:"apiServerPort,omitempty"`
	// +optional
	Services *NetworkRanges `json:"services,omitempty"`
	// +optional
	Pods *NetworkRanges `json:"pods,omitempty"`
	// +optional
	ServiceDomain string `json:"serviceDomain,omitempty"`
}

// NetworkRanges is a list of CIDR blocks.
type NetworkRanges struct {
	CIDRBlocks []string `json:"cidrBlocks"`
}

// FailureDomainSpec describes one failure domain.
type FailureDomainSpec struct {
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// FailureDomains maps failure domain names to their description.
type FailureDomains map[string]FailureDomainSpec

// ClusterStatus is the observed state of a Cluster.
type ClusterStatus struct {
	// +optional
	FailureDomains FailureDomains `json:"failureDomains,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// Phase is Pending, Provisioning, Provisioned, Deleting, Failed or Unknown.
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`
	// +optional
	ControlPlaneReady bool `json:"controlPlaneReady"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	V1Beta2 *ClusterV1Beta2Status `json:"v1beta2,omitempty"`
}

// ClusterV1Beta2Status carries the v1beta2-style status that Cluster API v1.9+ adds to v1beta1 objects.
type ClusterV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ControlPlane *ClusterControlPlaneStatus `json:"controlPlane,omitempty"`
	// +optional
	Workers *WorkersStatus `json:"workers,omitempty"`
}

// ClusterControlPlaneStatus counts control plane replicas, and says which versions they run and
// will run.
type ClusterControlPlaneStatus struct {
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// Versions are the Kubernetes versions the control plane's machines run, with how many of them (Cluster API
	// v1.14, written by its Cluster controller).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// UpgradePlan lists the versions the control plane has still to take in the upgrade in progress, the
	// next first (Cluster API v1.14, written by the topology controller).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	UpgradePlan []StatusUpgradePlanVersion `json:"upgradePlan,omitempty"`
}

// WorkersStatus counts worker replicas, and says which versions they run and will run.
type WorkersStatus struct {
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// Versions are the Kubernetes versions the worker machines run, with how many of them (Cluster API
	// v1.14, written by its Cluster controller).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// UpgradePlan lists the versions the workers (every MachineDeployment and MachinePool) have still to take in the upgrade in progress, the
	// next first (Cluster API v1.14, written by the topology controller).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	UpgradePlan []StatusUpgradePlanVersion `json:"upgradePlan,omitempty"`
}

// StatusVersion is a Kubernetes version and how many machines run it.
type StatusVersion struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=1
	Replicas int32 `json:"replicas,omitempty"`
}

// StatusUpgradePlanVersion is one version of an upgrade plan.
type StatusUpgradePlanVersion struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Version string `json:"version,omitempty"`
}

// Cluster is a Kubernetes cluster managed by Cluster API.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,shortName=cl,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="ClusterClass",type="string",JSONPath=".spec.topology.class",description="ClusterClass of this Cluster, empty if the Cluster is not using a ClusterClass"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="Cluster status such as Pending/Provisioning/Provisioned/Deleting/Failed"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of Cluster"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.topology.version",description="Kubernetes version associated with this Cluster"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterSpec   `json:"spec,omitempty"`
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClassNamespace returns the namespace the Cluster's ClusterClass lives in.
func (c *Cluster) ClassNamespace() string {
	if c.Spec.Topology != nil && c.Spec.Topology.ClassNamespace != "" {
		return c.Spec.Topology.ClassNamespace
	}
	return c.Namespace
}
