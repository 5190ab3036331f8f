package revision

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// TestSpecOf_storedContentKeepsItsHash: a revision written and read back through the API server's
// JSON (numbers come back as float64 or int64) still hashes to its spec.hash, and one whose
// content was changed does not.
func TestSpecOf_storedContentKeepsItsHash(t *testing.T) {
	class := obj("cluster.x-k8s.io/v1beta1", "ClusterClass", "quick-start", map[string]any{
		"controlPlane": map[string]any{"replicas": int64(3), "ratio": 0.5, "note": "<a&b>"},
	})
	class.Object["status"] = map[string]any{"variables": []any{map[string]any{"name": "region"}}}
	tmpl := obj("infra/v1", "SimMachineTemplate", "workers", map[string]any{"template": map[string]any{"spec": map[string]any{"cpus": int64(4)}}})
	tmpl.SetLabels(map[string]string{"tier": "gold"})
	content := ContentOf(class, []*unstructured.Unstructured{tmpl})
	hash := mustHash(t, content)

	spec, err := SpecOf("quick-start", 2, content)
	if err != nil {
		t.Fatal(err)
	}
	if spec.ClusterClassName != "quick-start" || spec.Revision != 2 || spec.Hash != hash || len(spec.Templates) != 1 {
		t.Fatalf("Spec = %+v", spec)
	}
	read := roundTrip(t, spec)
	if err := Verify(read); err != nil {
		t.Errorf("Verify of a revision as written: %v", err)
	}

	cases := map[string]func(s *rolloutv1.ClusterClassRevisionSpec){
		"class edited": func(s *rolloutv1.ClusterClassRevisionSpec) {
			s.Class.Raw = []byte(strings.Replace(string(s.Class.Raw), `"replicas":3`, `"replicas":5`, 1))
		},
		"template dropped": func(s *rolloutv1.ClusterClassRevisionSpec) { s.Templates = nil },
		"hash of another": func(s *rolloutv1.ClusterClassRevisionSpec) {
			s.Hash = "sha256:" + strings.Repeat("0", 64)
		},
		"not JSON": func(s *rolloutv1.ClusterClassRevisionSpec) { s.Class.Raw = []byte("{") },
	}
	for name, edit := range cases {
		s := *read.DeepCopy()
		edit(&s)
		if err := Verify(s); err == nil {
			t.Errorf("%s: Verify accepted it", name)
		}
	}
}

// roundTrip sends a spec through what the API server and the dynamic client do to it: JSON out,
// unstructured (int64 numbers) in, then the typed form.
func roundTrip(t *testing.T, spec rolloutv1.ClusterClassRevisionSpec) rolloutv1.ClusterClassRevisionSpec {
	t.Helper()
	js, err := json.Marshal(rolloutv1.ClusterClassRevision{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(append(js[:len(js)-1], []byte(`,"apiVersion":"topoflow.dev/v1alpha1","kind":"ClusterClassRevision"}`)...)); err != nil {
		t.Fatal(err)
	}
	var out rolloutv1.ClusterClassRevision
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &out); err != nil {
		t.Fatal(err)
	}
	return out.Spec
}

func TestUnpinnedAndCount(t *testing.T) {
	clusters := map[string]map[string]string{
		"a": {PinAnnotation: "qs-1"},
		"b": {PinAnnotation: "qs-2"},
		"c": {},                           // never pinned
		"d": {PinAnnotation: "other-1"},   // pinned to the class it was rebased from
		"e": {PinAnnotation: "qs-latest"}, // not a revision name
		"f": {PinAnnotation: "qs-1"},
	}
	if got := strings.Join(Unpinned(clusters, "qs"), ","); got != "c,d,e" {
		t.Errorf("Unpinned = %s; want c,d,e", got)
	}
	revs := []Recorded{{Name: "qs-1", Revision: 1}, {Name: "qs-2", Revision: 2}, {Name: "qs-3", Revision: 3, Clusters: 7}}
	Count(revs, clusters, "qs")
	for i, want := range []int{2, 1, 0} {
		if revs[i].Clusters != want {
			t.Errorf("%s: Clusters = %d; want %d", revs[i].Name, revs[i].Clusters, want)
		}
	}
}

func TestStatuses(t *testing.T) {
	cases := []struct {
		name     string
		existing []Recorded
		want     map[string]rolloutv1.ClusterClassRevisionStatus
	}{
		{"none", nil, map[string]rolloutv1.ClusterClassRevisionStatus{}},
		{"the newest is latest, whatever the order", []Recorded{{Name: "qs-3", Revision: 3}, {Name: "qs-1", Revision: 1, Clusters: 2}},
			map[string]rolloutv1.ClusterClassRevisionStatus{"qs-3": {Latest: true}, "qs-1": {Clusters: 2}}},
	}
	for _, c := range cases {
		got := Statuses(c.existing)
		if len(got) != len(c.want) {
			t.Errorf("%s: Statuses = %v; want %v", c.name, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: Statuses[%s] = %+v; want %+v", c.name, k, got[k], v)
			}
		}
	}
}

func TestNextNumber(t *testing.T) {
	cases := []struct {
		n     int64
		taken []int64
		want  int64
	}{
		{1, nil, 1},
		{3, []int64{1}, 3},
		{3, []int64{3}, 4},
		{2, []int64{5, 3}, 6},
		{2, []int64{2, 3}, 4},
	}
	for _, c := range cases {
		if got := NextNumber(c.n, c.taken); got != c.want {
			t.Errorf("NextNumber(%d, %v) = %d; want %d", c.n, c.taken, got, c.want)
		}
	}
}
