package revision

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// stored is a revision as the API server returns it: SpecOf's spec, through JSON.
func stored(t *testing.T, c Content) *rolloutv1.ClusterClassRevision {
	t.Helper()
	spec, err := SpecOf("quick-start", 2, c)
	if err != nil {
		t.Fatal(err)
	}
	rev := &rolloutv1.ClusterClassRevision{Spec: spec}
	rev.Namespace, rev.Name = "default", Name("quick-start", 2)
	b, err := json.Marshal(rev)
	if err != nil {
		t.Fatal(err)
	}
	out := &rolloutv1.ClusterClassRevision{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func sample() Content {
	class := obj("cluster.x-k8s.io/v1beta1", "ClusterClass", "quick-start", map[string]any{"workers": map[string]any{"replicas": int64(3), "ratio": 0.5}})
	class.Object["status"] = map[string]any{"variables": []any{map[string]any{"name": "region"}}}
	t1 := obj("infra/v1", "DockerMachineTemplate", "md", map[string]any{"template": map[string]any{"spec": map[string]any{"cpus": int64(2), "url": "a<b&c"}}})
	t1.SetLabels(map[string]string{"l": "v"})
	return ContentOf(class, []*unstructured.Unstructured{t1})
}

func TestRead_givesBackWhatWasRecorded(t *testing.T) {
	c := sample()
	got, err := Read(stored(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "quick-start-2" {
		t.Errorf("Name = %q", got.Name)
	}
	if !reflect.DeepEqual(got.Class.Object, c.Class) {
		t.Errorf("class = %v; want %v", got.Class.Object, c.Class)
	}
	if len(got.Templates) != 1 || !reflect.DeepEqual(got.Templates[0].Object, c.Templates[0]) {
		t.Errorf("templates = %v; want %v", got.Templates, c.Templates)
	}
	// Numbers come back as Kubernetes' types, so the objects deep-copy and convert.
	if n, _, _ := unstructured.NestedInt64(got.Templates[0].Object, "spec", "template", "spec", "cpus"); n != 2 {
		t.Errorf("cpus = %v", got.Templates[0].Object)
	}
	_ = got.Class.DeepCopy()
}

func TestRead_refusesContentNotMatchingItsHash(t *testing.T) {
	cases := map[string]func(r *rolloutv1.ClusterClassRevision){
		"template edited": func(r *rolloutv1.ClusterClassRevision) {
			r.Spec.Templates[0].Raw = []byte(strings.Replace(string(r.Spec.Templates[0].Raw), `"cpus":2`, `"cpus":4`, 1))
		},
		"class edited": func(r *rolloutv1.ClusterClassRevision) {
			r.Spec.Class.Raw = []byte(`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterClass","spec":{}}`)
		},
		"template dropped": func(r *rolloutv1.ClusterClassRevision) { r.Spec.Templates = nil },
		"hash changed":     func(r *rolloutv1.ClusterClassRevision) { r.Spec.Hash = "sha256:" + strings.Repeat("0", 64) },
	}
	for name, edit := range cases {
		rev := stored(t, sample())
		edit(rev)
		_, err := Read(rev)
		if err == nil || !strings.Contains(err.Error(), "ClusterClassRevision default/quick-start-2") || !strings.Contains(err.Error(), "spec.hash") {
			t.Errorf("%s: Read = %v; want a refusal naming the revision and its hash", name, err)
		}
	}
}

func TestRead_refusesWhatIsNotAnObject(t *testing.T) {
	rev := stored(t, sample())
	rev.Spec.Class.Raw = []byte(`[1]`)
	if _, err := Read(rev); err == nil || !strings.Contains(err.Error(), "spec.class") {
		t.Errorf("Read = %v; want an error naming spec.class", err)
	}
}

func TestAppliedLags(t *testing.T) {
	cases := []struct {
		annotations map[string]string
		applied     string
		want        bool
	}{
		{nil, "", false},
		{nil, "c-1", true},
		{map[string]string{AppliedAnnotation: "c-1"}, "c-1", false},
		{map[string]string{AppliedAnnotation: "c-1"}, "c-2", true},
	}
	for _, c := range cases {
		if got := AppliedLags(c.annotations, c.applied); got != c.want {
			t.Errorf("AppliedLags(%v, %q) = %v", c.annotations, c.applied, got)
		}
	}
}
