package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// MachineTemplateSpec is the template for Machines of a MachineDeployment or MachinePool.
type MachineTemplateSpec struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +optional
	Spec MachineSpec `json:"spec,omitempty"`
}

// MachineSpec is the desired state of a Machine.
type MachineSpec struct {
	ClusterName       string                 `json:"clusterName"`
	Bootstrap         Bootstrap              `json:"bootstrap"`
	InfrastructureRef corev1.ObjectReference `json:"infrastructureRef"`
	// +optional
	Version *string `json:"version,omitempty"`
	// +optional
	ProviderID *string `json:"providerID,omitempty"`
	// +optional
	FailureDomain *string `json:"failureDomain,omitempty"`
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
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
}

// Bootstrap points at a bootstrap config or a ready data secret.
type Bootstrap struct {
	// +optional
	ConfigRef *corev1.ObjectReference `json:"configRef,omitempty"`
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// MachineNamingStrategy names the Machines of a MachineDeployment.
type MachineNamingStrategy struct {
	// +optional
	Template *string `json:"template,omitempty"`
}

// MachineDeploymentSpec is the desired state of a MachineDeployment.
type MachineDeploymentSpec struct {
	ClusterName string `json:"clusterName"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	RolloutAfter *metav1.Time         `json:"rolloutAfter,omitempty"`
	Selector     metav1.LabelSelector `json:"selector"`
	Template     MachineTemplateSpec  `json:"template"`
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`
	// +optional
	MachineNamingStrategy *MachineNamingStrategy `json:"machineNamingStrategy,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit,omitempty"`
	// +optional
	Paused bool `json:"paused,omitempty"`
	// +optional
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
}

// MachineDeploymentStatus is the observed state of a MachineDeployment.
type MachineDeploymentStatus struct {
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	Replicas int32 `json:"replicas"`
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// Versions counts the Machines by the Kubernetes version they run (Cluster API v1.14).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// V1Beta2 holds what Cluster API v1.11+ reports in v1beta2 terms on a v1beta1 object.
	// +optional
	V1Beta2 *PoolV1Beta2Status `json:"v1beta2,omitempty"`
}

// PoolV1Beta2Status is a MachineDeployment's or MachinePool's status.v1beta2: its conditions and
// replica counters as v1beta2 names them (status.conditions and status.*Replicas there).
type PoolV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
}

// MachineDeployment is a set of Machines rolled out like a Deployment rolls out Pods.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinedeployments,shortName=md,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Total number of machines"
// +kubebuilder:printcolumn:name="Ready",type="integer",JSONPath=".status.readyReplicas",description="Total number of ready machines"
// +kubebuilder:printcolumn:name="Updated",type=integer,JSONPath=".status.updatedReplicas",description="Total number of machines with the desired template"
// +kubebuilder:printcolumn:name="Unavailable",type=integer,JSONPath=".status.unavailableReplicas",description="Total number of unavailable machines"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachineDeployment status such as ScalingUp/ScalingDown/Running/Failed/Unknown"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineDeployment"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachineDeployment"
type MachineDeployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineDeploymentSpec   `json:"spec,omitempty"`
	Status MachineDeploymentStatus `json:"status,omitempty"`
}

// MachineDeploymentList is a list of MachineDeployments.
//
// +kubebuilder:object:root=true
type MachineDeploymentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineDeployment `json:"items"`
}

