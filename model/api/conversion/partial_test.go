package conversion

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Partial objects: the API server converts them while it merges a server-side apply made in one
// version with what managers own in the other (structured-merge-diff's Updater.prune,
// addBackOwnedItems and addBackDanglingItems), and a field the conversion writes from nothing
// counts there as set. These tests check that what a partial object does not set is not set after
// the conversion either, in both directions.

func objectJSON(apiVersion, kind, spec string) []byte {
	return []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"rc-0","namespace":"default"},"spec":%s}`, apiVersion, kind, spec))
}

// body is an object without what identifies it and without the conversion data.
func body(m map[string]any) map[string]any {
	out := maps.Clone(m)
	delete(out, "apiVersion")
	delete(out, "kind")
	delete(out, "metadata")
	return out
}

func decoded(t *testing.T, js string) map[string]any {
	t.Helper()
	return plain(t, []byte(js))
}

// TestPartialStaysPartial: the fragments a rollout and a person write (a class, a variable,
// replicas) and what server-side apply leaves of an object after it removed a manager's fields
// (the version here) convert to exactly their fields: no version "" (which defaulting would make
// "v"), no class "", no empty control plane, status or template references.
func TestPartialStaysPartial(t *testing.T) {
	const v1, v2 = "cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2"
	for _, tc := range []struct {
		name     string
		kind     string
		v1beta2  string // the spec, as v1beta2
		v1beta1  string // the same spec, as v1beta1
		onlyFrom string // "v1beta2" or "v1beta1": the pair is checked in that direction only
	}{
		{name: "class", kind: "Cluster",
			v1beta2: `{"topology":{"classRef":{"name":"quick-start-2"}}}`,
			v1beta1: `{"topology":{"class":"quick-start-2"}}`},
		{name: "variable", kind: "Cluster",
			v1beta2: `{"topology":{"variables":[{"name":"region","value":"sim-east-1"}]}}`,
			v1beta1: `{"topology":{"variables":[{"name":"region","value":"sim-east-1"}]}}`},
		{name: "replicas", kind: "Cluster",
			v1beta2: `{"topology":{"controlPlane":{"replicas":1}}}`,
			v1beta1: `{"topology":{"controlPlane":{"replicas":1}}}`},
		{name: "a pool's replicas", kind: "Cluster",
			v1beta2: `{"topology":{"workers":{"machineDeployments":[{"class":"default-worker","name":"md-0","replicas":3}]}}}`,
			v1beta1: `{"topology":{"workers":{"machineDeployments":[{"class":"default-worker","name":"md-0","replicas":3}]}}}`},
		{name: "the version removed by a prune", kind: "Cluster",
			v1beta2: `{"clusterNetwork":{"pods":{"cidrBlocks":["192.168.0.0/16"]}},"topology":{"classRef":{"name":"quick-start"},"controlPlane":{"replicas":1}}}`,
			v1beta1: `{"clusterNetwork":{"pods":{"cidrBlocks":["192.168.0.0/16"]}},"topology":{"class":"quick-start","controlPlane":{"replicas":1}}}`},
		{name: "an empty value written as such stays", kind: "Cluster", onlyFrom: "v1beta2",
			v1beta2: `{"topology":{"classRef":{"name":"quick-start"},"version":"","controlPlane":{}}}`,
			v1beta1: `{"topology":{"class":"quick-start","version":"","controlPlane":{}}}`},
		{name: "nothing", kind: "Cluster", v1beta2: `{}`, v1beta1: `{}`},
		{name: "a class variable", kind: "ClusterClass",
			v1beta2: `{"variables":[{"name":"region","required":true,"schema":{"openAPIV3Schema":{"type":"string"}}}]}`,
			v1beta1: `{"variables":[{"name":"region","required":true,"schema":{"openAPIV3Schema":{"type":"string"}}}]}`},
		{name: "a class variable without required", kind: "ClusterClass", onlyFrom: "v1beta2",
			v1beta2: `{"variables":[{"name":"region","schema":{"openAPIV3Schema":{"type":"string"}}}]}`,
			v1beta1: `{"variables":[{"name":"region","schema":{"openAPIV3Schema":{"type":"string"}}}]}`},
		{name: "a pool class's naming", kind: "ClusterClass",
			v1beta2: `{"workers":{"machineDeployments":[{"class":"default-worker","naming":{"template":"{{ .cluster.name }}-md"}}]}}`,
			v1beta1: `{"workers":{"machineDeployments":[{"class":"default-worker","namingStrategy":{"template":"{{ .cluster.name }}-md"}}]}}`},
		{name: "a template", kind: "ClusterClass",
			v1beta2:  `{"controlPlane":{"templateRef":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlaneTemplate","name":"cp"}}}`,
			v1beta1:  `{"controlPlane":{"ref":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlaneTemplate","name":"cp","namespace":"default"}}}`,
			onlyFrom: "v1beta2"}, // v1beta2 names no namespace: the class's
		{name: "nothing", kind: "ClusterClass", v1beta2: `{}`, v1beta1: `{}`},
	} {
		t.Run(tc.kind+": "+tc.name, func(t *testing.T) {
			if tc.onlyFrom != "v1beta1" {
				var got map[string]any
				var err error
				if tc.kind == "Cluster" {
					got, err = ClusterV1Beta1(objectJSON(v2, tc.kind, tc.v1beta2), versions)
				} else {
					got, err = ClusterClassV1Beta1(objectJSON(v2, tc.kind, tc.v1beta2))
				}
				require.NoError(t, err)
				assert.Equal(t, map[string]any{"spec": decoded(t, tc.v1beta1)}, body(got), "v1beta2 -> v1beta1")
			}
			if tc.onlyFrom != "v1beta2" {
				var got map[string]any
				var err error
				if tc.kind == "Cluster" {
					got, err = ClusterV1Beta2(objectJSON(v1, tc.kind, tc.v1beta1))
				} else {
					got, err = ClusterClassV1Beta2(objectJSON(v1, tc.kind, tc.v1beta1))
				}
				require.NoError(t, err)
				want := map[string]any{}
				if spec := decoded(t, tc.v1beta2); len(spec) > 0 {
					want["spec"] = spec
				}
				assert.Equal(t, want, body(got), "v1beta1 -> v1beta2")
			}
		})
	}
}

