// Package v1beta1 holds the simulated infrastructure provider's types
// (infrastructure.cluster.x-k8s.io/v1beta1, kinds prefixed Sim). They follow the Cluster API
// infrastructure contract so topoflow treats them like any real provider's objects.
//
// +kubebuilder:object:generate=true
// +groupName=infrastructure.cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIEndpoint is a host and port.
type APIEndpoint struct {
	// +optional
	Host string `json:"host,omitempty"`
	// +optional
	Port int32 `json:"port,omitempty"`
}

// SimClusterSpec is the spec of a simulated infrastructure cluster. Unknown fields are kept so
// ClusterClass patches can set anything.
// +kubebuilder:pruning:PreserveUnknownFields
type SimClusterSpec struct {
	// ControlPlaneEndpoint is set by the simulator once the "load balancer" is up.
	// +optional
	ControlPlaneEndpoint APIEndpoint `json:"controlPlaneEndpoint,omitempty"`
	// +optional
	Region string `json:"region,omitempty"`
}

// SimClusterStatus follows the infrastructure cluster contract.
type SimClusterStatus struct {
	// +optional
	Ready bool `json:"ready"`
	// +optional
	FailureReason *string `json:"failureReason,omitempty"`
	// +optional
	FailureMessage *string `json:"failureMessage,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// SimCluster is a simulated infrastructure cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simclusters,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Cluster",type="string",JSONPath=".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']"
// +kubebuilder:printcolumn:name="Ready",type="boolean",JSONPath=".status.ready"
// +kubebuilder:printcolumn:name="Endpoint",type="string",JSONPath=".spec.controlPlaneEndpoint.host"
type SimCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec   SimClusterSpec   `json:"spec,omitempty"`
	Status SimClusterStatus `json:"status,omitempty"`
}

// SimClusterList is a list of SimClusters.
//
// +kubebuilder:object:root=true
type SimClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimCluster `json:"items"`
}

// SimClusterTemplateResource is the template's body.
type SimClusterTemplateResource struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec SimClusterSpec `json:"spec"`
}

// ObjectMeta is labels and annotations for generated objects.
type ObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SimClusterTemplateSpec wraps the template.
type SimClusterTemplateSpec struct {
	Template SimClusterTemplateResource `json:"template"`
}

// SimClusterTemplate is a template for SimClusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simclustertemplates,scope=Namespaced,categories=cluster-api
type SimClusterTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimClusterTemplateSpec `json:"spec,omitempty"`
}

// SimClusterTemplateList is a list of SimClusterTemplates.
//
// +kubebuilder:object:root=true
type SimClusterTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimClusterTemplate `json:"items"`
}

// SimMachineSpec is the spec of a simulated machine.
// +kubebuilder:pruning:PreserveUnknownFields
type SimMachineSpec struct {
	// +optional
	Image string `json:"image,omitempty"`
	// +optional
	InstanceType string `json:"instanceType,omitempty"`
}

// SimMachineTemplateResource is the template's body.
type SimMachineTemplateResource struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec SimMachineSpec `json:"spec"`
}

// SimMachineTemplateSpec wraps the template.
type SimMachineTemplateSpec struct {
	Template SimMachineTemplateResource `json:"template"`
}

// SimMachineTemplate is an infrastructure machine template.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachinetemplates,scope=Namespaced,categories=cluster-api
type SimMachineTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimMachineTemplateSpec `json:"spec,omitempty"`
}

// SimMachineTemplateList is a list of SimMachineTemplates.
//
// +kubebuilder:object:root=true
type SimMachineTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachineTemplate `json:"items"`
}

// SimMachinePoolStatus follows the infrastructure machine pool contract.
type SimMachinePoolStatus struct {
	// +optional
	Ready bool `json:"ready"`
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// SimMachinePool is a simulated infrastructure machine pool.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachinepools,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
type SimMachinePool struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec   SimMachineSpec       `json:"spec,omitempty"`
	Status SimMachinePoolStatus `json:"status,omitempty"`
}

// SimMachinePoolList is a list of SimMachinePools.
//
// +kubebuilder:object:root=true
type SimMachinePoolList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachinePool `json:"items"`
}

// SimMachinePoolTemplateSpec wraps the template.
type SimMachinePoolTemplateSpec struct {
	Template SimMachineTemplateResource `json:"template"`
}

// SimMachinePoolTemplate is a template for SimMachinePools.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simmachinepooltemplates,scope=Namespaced,categories=cluster-api
type SimMachinePoolTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimMachinePoolTemplateSpec `json:"spec,omitempty"`
}

// SimMachinePoolTemplateList is a list of SimMachinePoolTemplates.
//
// +kubebuilder:object:root=true
type SimMachinePoolTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimMachinePoolTemplate `json:"items"`
}
