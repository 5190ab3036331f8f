package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterClassRevision is one recorded state of a ClusterClass that opted in to revisions
// (annotation topoflow.dev/class-revisions: "enabled"): the class's spec and discovered variables,
// and the content of every template it references, numbered in the order recorded. A Cluster of
// the class is computed from the revision it is pinned to, so an edit of the class (or of a
// template in place) reaches a Cluster only when a Rollout moves it. Its spec never changes once
// recorded; its name is "<class>-<revision>".
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterclassrevisions,scope=Namespaced,shortName=ccr,categories=topoflow
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Class",type="string",JSONPath=".spec.clusterClassName"
// +kubebuilder:printcolumn:name="Revision",type="integer",JSONPath=".spec.revision"
// +kubebuilder:printcolumn:name="Clusters",type="integer",JSONPath=".status.clusters"
// +kubebuilder:printcolumn:name="Latest",type="boolean",JSONPath=".status.latest"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type ClusterClassRevision struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a ClusterClassRevision is immutable: record a new one by editing the ClusterClass"
	Spec   ClusterClassRevisionSpec   `json:"spec"`
	Status ClusterClassRevisionStatus `json:"status,omitempty"`
}

// ClusterClassRevisionSpec is what a revision holds.
type ClusterClassRevisionSpec struct {
	// ClusterClassName is the class (in the revision's namespace) this is a revision of.
	// +kubebuilder:validation:MinLength=1
	ClusterClassName string `json:"clusterClassName"`
	// Revision numbers the class's revisions from 1, in the order they were recorded.
	// +kubebuilder:validation:Minimum=1
	Revision int64 `json:"revision"`
	// Hash is "sha256:" and the hex digest of class and templates (model/revision.Hash): two
	// revisions with the same hash hold the same content, and a revision whose content does not
	// match its hash is refused.
	// +kubebuilder:validation:Pattern=`^sha256:[0-9a-f]{64}$`
	Hash string `json:"hash"`
	// Class is the ClusterClass as recorded: apiVersion, kind, spec and status.variables (the
	// definitions Clusters are validated and patched with, discovered ones included).
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Class apiextensionsv1.JSON `json:"class"`
	// Templates are the templates the class references, as recorded: apiVersion, kind,
	// metadata (name, labels, annotations) and spec, sorted by kind and name.
	// +optional
	// +listType=atomic
	Templates []apiextensionsv1.JSON `json:"templates,omitempty"`
}

// ClusterClassRevisionStatus says how the revision is used.
type ClusterClassRevisionStatus struct {
	// Clusters is how many Clusters of the class are pinned to this revision.
	// +optional
	Clusters int32 `json:"clusters"`
	// Latest is true on the class's newest revision: the one new Clusters are pinned to.
	// +optional
	Latest bool `json:"latest"`
}

// ClusterClassRevisionList is a list of ClusterClassRevisions.
// +kubebuilder:object:root=true
type ClusterClassRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClassRevision `json:"items"`
}
