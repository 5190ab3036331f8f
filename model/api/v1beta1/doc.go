// Package v1beta1 holds the cluster.x-k8s.io/v1beta1 API types that topoflow reads and
// writes: Cluster, ClusterClass, MachineDeployment, MachinePool, MachineHealthCheck and
// ClusterEndpoint. Field names, JSON tags and optionality follow Cluster API v1beta1 so
// existing manifests decode unchanged (see model/decode for strict decoding).
//
// +kubebuilder:object:generate=true
// +groupName=cluster.x-k8s.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of this package.
var GroupVersion = schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta1"}

// AddToScheme registers this package's types with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Cluster{}, &ClusterList{},
		&ClusterClass{}, &ClusterClassList{},
		&MachineDeployment{}, &MachineDeploymentList{},
		&MachinePool{}, &MachinePoolList{},
		&MachineHealthCheck{}, &MachineHealthCheckList{},
		&ClusterEndpoint{}, &ClusterEndpointList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
