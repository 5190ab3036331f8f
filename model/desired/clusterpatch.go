package desired

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
)

// ClusterPatch is the JSON merge patch that brings the Cluster to the topology's intent (the two
// topology labels, the references, the upgrade-step annotation), nil when it has all of it.
// Cluster API v1.14 writes the Cluster with a regular patch, only when one of those differs
// (reconcileCluster, #13760), so a Cluster it created and topoflow took over is not written; a
// reference is the same when group, kind and name are (v1beta2 references name no version).
func ClusterPatch(current *clusterv1.Cluster, intent *unstructured.Unstructured) ([]byte, error) {
	meta := map[string]any{}
	if l := changedEntries(current.Labels, intent.GetLabels(), labels.ClusterName, labels.TopologyOwned); l != nil {
		meta["labels"] = l
	}
	if a := changedEntries(current.Annotations, intent.GetAnnotations(), labels.UpgradeStep); a != nil {
		meta["annotations"] = a
	}
	spec := map[string]any{}
	for _, r := range []struct {
		field string
		cur   clusterv1.ContractVersionedObjectReference
	}{{"infrastructureRef", current.Spec.InfrastructureRef}, {"controlPlaneRef", current.Spec.ControlPlaneRef}} {
		want, ok, _ := unstructured.NestedMap(intent.Object, "spec", r.field)
		if ok && !sameRef(r.cur, want) {
			spec[r.field] = want
		}
	}
	patch := map[string]any{}
	if len(meta) > 0 {
		patch["metadata"] = meta
	}
	if len(spec) > 0 {
		patch["spec"] = spec
	}
	if len(patch) == 0 {
		return nil, nil
	}
	return json.Marshal(patch)
}

// changedEntries is the merge patch of the given keys of a map: the wanted value where it differs,
// null where the key is to go; nil when none changes.
func changedEntries(cur, want map[string]string, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		w, wanted := want[k]
		c, has := cur[k]
		switch {
		case wanted && (!has || c != w):
			out[k] = w
		case !wanted && has:
			out[k] = nil
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func sameRef(cur clusterv1.ContractVersionedObjectReference, want map[string]any) bool {
	if !cur.IsDefined() {
		return false
	}
	av, _ := want["apiVersion"].(string)
	kind, _ := want["kind"].(string)
	name, _ := want["name"].(string)
	wg, err := schema.ParseGroupVersion(av)
	return err == nil && cur.APIGroup == wg.Group && cur.Kind == kind && cur.Name == name
}
