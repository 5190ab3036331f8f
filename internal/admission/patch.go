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
		ops = diff("/"+escape(key), have, want, ops)
	} else {
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

// diff appends the operations that turn have into want at path.
func diff(path string, have, want any, ops []op) []op {
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
			ops = diff(p, hv, wm[k], ops)
		} else {
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

// escape makes a JSON pointer token of a key (RFC 6901).
func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