// MachinePoolSpec is the desired state of a MachinePool.
type MachinePoolSpec struct {
	ClusterName string `json:"clusterName"`
	// +optional
	Replicas *int32              `json:"replicas,omitempty"`
	Template MachineTemplateSpec `json:"template"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	ProviderIDList []string `json:"providerIDList,omitempty"`
	// +optional
	FailureDomains []string `json:"failureDomains,omitempty"`
}

// MachinePoolStatus is the observed state of a MachinePool.
type MachinePoolStatus struct {
	// +optional
	NodeRefs []corev1.ObjectReference `json:"nodeRefs,omitempty"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas,omitempty"`
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// +optional
	Phase string `json:"phase,omitempty"`
	// +optional
	BootstrapReady bool `json:"bootstrapReady"`
	// +optional
	InfrastructureReady bool `json:"infrastructureReady"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// Versions counts the Nodes by the Kubernetes version they run (Cluster API v1.14).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Versions []StatusVersion `json:"versions,omitempty"`
	// V1Beta2 holds what Cluster API v1.11+ reports in v1beta2 terms on a v1beta1 object.
	// +optional
	V1Beta2 *PoolV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachinePool is a group of Machines managed as one by the infrastructure provider.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinepools,shortName=mp,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Replicas",type="string",JSONPath=".status.replicas",description="MachinePool replicas count"
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase",description="MachinePool status such as Terminating/Pending/Provisioning/Running/Failed etc"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachinePool"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version associated with this MachinePool"
type MachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachinePoolSpec   `json:"spec,omitempty"`
	Status MachinePoolStatus `json:"status,omitempty"`
}

// MachinePoolList is a list of MachinePools.
//
// +kubebuilder:object:root=true
type MachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachinePool `json:"items"`
}

// MachineHealthCheckSpec is the desired state of a MachineHealthCheck.
type MachineHealthCheckSpec struct {
	ClusterName string               `json:"clusterName"`
	Selector    metav1.LabelSelector `json:"selector"`
	// +optional
	UnhealthyConditions []UnhealthyCondition `json:"unhealthyConditions,omitempty"`
	// UnhealthyMachineConditions mark a Machine unhealthy by its own conditions (Cluster API
	// v1.12; backported to v1beta1).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
	// +optional
	MaxUnhealthy *intstr.IntOrString `json:"maxUnhealthy,omitempty"`
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +optional
	UnhealthyRange *string `json:"unhealthyRange,omitempty"`
	// +optional
	NodeStartupTimeout *metav1.Duration `json:"nodeStartupTimeout,omitempty"`
	// +optional
	RemediationTemplate *corev1.ObjectReference `json:"remediationTemplate,omitempty"`
}

// MachineHealthCheckStatus is the observed state of a MachineHealthCheck.
type MachineHealthCheckStatus struct {
	// +optional
	ExpectedMachines int32 `json:"expectedMachines"`
	// +optional
	CurrentHealthy int32 `json:"currentHealthy"`
	// +optional
	RemediationsAllowed int32 `json:"remediationsAllowed"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Targets []string `json:"targets,omitempty"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// V1Beta2 holds the conditions Cluster API v1.11+ reports in v1beta2 terms on a v1beta1 object.
	// +optional
	V1Beta2 *MachineHealthCheckV1Beta2Status `json:"v1beta2,omitempty"`
}

// MachineHealthCheckV1Beta2Status is a MachineHealthCheck's status.v1beta2 (status.conditions in
// v1beta2).
type MachineHealthCheckV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// MachineHealthCheck remediates unhealthy Machines.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinehealthchecks,shortName=mhc;mhcs,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="ExpectedMachines",type="integer",JSONPath=".status.expectedMachines",description="Number of machines currently monitored"
// +kubebuilder:printcolumn:name="CurrentHealthy",type="integer",JSONPath=".status.currentHealthy",description="Current observed healthy machines"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of MachineHealthCheck"
type MachineHealthCheck struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineHealthCheckSpec   `json:"spec,omitempty"`
	Status MachineHealthCheckStatus `json:"status,omitempty"`
}

// MachineHealthCheckList is a list of MachineHealthChecks.
//
// +kubebuilder:object:root=true
type MachineHealthCheckList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineHealthCheck `json:"items"`
}

// ClusterEndpointType is the function a ClusterEndpoint serves.
type ClusterEndpointType string

// ClusterEndpointTypeAPIServer marks the control plane endpoint (seed 003).
const ClusterEndpointTypeAPIServer ClusterEndpointType = "apiserver"

// ClusterEndpointSpec is a host and port where a cluster function is reachable.
type ClusterEndpointSpec struct {
	// Host is a DNS name or IP address.
	Host string `json:"host"`
	// Port is where the endpoint serves.
	Port int32 `json:"port"`
	// Cluster is the name of the Cluster in the same namespace.
	Cluster string `json:"cluster"`
	// Type is the function the endpoint serves. Seed 003 names "apiserver" in its type
	// and "ExternalControlPlaneEndpoint" in its examples; both are accepted.
	// +kubebuilder:validation:Enum=apiserver;ExternalControlPlaneEndpoint
	Type ClusterEndpointType `json:"type"`
}

// ClusterEndpoint publishes a control plane endpoint owned by the control plane provider (seed 003).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterendpoints,scope=Namespaced,categories=cluster-api
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.cluster"
// +kubebuilder:printcolumn:name="Host",type="string",JSONPath=".spec.host"
// +kubebuilder:printcolumn:name="Port",type="integer",JSONPath=".spec.port"
// +kubebuilder:printcolumn:name="Type",type="string",JSONPath=".spec.type"
type ClusterEndpoint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterEndpointSpec `json:"spec,omitempty"`
}

// ClusterEndpointList is a list of ClusterEndpoints.
//
// +kubebuilder:object:root=true
type ClusterEndpointList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterEndpoint `json:"items"`
}

// MachineSetSpec is the desired state of a MachineSet (Cluster API core's; topoflow only reads
// MachineSets, to know which MachineDeployment templates are still in use).
type MachineSetSpec struct {
	ClusterName string `json:"clusterName"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	MinReadySeconds int32                `json:"minReadySeconds,omitempty"`
	Selector        metav1.LabelSelector `json:"selector"`
	// +optional
	Template MachineTemplateSpec `json:"template,omitempty"`
	// +optional
	DeletePolicy string `json:"deletePolicy,omitempty"`
}

// MachineSetStatus is the observed state of a MachineSet.
type MachineSetStatus struct {
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	Replicas int32 `json:"replicas"`
	// +optional
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
}

// MachineSet keeps a number of Machines of one template; a MachineDeployment rolls out through them.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=machinesets,shortName=ms,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".spec.clusterName",description="Cluster"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas",description="Total number of machines"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".spec.template.spec.version",description="Kubernetes version of its machines"
type MachineSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MachineSetSpec   `json:"spec,omitempty"`
	Status MachineSetStatus `json:"status,omitempty"`
}

// MachineSetList is a list of MachineSets.
//
// +kubebuilder:object:root=true
type MachineSetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []MachineSet `json:"items"`
}
