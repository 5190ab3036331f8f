package plan

import (
	"fmt"

	"github.com/Masterminds/semver/v3"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/desired"
)

// A plan file may hold cluster.x-k8s.io objects in v1beta1 or v1beta2; the model computes in
// v1beta1, so v1beta2 documents are read through Cluster API's conversion (model/api/conversion),
// and the plan is printed in the version a client of the management cluster asks for.

// isClusterAPI says whether o is a cluster.x-k8s.io object of kind.
func isClusterAPI(o *unstructured.Unstructured, kind string) bool {
	return o.GroupVersionKind().Group == clusterv1.GroupVersion.Group && o.GetKind() == kind
}

// versionsIn is how a plan file's documents name versions: a v1beta2 contract reference names a
// group and kind only, and the version is the one of the document of that group and kind (the
// referenced object, or else the class's template for it, "<kind>Template").
func versionsIn(objs []*unstructured.Unstructured) conversion.APIVersionOf {
	return func(group, kind string) (string, error) {
		for _, k := range []string{kind, kind + "Template"} {
			for _, o := range objs {
				if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == k {
					return gvk.Version, nil
				}
			}
		}
		return "", fmt.Errorf("no document of group %q and kind %s (or %sTemplate) in the plan file says which version to use", group, kind, kind)
	}
}

// toV1Beta1 reads a cluster.x-k8s.io/v1beta2 Cluster, ClusterClass, MachineDeployment, MachinePool
// or MachineHealthCheck as the v1beta1 object Cluster API serves for it; anything else is
// returned as it is.
func toV1Beta1(o *unstructured.Unstructured, versionOf conversion.APIVersionOf) (*unstructured.Unstructured, error) {
	if o.GetAPIVersion() != conversion.V1Beta2GroupVersion.String() {
		return o, nil
	}
	js, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var m map[string]any
	switch kind := o.GetKind(); {
	case kind == "Cluster":
		m, err = conversion.ClusterV1Beta1(js, versionOf)
	case kind == "ClusterClass":
		m, err = conversion.ClusterClassV1Beta1(js)
	case slices.Contains(conversion.WorkloadKinds, kind):
		m, err = conversion.ObjectV1Beta1(kind, js, versionOf)
	default:
		return o, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
	}
	out := &unstructured.Unstructured{Object: m}
	// The conversion data only matters for writing the object back as v1beta2, which a plan never
	// does.
	if ann := out.GetAnnotations(); ann != nil {
		delete(ann, conversion.DataAnnotation)
		if len(ann) == 0 {
			ann = nil
		}
		out.SetAnnotations(ann)
	}
	return out, nil
}

// APIVersions are the cluster.x-k8s.io versions a plan is printed in.
const (
	V1Beta1 = "v1beta1"
	V1Beta2 = "v1beta2"
)

// printedIn is a computed (v1beta1) object as a client of apiVersion (v1beta1 or v1beta2) reads
// it: in v1beta2 the Cluster's intent and the MachineDeployments, MachinePools and
// MachineHealthChecks go through Cluster API's conversion. Owner references stay as they are: the
// API server stores them and serves them alike in both versions.
func printedIn(o *unstructured.Unstructured, apiVersion string) (*unstructured.Unstructured, error) {
	if o.GroupVersionKind().Group != clusterv1.GroupVersion.Group {
		return o, nil
	}
	have := o.GroupVersionKind().Version
	switch {
	case have == apiVersion:
		return o, nil
	case apiVersion == V1Beta2 && o.GetKind() == "Cluster":
		js, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		m, err := conversion.ClusterV1Beta2(js)
		if err != nil {
			return nil, err
		}
		return desired.Intent(&unstructured.Unstructured{Object: m}), nil
	case apiVersion == V1Beta2:
		out, err := desired.InServedVersion(o, conversion.V1Beta2GroupVersion.String())
		if err != nil {
			return nil, err
		}
		return out, nil
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
