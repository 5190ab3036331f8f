package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// takeData reads the conversion data an object served as v1beta1 carries into restored and
// removes the annotation from meta (util/conversion.UnmarshalData). It says whether there was any.
func takeData(meta *metav1.ObjectMeta, restored any) (bool, error) {
	data, ok := meta.Annotations[DataAnnotation]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(data), restored); err != nil {
		return false, fmt.Errorf("%s/%s annotation %s: %w", meta.Namespace, meta.Name, DataAnnotation, err)
	}
	rest := make(map[string]string, len(meta.Annotations))
	for k, v := range meta.Annotations {
		if k != DataAnnotation {
			rest[k] = v
		}
	}
	if len(rest) == 0 {
		rest = nil
	}
	meta.Annotations = rest
	return true, nil
}

// putData keeps the v1beta2 object hub, without its metadata, in the v1beta1 object's
// annotations, so converting back restores what v1beta1 cannot say
// (util/conversion.MarshalDataUnsafeNoCopy). hub is marshalled as given: the caller passes a copy
// whose metadata it has emptied.
func putData(hub any, meta *metav1.ObjectMeta) error {
	data, err := json.Marshal(hub)
	if err != nil {
		return err
	}
	data = bytes.Replace(data, []byte(`"metadata":{},`), nil, 1)
	annotations := make(map[string]string, len(meta.Annotations)+1)
	for k, v := range meta.Annotations {
		annotations[k] = v
	}
	annotations[DataAnnotation] = string(data)
	meta.Annotations = annotations
	return nil
}

// parse reads an object's JSON as an unstructured object holds it (whole numbers as int64).
func parse(js []byte) (map[string]any, error) {
	var in map[string]any
	if err := utiljson.Unmarshal(js, &in); err != nil {
		return nil, err
	}
	return in, nil
}

// decode reads an object's JSON map into a typed object: field names as written (as the API
// server's decoder reads them), fields the type does not know dropped.
func decode(in map[string]any, typed any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(in, typed)
}

// toMap turns a typed object into its JSON map, whole numbers as int64 as in an unstructured
// object read from the API server (encoding/json's float64 would read as absent to
// unstructured's NestedInt64: a generation of 0, no replicas). apimachinery's converter walks
// the object once, where a JSON round trip encodes and decodes it.
func toMap(obj any) (map[string]any, error) {
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// dropEmpty turns a pointer to "" into nil (v1beta1 keeps optional strings as pointers).
func dropEmpty(s **string) {
	if *s != nil && **s == "" {
		*s = nil
	}
}
