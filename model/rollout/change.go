package rollout

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/revision"
)

// FieldManager is the field manager a rollout writes Clusters with: a change by any other
// manager to a field it wrote, before the Cluster is done, is a hand change (see Holds).
const FieldManager = "topoflow-rollout"

// ClaimAnnotation on a Cluster names the Rollout that last wrote it ("namespace/name").
const ClaimAnnotation = "topoflow.dev/rollout"

// WindowsAnnotation on a Cluster overrides the rollout's maintenance windows for it.
const WindowsAnnotation = "topoflow.dev/maintenance-windows"

// Topology is the spec.topology fragment a change writes, in the v1beta2 shape of the model and
// of the API server (Cluster API v1.11+ stores v1beta2): change.topology, which the Rollout API
// takes in the v1beta1 shape, crosses Cluster API's conversion here, and the change's version and
// class (classRef.name) are set over it. On such a server this is the request the v1beta1
// fragment made when the client converted it (TestChangeWireUnchanged in activities).
func Topology(c rolloutv1.Change) (map[string]any, error) {
	out := map[string]any{}
	if c.Topology != nil {
		var err error
		if out, err = topologyV1Beta2(c.Topology.Raw); err != nil {
			return nil, fmt.Errorf("spec.change.topology: %w", err)
		}
	}
	if c.Version != "" {
		out["version"] = c.Version
	}
	if c.Class != "" {
		ref, _ := out["classRef"].(map[string]any)
		if ref == nil {
			ref = map[string]any{}
		}
		ref["name"] = c.Class
		out["classRef"] = ref
	}
	return out, nil
}

// topologyV1Beta2 is a spec.topology fragment written in the v1beta1 shape (JSON) as v1beta2:
// the fragment is converted inside a Cluster that holds nothing else, so what it does not set is
// not set in v1beta2 either (model/api/conversion keeps a partial object partial).
func topologyV1Beta2(raw []byte) (map[string]any, error) {
	var topo map[string]any
	if err := json.Unmarshal(raw, &topo); err != nil {
		return nil, err
	}
	if topo == nil {
		return map[string]any{}, nil
	}
	v1beta1 := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1beta1GroupVersion, "kind": "Cluster", "spec": map[string]any{"topology": topo}}}
	hub, _, err := conversion.ToV1Beta2(v1beta1)
	if err != nil {
		return nil, fmt.Errorf("reading it as %s: %w", clusterv1.GroupVersion, err)
	}
	out, _, err := unstructured.NestedMap(hub.Object, "spec", "topology")
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

// v1beta1GroupVersion is the version the Rollout API's change.topology is written in.
const v1beta1GroupVersion = "cluster.x-k8s.io/v1beta1"

// Write is what a change writes to one Cluster: its spec.topology fragment (Topology) and, for a
// classRevision change, the pin annotation naming the revision of the Cluster's class.
type Write struct {
	Topology map[string]any
	// Pin is the revision name ("<class>-<n>"); "" when the change moves no revision.
	Pin string
}

// WriteFor is the write of a change (fragment: its Topology) to a Cluster of class. A
// classRevision change must name a number by then: "latest" is resolved when the rollout starts,
// so that later revisions do not move later stages.
func WriteFor(c rolloutv1.Change, fragment map[string]any, class string) (Write, error) {
	w := Write{Topology: fragment}
	if c.ClassRevision == "" {
		return w, nil
	}
	n, err := revision.Number(c.ClassRevision)
	if err != nil || n == 0 {
		return w, fmt.Errorf("spec.change.classRevision %q: want the revision number resolved when the rollout started (%v)", c.ClassRevision, err)
	}
	w.Pin = revision.Name(class, n)
	return w, nil
}

// HeldBy says whether a Cluster already holds the write: its spec.topology holds the fragment
// (Holds) and its pin annotation names the revision. After the write, false means another manager
// changed what the rollout wrote.
func (w Write) HeldBy(topology map[string]any, annotations map[string]string) bool {
	return Holds(topology, w.Topology) && (w.Pin == "" || annotations[revision.PinAnnotation] == w.Pin)
}

// Annotations are the annotations the write sets on a Cluster: the claim naming the Rollout (by,
// "namespace/name") and the pin, when the change moves a revision.
func (w Write) Annotations(by string) map[string]any {
	out := map[string]any{ClaimAnnotation: by}
	if w.Pin != "" {
		out[revision.PinAnnotation] = w.Pin
	}
	return out
}

// Holds says whether a Cluster's spec.topology already has every value of the fragment: writing
// it again would change nothing. Lists of objects with a name (variables, machineDeployments)
// compare entry by entry, as server-side apply merges them (topology objects' own comparison,
// desired.Covers, takes lists whole); other values compare as desired.Covers does.
// Before the write it says there is nothing to write; after it, false means another manager
// changed what the rollout wrote.
func Holds(current, fragment map[string]any) bool {
	return contains(current, fragment)
}

func contains(cur, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		c, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			if !contains(c[k], v) {
				return false
			}
		}
		return true
	case []any:
		c, ok := cur.([]any)
		if !ok {
			return false
		}
		if !named(w) {
			return desired.Covers(c, w)
		}
		for _, e := range w {
			name := e.(map[string]any)["name"]
			i := indexByName(c, name)
			if i < 0 || !contains(c[i], e) {
				return false
			}
		}
		return true
	default:
		return desired.Covers(cur, want) // scalars, numbers by value
	}
}

// named: every entry is an object with a name, so entries are matched by it.
func named(l []any) bool {
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return false
		}
		if _, ok := m["name"]; !ok {
			return false
		}
	}
	return len(l) > 0
}

func indexByName(l []any, name any) int {
	for i, e := range l {
		if m, ok := e.(map[string]any); ok && reflect.DeepEqual(m["name"], name) {
			return i
		}
	}
	return -1
}
