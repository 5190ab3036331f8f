package conversion

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
)

// The object-level entry points: one place that knows which cluster.x-k8s.io kinds topoflow reads
// and writes across versions, for the worker's API client, `starter plan` and the tests.

// ReadKinds are the kinds ToV1Beta1 converts; WrittenKinds those ToV1Beta2 converts.
var (
	ReadKinds    = append([]string{"Cluster", "ClusterClass", "MachineSet", "Machine"}, WorkloadKinds...)
	WrittenKinds = append([]string{"Cluster", "ClusterClass"}, WorkloadKinds...)
)

// ToV1Beta1 reads a cluster.x-k8s.io/v1beta2 object of ReadKinds as the v1beta1 object Cluster
// API's conversion webhook serves for it (a Cluster or ClusterClass with the v1beta2 original in
// DataAnnotation); anything else is returned as it is. versionOf names the versions of the
// objects v1beta2 contract references point at.
func ToV1Beta1(o *unstructured.Unstructured, versionOf APIVersionOf) (*unstructured.Unstructured, error) {
	if o == nil || o.GetAPIVersion() != V1Beta2GroupVersion.String() || !slices.Contains(ReadKinds, o.GetKind()) {
		return o, nil
	}
	var m map[string]any
	var err error
	switch kind := o.GetKind(); kind {
	case "Cluster":
		m, err = clusterV1Beta1(o.Object, versionOf)
	case "ClusterClass":
		m, err = clusterClassV1Beta1(o.Object)
	default:
		m, err = objectV1Beta1(kind, o.Object, versionOf)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s as v1beta1: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// ToV1Beta2 is a cluster.x-k8s.io/v1beta1 object of WrittenKinds as Cluster API v1.11+ holds it
// (a partial object stays partial: what it does not set is not set in v1beta2 either); anything
// else is returned as it is. converted says it was converted.
func ToV1Beta2(o *unstructured.Unstructured) (out *unstructured.Unstructured, converted bool, err error) {
	if o.GetAPIVersion() != capiv1beta1.GroupVersion.String() || !slices.Contains(WrittenKinds, o.GetKind()) {
		return o, false, nil
	}
	var m map[string]any
	switch kind := o.GetKind(); kind {
	case "Cluster":
		m, err = clusterV1Beta2(o.Object)
	case "ClusterClass":
		m, err = clusterClassV1Beta2(o.Object)
	default:
		m, err = objectV1Beta2(kind, o.Object)
	}
	if err != nil {
		return nil, false, fmt.Errorf("writing %s %s/%s as v1beta2: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
	return &unstructured.Unstructured{Object: m}, true, nil
}

// DocumentsV1Beta1 reads a file's documents (a plan input, a golden test's input) with every
// cluster.x-k8s.io/v1beta2 object of ReadKinds but Machines and MachineSets as v1beta1, without
// conversion data (nothing is written back).
// A contract reference gets the version of the file's document of that group and kind, or else
// of its template ("<kind>Template").
func DocumentsV1Beta1(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	versionOf := func(group, kind string) (string, error) {
		for _, k := range []string{kind, kind + "Template"} {
			for _, o := range objs {
				if gvk := o.GroupVersionKind(); gvk.Group == group && gvk.Kind == k {
					return gvk.Version, nil
				}
			}
		}
		return "", fmt.Errorf("no document of group %q and kind %s (or %sTemplate) says which version to use", group, kind, kind)
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	var errs []error
	for _, o := range objs {
		if k := o.GetKind(); k == "Machine" || k == "MachineSet" {
			// Read by name and version only, the same in both versions; their references name
			// objects a file rarely holds.
			out = append(out, o)
			continue
		}
		c, err := ToV1Beta1(o, versionOf)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if c != o {
			dropData(c)
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}

// dropData drops the conversion data of a document converted for reading (nothing is written
// back).
func dropData(o *unstructured.Unstructured) {
	ann := o.GetAnnotations()
	delete(ann, DataAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	o.SetAnnotations(ann)
}

func joinErrors(errs []error) error {
	msg := errs[0].Error()
	for _, e := range errs[1:] {
		msg += "; " + e.Error()
	}
	return fmt.Errorf("%s", msg)
}

// DocumentsV1Beta2 reads a file's documents (a plan input) with every cluster.x-k8s.io/v1beta1
// object of WrittenKinds as the v1beta2 object Cluster API v1.11+ holds for it, without conversion
// data (nothing is written back); Machines, MachineSets and everything else stay as written.
func DocumentsV1Beta2(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	var errs []error
	for _, o := range objs {
		c, converted, err := ToV1Beta2(o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if converted {
			dropData(c)
		}
		out = append(out, c)
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	return out, nil
}
