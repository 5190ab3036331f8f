package plan

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/desired"
)

// A plan file may hold cluster.x-k8s.io objects in v1beta1 or v1beta2; they are read as v1beta2
// through Cluster API's conversion (model/api/conversion), the model computes and the plan compares
// on the hub (model/api/v1beta2), and it is printed in the version a client of the management
// cluster asks for.

// isClusterAPI says whether o is a cluster.x-k8s.io object of kind.
func isClusterAPI(o *unstructured.Unstructured, kind string) bool {
	return o.GroupVersionKind().Group == clusterv1.GroupVersion.Group && o.GetKind() == kind
}

// APIVersions are the cluster.x-k8s.io versions a plan is printed in.
const (
	V1Beta1 = "v1beta1"
	V1Beta2 = "v1beta2"
)

// printedIn is a computed object as a client of apiVersion (v1beta1 or v1beta2) reads it: the
// Cluster's intent (computed as v1beta1) and the pools and health checks (computed on the hub) go
// through Cluster API's conversion, the v1beta1 pools as the v1beta1 apply writes them
// (desired.State.InServedVersion). Owner references stay as they are: the API server stores them
// and serves them alike in both versions.
func printedIn(state *desired.State, o *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
	if o.GroupVersionKind().Group != clusterv1.GroupVersion.Group {
		return o, nil
	}
	switch have := o.GroupVersionKind().Version; {
	case have == apiVersion:
		return o, nil
	case apiVersion == V1Beta2:
		return desired.V1Beta2(o)
	case apiVersion == V1Beta1:
		return state.InServedVersion(o, "")
	}
	return nil, fmt.Errorf("--api-version: want %s or %s, got %q", V1Beta2, V1Beta1, apiVersion)
}

// ForClusterAPI plans for a management cluster running Cluster API version (v1.14, 1.10.3, ...):
// from v1.11 it serves cluster.x-k8s.io as v1beta2, so owner references to the Cluster and the
// MachineDeployments, MachinePools and MachineHealthChecks are written as v1beta2 and the plan is
// printed so; before v1.11 all of it is v1beta1. A plan read from the API server takes this from
// the server instead.
func (in *Input) ForClusterAPI(version string) error {
	v, err := semver.NewVersion(version)
	if err != nil || v.Major() != 1 {
		return fmt.Errorf("--cluster-api: want a Cluster API release such as v1.14, got %q", version)
	}
	served := ""
	if v.Minor() >= 11 {
		served = conversion.V1Beta2GroupVersion.String()
	}
	in.Desired.ClusterAPIVersion, in.Desired.WorkloadAPIVersion = served, served
	if in.APIVersion == V1Beta2 && served == "" {
		return fmt.Errorf("--api-version %s: Cluster API %s serves only %s", V1Beta2, version, V1Beta1)
	}
	return nil
}
