package v1beta2

import (
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster phases, as status.phase reports them.
const (
	ClusterPhasePending      = "Pending"
	ClusterPhaseProvisioning = "Provisioning"
	ClusterPhaseProvisioned  = "Provisioned"
	ClusterPhaseDeleting     = "Deleting"
	ClusterPhaseFailed       = "Failed"
	ClusterPhaseUnknown      = "Unknown"
)

// ClusterSpec is a Cluster's spec. Value fields tagged omitzero are absent from the wire when
// unset, so "not set" needs no pointer; Paused stays a pointer so an explicit false is kept.
type ClusterSpec struct {
	// +optional
	Paused *bool `json:"paused,omitempty"`
	// +optional
	ClusterNetwork ClusterNetwork `json:"clusterNetwork,omitempty,omitzero"`
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty,omitzero"`
	// +optional
	ControlPlaneRef ContractVersionedObjectReference `json:"controlPlaneRef,omitempty,omitzero"`
	// +optional
	InfrastructureRef ContractVersionedObjectReference `json:"infrastructureRef,omitempty,omitzero"`
	// Topology makes the Cluster a managed one, shaped by a ClusterClass: topoflow's input.
	// +optional
	Topology Topology `json:"topology,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
}

// ClusterNetwork is the Cluster's network layout, as the control plane provider reads it.
type ClusterNetwork struct {
	// APIServerPort is 0 when unset (v1beta1 held a pointer).
	// +optional
	APIServerPort int32 `json:"apiServerPort,omitempty"`
	// +optional
	Services NetworkRanges `json:"services,omitempty,omitzero"`
	// +optional
	Pods NetworkRanges `json:"pods,omitempty,omitzero"`
	// +optional
	ServiceDomain string `json:"serviceDomain,omitempty"`
}

// NetworkRanges is a list of CIDR blocks.
type NetworkRanges struct {
	// +required
	// +listType=atomic
	CIDRBlocks []string `json:"cidrBlocks,omitempty"`
}

// Topology is the short, user-facing description of a managed Cluster.
type Topology struct {
	// +required
	ClassRef ClusterClassRef `json:"classRef,omitempty,omitzero"`
	// Version is the Kubernetes version the Cluster should run.
	// +required
	Version string `json:"version,omitempty"`
	// +optional
	ControlPlane ControlPlaneTopology `json:"controlPlane,omitempty,omitzero"`
	// +optional
	Workers WorkersTopology `json:"workers,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Variables []ClusterVariable `json:"variables,omitempty"`
}

// ClusterClassRef names the Cluster's ClusterClass; an empty namespace is the Cluster's.
type ClusterClassRef struct {
	// +required
	Name string `json:"name,omitempty"`
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// ControlPlaneTopology is what a topology says about the control plane.
type ControlPlaneTopology struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// Replicas is nil when the control plane provider decides.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Rollout ControlPlaneTopologyRolloutSpec `json:"rollout,omitempty,omitzero"`
	// +optional
	HealthCheck ControlPlaneTopologyHealthCheck `json:"healthCheck,omitempty,omitzero"`
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// +optional
	Variables TopologyVariables `json:"variables,omitempty,omitzero"`
}

// ControlPlaneTopologyRolloutSpec asks for a rollout of the control plane's Machines.
type ControlPlaneTopologyRolloutSpec struct {
	// After rolls the Machines out once this time has passed, even if nothing else changed.
	// +optional
	After metav1.Time `json:"after,omitempty,omitzero"`
}

// ControlPlaneTopologyHealthCheck turns the class's control plane health check on or off, or
// replaces its checks and remediation (an override replaces them as a whole).
type ControlPlaneTopologyHealthCheck struct {
	// Enabled is nil to follow the class (on when the class defines a check).
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +optional
	Checks HealthCheckChecks `json:"checks,omitempty,omitzero"`
	// +optional
	Remediation HealthCheckRemediation `json:"remediation,omitempty,omitzero"`
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
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// Class is the MachineDeployment class of the ClusterClass.
	// +required
	Class string `json:"class,omitempty"`
	// Name is unique within the topology and names the generated object.
	// +required
	Name string `json:"name,omitempty"`
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// Replicas is nil when someone else (an autoscaler) scales the pool.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	HealthCheck MachineDeploymentTopologyHealthCheck `json:"healthCheck,omitempty,omitzero"`
	// +optional
	Deletion MachineDeploymentMachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// +optional
	Rollout MachineDeploymentRolloutSpec `json:"rollout,omitempty,omitzero"`
	// +optional
	Variables TopologyVariables `json:"variables,omitempty,omitzero"`
}

// MachineDeploymentTopologyHealthCheck is ControlPlaneTopologyHealthCheck for a
// MachineDeployment, whose remediation may also cap concurrent remediations.
type MachineDeploymentTopologyHealthCheck struct {
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// +optional
	Checks HealthCheckChecks `json:"checks,omitempty,omitzero"`
	// +optional
	Remediation MachineDeploymentHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineDeploymentMachineDeletionSpec is a MachineDeployment's deletion settings: the order
// its MachineSets delete Machines in, and the per-Machine timeouts.
type MachineDeploymentMachineDeletionSpec struct {
	// +optional
	Order MachineSetDeletionOrder `json:"order,omitempty"`
	// +optional
	NodeDrainTimeoutSeconds *int32 `json:"nodeDrainTimeoutSeconds,omitempty"`
	// +optional
	NodeVolumeDetachTimeoutSeconds *int32 `json:"nodeVolumeDetachTimeoutSeconds,omitempty"`
	// +optional
	NodeDeletionTimeoutSeconds *int32 `json:"nodeDeletionTimeoutSeconds,omitempty"`
}

// MachinePoolTopology is one MachinePool of a topology.
type MachinePoolTopology struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Class string `json:"class,omitempty"`
	// +required
	Name string `json:"name,omitempty"`
	// +optional
	// +listType=atomic
	FailureDomains []string `json:"failureDomains,omitempty"`
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	Variables TopologyVariables `json:"variables,omitempty,omitzero"`
}

// ClusterVariable is a value for one of the ClusterClass's variables.
type ClusterVariable struct {
	// +required
	Name string `json:"name,omitempty"`
	// +required
	Value apiextensionsv1.JSON `json:"value,omitempty,omitzero"`
}

// TopologyVariables overrides Cluster variables for one part of the topology (the control plane,
// a MachineDeployment or a MachinePool).
type TopologyVariables struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	Overrides []ClusterVariable `json:"overrides,omitempty"`
}

