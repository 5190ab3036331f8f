package conversion

import (
	"strings"
)

// Absent fields stay absent.
//
// The conversion goes through Cluster API's Go types, and a v1beta1 type writes some fields even
// when nothing set them: spec.topology.class and version ("" rather than nothing), a Cluster's
// status booleans and spec.controlPlaneEndpoint, structs that encoding/json cannot leave out
// (spec.topology.controlPlane.metadata: {}), and a ClusterClass's template references, which
// the conversion names with the class's namespace even when there is no template. A whole object
// is the same either way. A partial one is not: the API server converts partial objects while it
// merges a server-side apply made in one version with what managers own in the other
// (structured-merge-diff's Updater.prune and addBackOwnedItems convert the object with the
// applier's removed fields taken out), and a field that comes back from the conversion there
// counts as present: it is kept from pruning, or, on the way back to the applier's version, set
// to the empty value (a version of "", which Cluster API's defaulting turns into "v").
//
// So after the typed conversion, what the object converted did not have is taken out again
// (dropFillers): the fields below when the field they are converted from is absent, and any
// object left empty (or a list left null) where the object converted had nothing. What it has is
// left as the conversion wrote it, even an empty value. The v1beta2 types leave out nearly all
// that is not set (omitempty, omitzero); what they restore from the conversion data is what the
// v1beta2 object had, and is kept.

// filler is a field the target version's types write whatever the object converted holds.
type filler struct {
	// at is the field in the converted object ("[]" after a name: each entry of that list); from
	// is the field of the object converted it comes from, in the same list entries.
	at, from string
	// whole: dropped whatever it holds when from is absent (a reference the conversion gives the
	// object's namespace); otherwise only its empty value is (""/false/null, {}).
	whole bool
}

// clusterFillers are the v1beta1 Cluster's (Cluster API v1.14's core/v1beta1 types).
var clusterFillers = []filler{
	{at: "spec.topology.class", from: "spec.topology.classRef.name"},
	{at: "spec.topology.version", from: "spec.topology.version"},
	{at: "spec.controlPlaneEndpoint", from: "spec.controlPlaneEndpoint", whole: true},
	{at: "spec.topology.variables[].value", from: "spec.topology.variables[].value"},
	{at: "spec.topology.controlPlane.variables.overrides[].value", from: "spec.topology.controlPlane.variables.overrides[].value"},
	{at: "spec.topology.workers.machineDeployments[].variables.overrides[].value", from: "spec.topology.workers.machineDeployments[].variables.overrides[].value"},
	{at: "spec.topology.workers.machinePools[].variables.overrides[].value", from: "spec.topology.workers.machinePools[].variables.overrides[].value"},
	{at: "status.infrastructureReady", from: "status.initialization.infrastructureProvisioned"},
	{at: "status.controlPlaneReady", from: "status.initialization.controlPlaneInitialized"},
}

// clusterClassFillers are the v1beta1 ClusterClass's.
var clusterClassFillers = []filler{
	{at: "spec.infrastructure.ref", from: "spec.infrastructure.templateRef", whole: true},
	{at: "spec.controlPlane.ref", from: "spec.controlPlane.templateRef", whole: true},
	{at: "spec.controlPlane.machineInfrastructure.ref", from: "spec.controlPlane.machineInfrastructure.templateRef", whole: true},
	{at: "spec.workers.machineDeployments[].template.bootstrap.ref", from: "spec.workers.machineDeployments[].bootstrap.templateRef", whole: true},
	{at: "spec.workers.machineDeployments[].template.infrastructure.ref", from: "spec.workers.machineDeployments[].infrastructure.templateRef", whole: true},
	{at: "spec.workers.machinePools[].template.bootstrap.ref", from: "spec.workers.machinePools[].bootstrap.templateRef", whole: true},
	{at: "spec.workers.machinePools[].template.infrastructure.ref", from: "spec.workers.machinePools[].infrastructure.templateRef", whole: true},
	{at: "spec.variables[].required", from: "spec.variables[].required"},
	{at: "status.variables[].definitionsConflict", from: "status.variables[].definitionsConflict"},
	{at: "status.variables[].definitions[].required", from: "status.variables[].definitions[].required"},
}

