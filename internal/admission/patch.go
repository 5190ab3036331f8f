package admission

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
)

// op is one JSON patch (RFC 6902) operation.
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// patched answers with the JSON patch that turns the request object's top-level field key into
// the defaulted value (encoded as Cluster API's webhooks encode it: decoded and re-encoded).
// Fields the object has and topoflow's types do not know are kept (no "remove" for them); a
// removal is only the re-encoding dropping an empty list or map, as Cluster API's does.
func patched(raw []byte, key string, value any) *admissionv1.AdmissionResponse {
	return patchedAs(raw, key, value, false)
}

// patchedLeavingOut is patched, except that a field the object does not have and the defaulted
// value holds only empty ("", false, 0, null, or objects and lists of nothing else) is not added.
// For Clusters and ClusterClasses: Cluster API's v1beta1 Go types write such fields whatever is
// set (spec.topology.controlPlane.metadata: {}, a pool's metadata), the conversion from v1beta2
// leaves them out (model/api/conversion), and adding them back would make every write of a
// v1beta1 object a change of its spec (a new generation, though nothing is stored differently).
func patchedLeavingOut(raw []byte, key string, value any) *admissionv1.AdmissionResponse {
	return patchedAs(raw, key, value, true)
}

func patchedAs(raw []byte, key string, value any, leaveOutEmpty bool) *admissionv1.AdmissionResponse {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return badRequest("decoding the object: %v", err)
	}
	js, err := json.Marshal(value)
	if err != nil {
		return badRequest("encoding the defaulted %s: %v", key, err)
	}
	var want any
	if err := json.Unmarshal(js, &want); err != nil {
		return badRequest("encoding the defaulted %s: %v", key, err)
	}
	var ops []op
	if have, ok := obj[key]; ok {
		ops = diff("/"+escape(key), have, want, ops, leaveOutEmpty)
	} else if !leaveOutEmpty || !nothing(want) {
		ops = append(ops, op{Op: "add", Path: "/" + escape(key), Value: want})
	}
	if len(ops) == 0 {
		return allowed()
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return badRequest("encoding the patch: %v", err)
	}
	pt := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &pt}
}

// diff appends the operations that turn have into want at path (with leaveOutEmpty, none that
// adds a field holding nothing, see patchedLeavingOut).
func diff(path string, have, want any, ops []op, leaveOutEmpty bool) []op {
	if leaveOutEmpty {
		want = likeHave(have, want)
	}
	hm, hok := have.(map[string]any)
	wm, wok := want.(map[string]any)
	if !hok || !wok {
		if !reflect.DeepEqual(have, want) {
			ops = append(ops, op{Op: "replace", Path: path, Value: want})
		}
		return ops
	}
	for _, k := range slices.Sorted(maps.Keys(wm)) {
		p := path + "/" + escape(k)
		if hv, ok := hm[k]; ok {
			ops = diff(p, hv, wm[k], ops, leaveOutEmpty)
		} else if !leaveOutEmpty || !nothing(wm[k]) {
			ops = append(ops, op{Op: "add", Path: p, Value: wm[k]})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(hm)) {
		if _, ok := wm[k]; !ok && empty(hm[k]) {
			ops = append(ops, op{Op: "remove", Path: path + "/" + escape(k)})
		}
	}
	return ops
}

func empty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// likeHave is want without the fields holding nothing that have does not have, in objects and
// in the entries of lists as long as have's (compared entry by entry).
func likeHave(have, want any) any {
	switch w := want.(type) {
	case map[string]any:
		h, _ := have.(map[string]any)
		out := make(map[string]any, len(w))
		for k, v := range w {
			hv, ok := h[k]
			if !ok && nothing(v) {
				continue
			}
			out[k] = likeHave(hv, v)
		}
		return out
	case []any:
		h, _ := have.([]any)
		if len(h) != len(w) {
			return want
		}
		out := make([]any, len(w))
		for i := range w {
			out[i] = likeHave(h[i], w[i])
		}
		return out
	}
	return want
}

// nothing: an empty value ("", false, 0, null), or an object or list of nothing else.
func nothing(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case float64:
		return x == 0
	case []any:
		for _, e := range x {
			if !nothing(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !nothing(e) {
				return false
			}
		}
		return true
	}
	return false
}

// escape makes a JSON pointer token of a key (RFC 6901).
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
