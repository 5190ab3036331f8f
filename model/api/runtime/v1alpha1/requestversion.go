package v1alpha1

import "fmt"

// RequestClusterVersionAnnotation, topoflow's own, says on an ExtensionConfig in which
// cluster.x-k8s.io version the Cluster inside its lifecycle and upgrade-plan requests is
// written. Cluster API v1.13 moved those requests from v1beta1 to v1beta2 (the same hook
// apiVersion, hooks.runtime.cluster.x-k8s.io/v1alpha1, so nothing on the wire tells the two
// apart), and an extension decodes the Cluster into the types of the SDK it was built with.
// topoflow sends v1beta2 as Cluster API v1.13+ does; an extension built on Cluster API's SDK
// v1.12 or older is marked with "v1beta1".
const RequestClusterVersionAnnotation = "topoflow.dev/request-cluster-version"

// The values RequestClusterVersionAnnotation takes.
const (
	ClusterV1Beta1 = "v1beta1"
	ClusterV1Beta2 = "v1beta2"
)

// RequestClusterVersion is the version of the Cluster in requests to cfg's handlers: v1beta2
// unless the annotation says v1beta1; any other value is an error naming the annotation.
func RequestClusterVersion(cfg *ExtensionConfig) (string, error) {
	v, ok := cfg.Annotations[RequestClusterVersionAnnotation]
	switch {
	case !ok || v == ClusterV1Beta2:
		return ClusterV1Beta2, nil
	case v == ClusterV1Beta1:
		return ClusterV1Beta1, nil
	}
	return "", fmt.Errorf("ExtensionConfig %s: metadata.annotations[%s] is %q, want %q or %q",
		cfg.Name, RequestClusterVersionAnnotation, v, ClusterV1Beta1, ClusterV1Beta2)
}