// withoutFillers is the converted object dst as JSON, without the fillers the object it was
// converted from (in) has no source for.
func withoutFillers(in map[string]any, dst any, fillers []filler) (map[string]any, error) {
	out, err := toMap(dst)
	if err != nil {
		return nil, err
	}
	dropFillers(in, out, fillers)
	return out, nil
}

// clusterClassV1Beta2Fillers are the v1beta2 ClusterClass's: a variable's required, a plain
// boolean in v1beta1, is a pointer the generated conversion always sets.
var clusterClassV1Beta2Fillers = []filler{
	{at: "spec.variables[].required", from: "spec.variables[].required"},
	{at: "status.variables[].definitions[].required", from: "status.variables[].definitions[].required"},
}

// dropFillers takes out of out (an object converted from the object in) the fillers in has no
// source for, then every object left empty ({}) and every null
// where in has nothing at the same place. Metadata is left alone.
func dropFillers(in, out map[string]any, fillers []filler) {
	for _, f := range fillers {
		from := strings.Split(f.from, ".")
		each(out, strings.Split(f.at, "."), nil, func(parent map[string]any, key string, idx []int) {
			if has(in, from, idx) {
				return
			}
			if f.whole || emptyValue(parent[key]) {
				delete(parent, key)
			}
		})
	}
	for _, k := range []string{"spec", "status"} {
		dropEmptyObjects(out, k, in)
	}
}

// each calls fn for the field path names in obj, once per entry of each list on the way
// (idx: the entries' indices, outermost first).
func each(obj map[string]any, path []string, idx []int, fn func(parent map[string]any, key string, idx []int)) {
	name, list := strings.CutSuffix(path[0], "[]")
	v, ok := obj[name]
	if !ok {
		return
	}
	if len(path) == 1 && !list {
		fn(obj, name, idx)
		return
	}
	if !list {
		if m, ok := v.(map[string]any); ok {
			each(m, path[1:], idx, fn)
		}
		return
	}
	entries, _ := v.([]any)
	for i, e := range entries {
		if m, ok := e.(map[string]any); ok && len(path) > 1 {
			each(m, path[1:], append(append([]int(nil), idx...), i), fn)
		}
	}
}

// has says whether obj has the field path names, taking list entries by idx in order.
func has(obj map[string]any, path []string, idx []int) bool {
	var cur any = obj
	for _, p := range path {
		name, list := strings.CutSuffix(p, "[]")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[name]; !ok {
			return false
		}
		if list {
			entries, ok := cur.([]any)
			if !ok || len(idx) == 0 || idx[0] >= len(entries) {
				return false
			}
			cur, idx = entries[idx[0]], idx[1:]
		}
	}
	return true
}

// dropEmptyObjects removes parent[key] and what is below it where it is an empty object ({}) or
// null (a list the v1beta1 type cannot leave out) and in (the same place in the v1beta2 object,
// nil when absent) has nothing; list entries stay.
func dropEmptyObjects(parent map[string]any, key string, in map[string]any) {
	inV, inHas := in[key]
	switch v := parent[key].(type) {
	case nil:
		if !inHas {
			delete(parent, key)
		}
	case map[string]any:
		inM, _ := inV.(map[string]any)
		for k := range v {
			dropEmptyObjects(v, k, inM)
		}
		if len(v) == 0 && !inHas {
			delete(parent, key)
		}
	case []any:
		inL, _ := inV.([]any)
		for i, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			var inE map[string]any
			if i < len(inL) {
				inE, _ = inL[i].(map[string]any)
			}
			for k := range m {
				dropEmptyObjects(m, k, inE)
			}
		}
	}
}

// emptyValue: "", false, null, or an empty object.
func emptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	}
	return false
}
