package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Change is how a desired object differs from the current one.
type Change string

// Changes, from none to most.
const (
	Unchanged Change = "unchanged"
	// MetadataOnly: labels or annotations differ; the object is updated in place.
	MetadataOnly Change = "metadata"
	// SpecChanged: the spec differs. A template is rotated (new name, parent ref moved); any other
	// object is updated in place.
	SpecChanged Change = "spec"
)

// Compare says how current must change to match desired. Only fields that desired sets count:
// fields the server or a provider added (defaults, status, metadata it owns) are not changes,
// as with server-side apply.
func Compare(current, desired *unstructured.Unstructured) Change {
	if !Covers(current.Object["spec"], desired.Object["spec"]) {
		return SpecChanged
	}
	if !coversStrings(current.GetLabels(), desired.GetLabels()) || !coversStrings(current.GetAnnotations(), desired.GetAnnotations()) {
		return MetadataOnly
	}
	return Unchanged
}

// Covers reports whether have holds every value want sets. Maps compare key by key; lists and
// scalars compare whole (server-side apply treats untyped lists as atomic).
func Covers(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return len(w) == 0 && have == nil
		}
		for k, wv := range w {
			if !Covers(h[k], wv) {
				return false
			}
		}
		return true
	case nil:
		return true
	default:
		return reflect.DeepEqual(normalize(have), normalize(want))
	}
}

func coversStrings(have, want map[string]string) bool {
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			return false
		}
	}
	return true
}

// normalize makes JSON numbers comparable (int64 from a decoder, float64 from another).
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// Project returns the part of current that desired sets, for showing a diff.
func Project(current, desired any) any {
	w, ok := desired.(map[string]any)
	if !ok {
		return current
	}
	h, _ := current.(map[string]any)
	out := map[string]any{}
	for k, wv := range w {
		if hv, ok := h[k]; ok {
			out[k] = Project(hv, wv)
		}
	}
	return out
}

// specHash identifies a template spec; a rotated template's name suffix derives from it so a
// retried computation picks the same new name.
func specHash(u *unstructured.Unstructured) string {
	b, _ := json.Marshal(u.Object["spec"])
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
