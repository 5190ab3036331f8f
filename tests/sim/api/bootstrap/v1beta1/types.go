// Package v1beta1 holds the simulated bootstrap provider's types (bootstrap.cluster.x-k8s.io/v1beta1).
//
// +kubebuilder:object:generate=true
// +groupName=bootstrap.cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ObjectMeta is labels and annotations for generated objects.
type ObjectMeta struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// File is a file written on the simulated node.
type File struct {
	Path string `json:"path"`
	// +optional
	Content string `json:"content,omitempty"`
}

// SimConfigSpec is bootstrap configuration; unknown fields are kept for patches.
// +kubebuilder:pruning:PreserveUnknownFields
type SimConfigSpec struct {
	// +optional
	Files []File `json:"files,omitempty"`
}

// SimConfigStatus follows the bootstrap config contract.
type SimConfigStatus struct {
	// +optional
	Ready bool `json:"ready"`
	// +optional
	DataSecretName *string `json:"dataSecretName,omitempty"`
}

// SimConfig is a simulated bootstrap config (MachinePools get one each).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simconfigs,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
type SimConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec   SimConfigSpec   `json:"spec,omitempty"`
	Status SimConfigStatus `json:"status,omitempty"`
}

// SimConfigList is a list of SimConfigs.
//
// +kubebuilder:object:root=true
type SimConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimConfig `json:"items"`
}

// SimConfigTemplateResource is the template's body.
type SimConfigTemplateResource struct {
	// +optional
	ObjectMeta ObjectMeta `json:"metadata,omitempty"`
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec SimConfigSpec `json:"spec"`
}

// SimConfigTemplateSpec wraps the template.
type SimConfigTemplateSpec struct {
	Template SimConfigTemplateResource `json:"template"`
}

// SimConfigTemplate is a bootstrap config template.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=simconfigtemplates,scope=Namespaced,categories=cluster-api
type SimConfigTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SimConfigTemplateSpec `json:"spec,omitempty"`
}

// SimConfigTemplateList is a list of SimConfigTemplates.
//
// +kubebuilder:object:root=true
type SimConfigTemplateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SimConfigTemplate `json:"items"`
}
