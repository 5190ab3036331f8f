// Package decode turns manifests (YAML or JSON, one or many documents) into typed objects.
// Decoding is strict: an unknown or duplicated field is an error that names its full path, so
// a typo in a ClusterClass is caught instead of silently dropped.
package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// FieldError lists the unknown or duplicate fields found while decoding one object.
type FieldError struct {
	// Object is "Kind namespace/name" (or "document N" when it has no kind).
	Object string
	// Fields are full paths such as spec.topology.controlPlane.labels.
	Problems []string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %s", e.Object, strings.Join(e.Problems, "; "))
}

// Strict decodes one YAML or JSON document into out, failing on unknown or duplicate fields.
func Strict(data []byte, out any) error {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return fmt.Errorf("not valid YAML or JSON: %w", err)
	}
	return StrictJSON(js, out)
}

// StrictJSON decodes one JSON document into out, failing on unknown or duplicate fields.
func StrictJSON(js []byte, out any) error {
	strictErrs, err := kjson.UnmarshalStrict(js, out, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return err
	}
	if len(strictErrs) > 0 {
		fe := &FieldError{Object: describe(js)}
		for _, e := range strictErrs {
			fe.Problems = append(fe.Problems, e.Error())
		}
		return fe
	}
	return nil
}

// FromUnstructured strictly converts an unstructured object into a typed one.
func FromUnstructured(u *unstructured.Unstructured, out any) error {
	js, err := u.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return StrictJSON(js, out)
}

// Lenient converts an unstructured object read from the API server into a typed one. A field
// the types do not know (a newer Cluster API adds fields) or a duplicate is not an error: the
// rest is decoded, and the problems come back as a FieldError warning (nil when none). Files an
// operator hands over (plan -f) are decoded strictly instead.
func Lenient(u *unstructured.Unstructured, out any) (warning *FieldError, err error) {
	js, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	strictErrs, err := kjson.UnmarshalStrict(js, out, kjson.DisallowUnknownFields, kjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) == 0 {
		return nil, nil
	}
	fe := &FieldError{Object: describe(js)}
	for _, e := range strictErrs {
		fe.Problems = append(fe.Problems, e.Error())
	}
	return fe, nil
}

// Documents splits a multi-document YAML (or a JSON stream) into unstructured objects,
// skipping empty documents. A kubectl-style List is expanded into its items.
func Documents(r io.Reader) ([]*unstructured.Unstructured, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		js, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: not valid YAML: %w", i, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if u.IsList() {
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			for j := range list.Items {
				out = append(out, &list.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// describe names the object in a JSON document for error messages.
func describe(js []byte) string {
	var meta struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &meta); err != nil || meta.Kind == "" {
		return "object"
	}
	name := meta.Metadata.Name
	if meta.Metadata.Namespace != "" {
		name = meta.Metadata.Namespace + "/" + name
	}
	return meta.Kind + " " + name
}