// ClusterStatus is what topoflow reports on a Cluster.
type ClusterStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	Initialization ClusterInitializationStatus `json:"initialization,omitempty,omitzero"`
	// +optional
	ControlPlane *ClusterReplicasStatus `json:"controlPlane,omitempty"`
	// +optional
	Workers *ClusterReplicasStatus `json:"workers,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	FailureDomains []FailureDomain `json:"failureDomains,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=Pending;Provisioning;Provisioned;Deleting;Failed;Unknown
	Phase string `json:"phase,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Deprecated *ClusterDeprecatedStatus `json:"deprecated,omitempty"`
}

// ClusterInitializationStatus records the two one-way steps of bringing a Cluster up. Pointers:
// an explicit false ("not yet") differs from unknown.
type ClusterInitializationStatus struct {
	// +optional
	InfrastructureProvisioned *bool `json:"infrastructureProvisioned,omitempty"`
	// +optional
	ControlPlaneInitialized *bool `json:"controlPlaneInitialized,omitempty"`
}

// ClusterReplicasStatus counts the Machines of the control plane or of all workers; the two have
// the same shape.
type ClusterReplicasStatus struct {
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
	// +optional
	// +listType=atomic
	Versions []StatusVersion `json:"versions,omitempty"`
	// +optional
	// +listType=atomic
	UpgradePlan []StatusUpgradePlanVersion `json:"upgradePlan,omitempty"`
}

// FailureDomain is one failure domain the infrastructure provider offers.
type FailureDomain struct {
	// +required
	Name string `json:"name,omitempty"`
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`
	// +optional
	Attributes map[string]string `json:"attributes,omitempty"`
}

// ClusterDeprecatedStatus is a Cluster's status.deprecated.
type ClusterDeprecatedStatus struct {
	// +optional
	V1Beta1 *ClusterV1Beta1DeprecatedStatus `json:"v1beta1,omitempty"`
}

// ClusterV1Beta1DeprecatedStatus keeps the v1beta1 conditions and failure of a Cluster.
type ClusterV1Beta1DeprecatedStatus struct {
	// +optional
	Conditions V1Beta1Conditions `json:"conditions,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
}

// Cluster is a Kubernetes cluster; with spec.topology, one topoflow manages.
//
// +kubebuilder:object:root=true
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status ClusterStatus `json:"status,omitempty,omitzero"`
}

// ClusterList is a list of Clusters.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Cluster `json:"items"`
}

// ClassNamespace is the namespace of the Cluster's ClusterClass.
func (c *Cluster) ClassNamespace() string {
	if c.Spec.Topology.ClassRef.Namespace != "" {
		return c.Spec.Topology.ClassRef.Namespace
	}
	return c.Namespace
}

// IsDefined says the Cluster has a topology (any part of it set), as Cluster API's
// Topology.IsDefined: a managed Cluster.
func (t *Topology) IsDefined() bool {
	return !reflect.DeepEqual(t, &Topology{})
}