// fullV1Beta2 is the provisioned sample Cluster, or the sample ClusterClass with a status, as
// v1beta2: every field set, none empty.
func fullV1Beta2(t *testing.T, kind string) map[string]any {
	t.Helper()
	if kind == "Cluster" {
		hub, err := ClusterV1Beta2(mustMarshal(t, provisioned(t)))
		require.NoError(t, err)
		return hub
	}
	hub, err := ClusterClassV1Beta2(sampleJSON(t, "ClusterClass"))
	require.NoError(t, err)
	hub["status"] = decoded(t, `{"observedGeneration":1,"variables":[{"name":"region","definitionsConflict":true,
		"definitions":[{"from":"inline","required":true,"schema":{"openAPIV3Schema":{"type":"string","enum":["sim-east-1"]}}}]}]}`)
	return hub
}

// fullV1Beta1 is the same as v1beta1, as a v1beta1 client writes it by hand (nothing empty).
func fullV1Beta1(t *testing.T, kind string) map[string]any {
	t.Helper()
	var m map[string]any
	var err error
	if kind == "Cluster" {
		m, err = ClusterV1Beta1(mustMarshal(t, fullV1Beta2(t, kind)), versions)
	} else {
		m, err = ClusterClassV1Beta1(mustMarshal(t, fullV1Beta2(t, kind)))
	}
	require.NoError(t, err)
	return withoutData(m)
}

// keyFields name a list entry: the entries of a list of objects that all have one of them are
// kept apart by them (as server-side apply keeps the entries of an associative list); any other
// list is one value.
var keyFields = []string{"name", "class", "from"}

func keysOf(e any) map[string]any {
	m, ok := e.(map[string]any)
	if !ok {
		return nil
	}
	keys := map[string]any{}
	for _, k := range keyFields {
		if v, ok := m[k]; ok {
			keys[k] = v
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return keys
}

func keyed(l []any) bool {
	for _, e := range l {
		if keysOf(e) == nil {
			return false
		}
	}
	return len(l) > 0
}

// alone is obj with only the value at path (and, on the way, every entry of each keyed list by
// its keys alone, so that entries keep their places), for each value of obj under spec and status.
// skeleton is the same without the value: the keys alone.
func alone(obj map[string]any) (paths []string, with, skeleton []map[string]any) {
	var walk func(v any, path string, build func(leaf any, keysOnly bool) map[string]any)
	walk = func(v any, path string, build func(any, bool) map[string]any) {
		switch x := v.(type) {
		case map[string]any:
			if atomic(path) {
				break
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k], path+"."+k, func(leaf any, keysOnly bool) map[string]any {
					if keysOnly && leaf == nil {
						return build(nil, true)
					}
					return build(map[string]any{k: leaf}, keysOnly)
				})
			}
			return
		case []any:
			if keyed(x) {
				for i, e := range x {
					walk(e, fmt.Sprintf("%s[%d]", path, i), func(leaf any, keysOnly bool) map[string]any {
						entries := make([]any, len(x))
						for j := range x {
							entries[j] = keysOf(x[j])
						}
						if leaf != nil {
							entry := keysOf(x[i])
							maps.Copy(entry, leaf.(map[string]any))
							entries[i] = entry
						}
						return build(entries, keysOnly)
					})
				}
				return
			}
		}
		if slices.Contains(keyFields, path[strings.LastIndex(path, ".")+1:]) {
			return // a key: in every object on its way already
		}
		paths = append(paths, path)
		with = append(with, build(v, false))
		skeleton = append(skeleton, build(nil, true))
	}
	for _, top := range []string{"spec", "status"} {
		if v, ok := obj[top]; ok {
			walk(v, top, func(leaf any, keysOnly bool) map[string]any {
				if leaf == nil {
					return map[string]any{}
				}
				return map[string]any{top: leaf}
			})
		}
	}
	return paths, with, skeleton
}

