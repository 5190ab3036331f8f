// Package v1alpha1 holds runtime.cluster.x-k8s.io/v1alpha1: the ExtensionConfig that registers
// a Runtime Extension server and records the handlers its discovery call returned.
//
// +kubebuilder:object:generate=true
// +groupName=runtime.cluster.x-k8s.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// GroupVersion is the API group and version of this package.
var GroupVersion = schema.GroupVersion{Group: "runtime.cluster.x-k8s.io", Version: "v1alpha1"}

// AddToScheme registers this package's types with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ExtensionConfig{}, &ExtensionConfigList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Annotations Cluster API defines for ExtensionConfigs.
const (
	// InjectCAFromSecretAnnotation names a Secret ("namespace/name") whose ca.crt fills caBundle.
	InjectCAFromSecretAnnotation = "runtime.cluster.x-k8s.io/inject-ca-from-secret"
	// PendingHooksAnnotation lists, comma separated, the after-hooks still to be called on a Cluster.
	PendingHooksAnnotation = "runtime.cluster.x-k8s.io/pending-hooks"
	// OkToDeleteAnnotation marks a Cluster whose BeforeClusterDelete hook has passed.
	OkToDeleteAnnotation = "runtime.cluster.x-k8s.io/ok-to-delete"
)

// ExtensionConfigSpec says how to reach an extension server and for which namespaces.
type ExtensionConfigSpec struct {
	ClientConfig ClientConfig `json:"clientConfig"`
	// NamespaceSelector limits the Clusters whose hooks this extension serves; nil means all.
	// +optional
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// Settings are passed to every handler in the request.
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ClientConfig is a URL or an in-cluster Service, plus the CA that signs the server's certificate.
type ClientConfig struct {
	// URL is https://host:port/path; exactly one of url and service is set.
	// +optional
	URL *string `json:"url,omitempty"`
	// +optional
	Service *ServiceReference `json:"service,omitempty"`
	// CABundle is a PEM-encoded CA bundle (base64 on the wire).
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// ServiceReference names a Service that serves the extension.
type ServiceReference struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// +optional
	Path *string `json:"path,omitempty"`
	// Port defaults to 443.
	// +optional
	Port *int32 `json:"port,omitempty"`
}

// FailurePolicy says what a failed call to a handler means.
type FailurePolicy string

// Failure policies.
const (
	FailurePolicyIgnore FailurePolicy = "Ignore"
	FailurePolicyFail   FailurePolicy = "Fail"
)

// ExtensionHandler is one handler the discovery call reported.
type ExtensionHandler struct {
	Name        string           `json:"name"`
	RequestHook GroupVersionHook `json:"requestHook"`
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`
	// +kubebuilder:validation:Enum=Ignore;Fail
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`
}

// GroupVersionHook names a hook by its API version and name.
type GroupVersionHook struct {
	APIVersion string `json:"apiVersion"`
	Hook       string `json:"hook"`
}

// ExtensionConfigStatus is what discovery found.
type ExtensionConfigStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=name
	Handlers []ExtensionHandler `json:"handlers,omitempty"`
	// +optional
	Conditions clusterv1.Conditions `json:"conditions,omitempty"`
}

// ExtensionConfig registers a Runtime Extension server.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=extensionconfigs,shortName=ext,scope=Cluster,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ExtensionConfig"
type ExtensionConfig struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ExtensionConfigSpec   `json:"spec,omitempty"`
	Status ExtensionConfigStatus `json:"status,omitempty"`
}

// ExtensionConfigList is a list of ExtensionConfigs.
//
// +kubebuilder:object:root=true
type ExtensionConfigList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExtensionConfig `json:"items"`
}

// The Discovered condition of an ExtensionConfig (Cluster API's RuntimeExtensionDiscoveredCondition
// and DiscoveryFailedReason).
const (
	DiscoveredCondition   clusterv1.ConditionType = "Discovered"
	DiscoveryFailedReason                         = "DiscoveryFailed"
)
