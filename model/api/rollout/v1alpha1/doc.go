// Package v1alpha1 holds topoflow's own API, group topoflow.dev: the Rollout, which moves many
// Clusters to a new version, class or topology values in ordered stages, and the RolloutStrategy,
// a shape of stages several Rollouts can share, and the ClusterClassRevision, one
// recorded state of a ClusterClass that Clusters are pinned to. Cluster API has nothing
// above one Cluster; these types are topoflow's and follow Kubernetes API conventions.
//
// +kubebuilder:object:generate=true
// +groupName=topoflow.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of this package.
var GroupVersion = schema.GroupVersion{Group: "topoflow.dev", Version: "v1alpha1"}

// AddToScheme registers this package's types with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Rollout{}, &RolloutList{}, &RolloutStrategy{}, &RolloutStrategyList{},
		&ClusterClassRevision{}, &ClusterClassRevisionList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
