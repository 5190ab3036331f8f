package conversion

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// The typed entry points: a value of topoflow's v1beta1 types (model/api/v1beta1) as its hub type
// (model/api/v1beta2), through the same conversion as an object read across versions
// (ToV1Beta2), for the edges that hold typed v1beta1 values: the admission
// webhooks' requests on a server that serves only v1beta1, the ClusterClass revisions (recorded
// as read in v1beta1) and the Runtime Extensions' DiscoverVariables answers.

// ClusterToHub is a v1beta1 Cluster as Cluster API v1.11+ holds it (nil is nil). The error is a
// reference whose apiVersion does not parse, as Cluster API's conversion refuses it.
func ClusterToHub(in *v1beta1.Cluster) (*v1beta2.Cluster, error) {
	return toHub[v1beta2.Cluster](in, "Cluster")
}

// ClusterClassToHub is a v1beta1 ClusterClass as Cluster API v1.11+ holds it (nil is nil).
func ClusterClassToHub(in *v1beta1.ClusterClass) (*v1beta2.ClusterClass, error) {
	return toHub[v1beta2.ClusterClass](in, "ClusterClass")
}

// MachineDeploymentToHub is a v1beta1 MachineDeployment as Cluster API v1.11+ holds it (nil is nil).
func MachineDeploymentToHub(in *v1beta1.MachineDeployment) (*v1beta2.MachineDeployment, error) {
	return toHub[v1beta2.MachineDeployment](in, "MachineDeployment")
}

// ClusterClassVariablesToHub are v1beta1 variable definitions (a ClusterClass's spec.variables, a
// DiscoverVariables answer, which the hooks types read as v1beta1 ones) as the hub holds them:
// converted as part of a v1beta1 ClusterClass (nil is nil).
func ClusterClassVariablesToHub(in []v1beta1.ClusterClassVariable) ([]v1beta2.ClusterClassVariable, error) {
	if in == nil {
		return nil, nil
	}
	hub, err := ClusterClassToHub(&v1beta1.ClusterClass{Spec: v1beta1.ClusterClassSpec{Variables: in}})
	if err != nil {
		return nil, fmt.Errorf("variable definitions: %w", err)
	}
	return hub.Spec.Variables, nil
}

// ClusterVariablesToHub is a v1beta1 Cluster's variable values (spec.topology.variables, a set of
// overrides) as Cluster API v1.11+ holds them: converted as part of a Cluster, so definitionFrom
// is dropped. The error is a value that is not JSON.
func ClusterVariablesToHub(in []v1beta1.ClusterVariable) ([]v1beta2.ClusterVariable, error) {
	hub, err := ClusterToHub(&v1beta1.Cluster{Spec: v1beta1.ClusterSpec{Topology: &v1beta1.Topology{Variables: in}}})
	if err != nil {
		return nil, fmt.Errorf("variable values: %w", err)
	}
	return hub.Spec.Topology.Variables, nil
}

// toHub converts in, a typed v1beta1 object of kind, into its hub type H through ToV1Beta2
// (nil is nil).
func toHub[H, T any](in *T, kind string) (*H, error) {
	if in == nil {
		return nil, nil
	}
	u, err := typedObject(in, capiv1beta1.GroupVersion.String(), kind)
	if err != nil {
		return nil, err
	}
	hub, _, err := ToV1Beta2(u)
	if err != nil {
		return nil, err
	}
	dropData(hub)
	out := new(H)
	return out, decode(hub.Object, out)
}

// typedObject is a typed object as an unstructured one of apiVersion and kind (a typed value
// built in code may leave its TypeMeta empty).
func typedObject(in any, apiVersion, kind string) (*unstructured.Unstructured, error) {
	m, err := toMap(in)
	if err != nil {
		return nil, fmt.Errorf("reading the %s: %w", kind, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u, nil
}
