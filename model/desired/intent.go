package desired

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ToIntent converts a typed object into the unstructured body of a server-side apply request.
// Only the fields topoflow means to own are kept: apiVersion, kind, metadata name, namespace,
// labels, annotations and ownerReferences, and spec. Status and server-set metadata are dropped
// so the apply neither claims nor clears them.
func ToIntent(obj any) (*unstructured.Unstructured, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("converting to unstructured: %w", err)
	}
	return Intent(u), nil
}

// Intent trims an unstructured object to the fields topoflow applies (see ToIntent).
func Intent(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		out.SetAnnotations(a)
	}
	if o := u.GetOwnerReferences(); len(o) > 0 {
		out.SetOwnerReferences(o)
	}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = runtimeDeepCopy(spec)
	}
	return out
}
