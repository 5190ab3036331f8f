package revision

import (
	"bytes"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// Stored is a recorded revision turned back into what a computation reads: the class (apiVersion,
// kind, spec, status.variables) and its templates, as objects.
type Stored struct {
	// Name is the revision's name ("<class>-<n>").
	Name      string
	Class     *unstructured.Unstructured
	Templates []*unstructured.Unstructured
}

// Read turns a stored revision back into its content, refusing one whose content does not match
// its spec.hash: a revision edited past its immutability rule (or recorded by another rule) would
// otherwise move every Cluster pinned to it without a Rollout.
func Read(rev *rolloutv1.ClusterClassRevision) (*Stored, error) {
	what := "ClusterClassRevision " + rev.Namespace + "/" + rev.Name
	if err := Verify(rev.Spec); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	typed, err := contentOfSpec(rev.Spec, objectJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out := &Stored{Name: rev.Name, Class: &unstructured.Unstructured{Object: typed.Class}}
	for _, t := range typed.Templates {
		out.Templates = append(out.Templates, &unstructured.Unstructured{Object: t})
	}
	return out, nil
}

// Verify says whether a revision's content still hashes to its spec.hash: one that does not was
// changed after it was recorded (its spec is immutable once created) and is not trusted. Numbers
// are read as written, so the content hashes as it did when recorded.
func Verify(spec rolloutv1.ClusterClassRevisionSpec) error {
	exact, err := contentOfSpec(spec, exactJSON)
	if err != nil {
		return err
	}
	hash, err := Hash(exact)
	if err != nil {
		return err
	}
	if hash != spec.Hash {
		return fmt.Errorf("its content hashes to %s, not to spec.hash %s: it was changed after it was recorded", hash, spec.Hash)
	}
	return nil
}

// contentOfSpec decodes a revision's class and templates with decode.
func contentOfSpec(spec rolloutv1.ClusterClassRevisionSpec, decode func([]byte) (map[string]any, error)) (Content, error) {
	var c Content
	var err error
	if c.Class, err = decode(spec.Class.Raw); err != nil {
		return c, fmt.Errorf("spec.class: %w", err)
	}
	for i, t := range spec.Templates {
		m, err := decode(t.Raw)
		if err != nil {
			return c, fmt.Errorf("spec.templates[%d]: %w", i, err)
		}
		c.Templates = append(c.Templates, m)
	}
	return c, nil
}

// exactJSON decodes an object keeping its numbers as written (json.Number), so that the content
// hashes as it did when recorded.
func exactJSON(raw []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out map[string]any
	if err := d.Decode(&out); err != nil || out == nil {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	return out, nil
}

// objectJSON decodes an object with Kubernetes' number types (int64 or float64).
func objectJSON(raw []byte) (map[string]any, error) {
	var out map[string]any
	if err := utiljson.Unmarshal(raw, &out); err != nil || out == nil {
		return nil, fmt.Errorf("not a JSON object (%v)", err)
	}
	return out, nil
}

// SpecOf is the spec of revision n of class holding content c: what Read turns back into c. The
// recorder stores this; a test that records a revision by hand uses it too.
func SpecOf(class string, n int64, c Content) (rolloutv1.ClusterClassRevisionSpec, error) {
	hash, err := Hash(c)
	if err != nil {
		return rolloutv1.ClusterClassRevisionSpec{}, err
	}
	spec := rolloutv1.ClusterClassRevisionSpec{ClusterClassName: class, Revision: n, Hash: hash}
	if spec.Class.Raw, err = json.Marshal(c.Class); err != nil {
		return spec, fmt.Errorf("encoding the class of revision %s: %w", Name(class, n), err)
	}
	for _, t := range c.Templates {
		raw, err := json.Marshal(t)
		if err != nil {
			return spec, fmt.Errorf("encoding a template of revision %s: %w", Name(class, n), err)
		}
		spec.Templates = append(spec.Templates, apiextensionsv1.JSON{Raw: raw})
	}
	return spec, nil
}

// AppliedLags says whether a Cluster's applied annotation does not yet name the revision its
// topology was just applied from (applied; "" for none): the pass then records it, which is how
// a Rollout sees the Cluster moved (an annotation write bumps no generation).
func AppliedLags(clusterAnnotations map[string]string, applied string) bool {
	return applied != "" && clusterAnnotations[AppliedAnnotation] != applied
}
