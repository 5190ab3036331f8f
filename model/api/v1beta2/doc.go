// Package v1beta2 holds the cluster.x-k8s.io/v1beta2 types topoflow computes with: the model's
// hub (issue #37). Cluster API v1.11+ stores these kinds as v1beta2 and v1.13+ sends them to
// Runtime Extensions, so the model works on that shape and meets v1beta1 only at the edges,
// through model/api/conversion.
//
// The types are topoflow's own, written to Cluster API v1.14's wire format: JSON names,
// optionality (pointer or omitzero value) and enums match, so a document Cluster API writes
// decodes strictly here and encodes back to the same JSON (the package's tests check that
// against Cluster API's API module). Where Cluster API repeats one shape under many names (the
// health check checks of a class, a topology and a MachineHealthCheck), there is one type here.
// The fields of Cluster API's kinds that topoflow does not need are left out on purpose; the
// list, with the reasons, is in fields_test.go.
//
// The CRDs of these kinds come from Cluster API's API module (deploy/crds-v1beta2), not from
// these types: the package is skipped by the CRD generator and generates deepcopy only.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=cluster.x-k8s.io
package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is cluster.x-k8s.io/v1beta2.
var GroupVersion = schema.GroupVersion{Group: "cluster.x-k8s.io", Version: "v1beta2"}

// AddToScheme registers the kinds of this package with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Cluster{}, &ClusterList{},
		&ClusterClass{}, &ClusterClassList{},
		&MachineDeployment{}, &MachineDeploymentList{},
		&MachinePool{}, &MachinePoolList{},
		&MachineHealthCheck{}, &MachineHealthCheckList{},
		&MachineSet{}, &MachineSetList{},
		&Machine{}, &MachineList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
