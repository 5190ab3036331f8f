// Package v1beta1 holds the simulated control plane provider's types
// (controlplane.cluster.x-k8s.io/v1beta1), following the Cluster API control plane contract.
//
// +kubebuilder:object:generate=true
// +groupName=controlplane.cluster.x-k8s.io
package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectMeta is labels and annotations for generated objects.
type ObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SimControlPlaneMachineTemplate is the contract's spec.machineTemplate.
type SimControlPlaneMachineTemplate struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +optional
	InfrastructureRef *corev1.ObjectReference `json:"infrastructureRef,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// Taints of the control plane machines' Nodes (the v1beta1 contract's
	// spec.machineTemplate.taints).
	// +optional
	Taints []SimTaint `json:"taints,omitempty"`
}

// SimTaint is a machine taint as the contract carries it.
type SimTaint struct {
	Key string `json:"key"`
	// +optional
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
	// +optional
	Propagation string `json:"propagation,omitempty"`
}

// SimControlPlaneSpec is the contract's spec plus whatever patches add.
// +kubebuilder:pruning:PreserveUnknownFields
type SimControlPlaneSpec struct {
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// +optional
	MachineTemplate *SimControlPlaneMachineTemplate `json:"machineTemplate,omitempty"`
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`
}

// Condition is a Cluster API v1beta1 condition (status.conditions).
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	// +optional
	Severity string `json:"severity,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
}

// SimControlPlaneStatus follows the control plane contract.
type SimControlPlaneStatus struct {
	// +optional
	Initialized bool `json:"initialized"`
	// +optional
	Ready bool `json:"ready"`
	// Version is the lowest version any control plane machine runs.
	// +optional
	Version string `json:"version,omitempty"`
	// +optional
	Replicas int32 `json:"replicas"`
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`
	// +optional
	UnavailableReplicas int32 `json:"unavailableReplicas"`
	// +optional
	Selector string `json:"selector,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// Versions are the Kubernetes versions the control plane machines run, with how many run
	// each (Cluster API v1.14's KubeadmControlPlane reports them in v1beta1 too).
	// +optional
	Versions []StatusVersion `json:"versions,omitempty"`
	// V1Beta2 holds the v1beta2 conditions and counters, as a v1beta1 KubeadmControlPlane of
	// Cluster API v1.14 reports them.
	// +optional
	V1Beta2 *SimControlPlaneV1Beta2Status `json:"v1beta2,omitempty"`
}

// StatusVersion is a version and how many replicas run it.
type StatusVersion struct {
	Version  string `json:"version"`
	Replicas int32  `json:"replicas"`
}

// SimControlPlaneV1Beta2Status is status.v1beta2 of the v1beta1 contract.
type SimControlPlaneV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	ReadyReplicas *int32 `json:"readyReplicas,omitempty"`
	// +optional
	AvailableReplicas *int32 `json:"availableReplicas,omitempty"`
	// +optional
	UpToDateReplicas *int32 `json:"upToDateReplicas,omitempty"`
}

// SimControlPlane is a simulated control plane.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simcontrolplanes,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Initialized",type="boolean",JSONPath=".status.initialized"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Updated",type="integer",JSONPath=".status.updatedReplicas"
// +kubebuilder:printcolumn:name="Version",type="string",JSONPath=".status.version"
// +kubebuilder:printcolumn:name="Desired",type="string",JSONPath=".spec.version"
type SimControlPlane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec   SimControlPlaneSpec   `json:"spec,omitempty"`
	Status SimControlPlaneStatus `json:"status,omitempty"`
}

// SimControlPlaneList is a list of SimControlPlanes.
//
// +kubebuilder:object:root=true
type SimControlPlaneList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimControlPlane `json:"items"`
}

// SimControlPlaneTemplateMachineTemplate is the machineTemplate part a template may carry.
type SimControlPlaneTemplateMachineTemplate struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
}

// SimControlPlaneTemplateResourceSpec is the template spec: no version, replicas or infrastructureRef.
// +kubebuilder:pruning:PreserveUnknownFields
type SimControlPlaneTemplateResourceSpec struct {
	// +optional
	MachineTemplate *SimControlPlaneTemplateMachineTemplate `json:"machineTemplate,omitempty"`
	// +optional
	ImageRepository string `json:"imageRepository,omitempty"`
}

// SimControlPlaneTemplateResource is the template's body.
type SimControlPlaneTemplateResource struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec SimControlPlaneTemplateResourceSpec `json:"spec"`
}

// SimControlPlaneTemplateSpec wraps the template.
type SimControlPlaneTemplateSpec struct {
	Template SimControlPlaneTemplateResource `json:"template"`
}

// SimControlPlaneTemplate is a template for SimControlPlanes.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simcontrolplanetemplates,scope=Namespaced,categories=cluster-api
type SimControlPlaneTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimControlPlaneTemplateSpec `json:"spec,omitempty"`
}

// SimControlPlaneTemplateList is a list of SimControlPlaneTemplates.
//
// +kubebuilder:object:root=true
type SimControlPlaneTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimControlPlaneTemplate `json:"items"`
}
