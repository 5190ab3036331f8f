package rollout

import (
	"encoding/json"
	"fmt"
	"reflect"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/desired"
)

// FieldManager is the field manager a rollout writes Clusters with: a change by any other
// manager to a field it wrote, before the Cluster is done, is a hand change (see Holds).
const FieldManager = "topoflow-rollout"

// ClaimAnnotation on a Cluster names the Rollout that last wrote it ("namespace/name").
const ClaimAnnotation = "topoflow.dev/rollout"

// WindowsAnnotation on a Cluster overrides the rollout's maintenance windows for it.
const WindowsAnnotation = "topoflow.dev/maintenance-windows"

// Topology is the spec.topology fragment a change writes (the v1beta1 shape).
func Topology(c rolloutv1.Change) (map[string]any, error) {
	out := map[string]any{}
	if c.Topology != nil {
		if err := json.Unmarshal(c.Topology.Raw, &out); err != nil {
			return nil, fmt.Errorf("spec.change.topology: %w", err)
		}
	}
	if c.Version != "" {
		out["version"] = c.Version
	}
	if c.Class != "" {
		out["class"] = c.Class
	}
	return out, nil
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