// leaves are the scalar values (and lists of scalars) of obj by path.
func leaves(obj any, path string, out map[string]any) map[string]any {
	switch x := obj.(type) {
	case map[string]any:
		if atomic(path) {
			out[path] = x
			return out
		}
		for k, v := range x {
			leaves(v, path+"."+k, out)
		}
		if len(x) == 0 && path != "" {
			out[path] = x
		}
	case []any:
		if keyed(x) {
			for i, e := range x {
				leaves(e, fmt.Sprintf("%s[%d]", path, i), out)
			}
			return out
		}
		out[path] = x
	default:
		out[path] = x
	}
	return out
}

// atomic: a reference is one value (x-kubernetes-map-type: atomic in Cluster API's CRDs).
func atomic(path string) bool {
	name := path[strings.LastIndex(path, ".")+1:]
	return name == "ref" || strings.HasSuffix(name, "Ref") || name == "remediationTemplate"
}

// required are the fields v1beta1 requires of an object v1beta2 may set only in part: the
// conversion writes them when their object is there.
var required = []string{".spec.controlPlaneEndpoint.host", ".spec.controlPlaneEndpoint.port"}

// TestEachFieldAlone converts, for each field of a whole object (the provisioned sample Cluster,
// the sample ClusterClass with a status), the object that sets that field alone, in both
// directions. Every value the conversion gives it is one the whole object's conversion has
// there too (nothing comes from nothing: no "" class, no false readiness), and the object with
// only the list entries' keys converts to those keys alone (no empty objects, no template
// references made of the namespace alone).
func TestEachFieldAlone(t *testing.T) {
	for _, kind := range []string{"Cluster", "ClusterClass"} {
		for _, from := range []string{"v1beta2", "v1beta1"} {
			t.Run(kind+" from "+from, func(t *testing.T) {
				full := fullV1Beta2(t, kind)
				conv := func(m map[string]any) map[string]any {
					js := mustMarshal(t, m)
					var out map[string]any
					var err error
					switch {
					case kind == "Cluster" && from == "v1beta2":
						out, err = ClusterV1Beta1(js, versions)
					case kind == "Cluster":
						out, err = ClusterV1Beta2(js)
					case from == "v1beta2":
						out, err = ClusterClassV1Beta1(js)
					default:
						out, err = ClusterClassV1Beta2(js)
					}
					require.NoError(t, err, "%s", js)
					return body(out)
				}
				if from == "v1beta1" {
					full = fullV1Beta1(t, kind)
				}
				ident := map[string]any{"apiVersion": full["apiVersion"], "kind": kind, "metadata": map[string]any{"name": "demo", "namespace": "default"}}
				whole := leaves(conv(full), "", map[string]any{})
				paths, with, skeleton := alone(full)
				require.Greater(t, len(paths), 20, "fields of the whole object")
				for i, p := range paths {
					obj, keysOnly := maps.Clone(ident), maps.Clone(ident)
					maps.Copy(obj, with[i])
					maps.Copy(keysOnly, skeleton[i])
					got := leaves(conv(obj), "", map[string]any{})
					require.NotEmpty(t, got, "%s alone converts to nothing", p)
					for lp, v := range got {
						if slices.Contains(required, lp) {
							continue
						}
						if w, ok := whole[lp]; !ok || !reflect.DeepEqual(v, w) {
							t.Errorf("%s alone: %s = %s, the whole object's conversion has %s (found %v)", p, lp, mustJSON(t, v), mustJSON(t, w), ok)
						}
					}
					keys := leaves(conv(keysOnly), "", map[string]any{})
					for lp, v := range keys {
						if !slices.Contains(keyFields, lp[strings.LastIndex(lp, ".")+1:]) {
							t.Errorf("%s: the list entries' keys alone convert to %s = %s as well", p, lp, mustJSON(t, v))
						}
					}
				}
			})
		}
	}
}

// TestWholeObjectsKeepEveryField: the conversion of a whole object loses nothing the object
// sets, whichever way (what the v1beta1 types write for nothing aside).
func TestWholeObjectsKeepEveryField(t *testing.T) {
	for _, kind := range []string{"Cluster", "ClusterClass"} {
		hub := fullV1Beta2(t, kind)
		spoke := fullV1Beta1(t, kind)
		var back map[string]any
		var err error
		if kind == "Cluster" {
			back, err = ClusterV1Beta2(mustMarshal(t, spoke))
		} else {
			back, err = ClusterClassV1Beta2(mustMarshal(t, spoke))
		}
		require.NoError(t, err)
		var js json.RawMessage = mustMarshal(t, body(hub))
		assert.JSONEq(t, string(js), string(mustMarshal(t, body(back))), kind)
	}
}
