package revision

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestName_neverShared(t *testing.T) {
	// "a" revision 13 and "a-1" revision 3 must not meet, and each parses back only for its class.
	cases := []struct {
		class string
		n     int64
	}{{"a", 13}, {"a-1", 3}, {"a-1-3", 1}, {"quick-start", 2}}
	seen := map[string]string{}
	for _, c := range cases {
		name := Name(c.class, c.n)
		if other, dup := seen[name]; dup {
			t.Fatalf("%s names a revision of %s and of %s", name, other, c.class)
		}
		seen[name] = c.class
		for _, o := range cases {
			n, ok := PinnedTo(map[string]string{PinAnnotation: name}, o.class)
			if want := o.class == c.class; ok != want || (ok && n != c.n) {
				t.Errorf("PinnedTo(%s, class %s) = %d, %v", name, o.class, n, ok)
			}
		}
	}
}

func TestNumber(t *testing.T) {
	for in, want := range map[string]int64{"latest": 0, "1": 1, "42": 42} {
		if got, err := Number(in); err != nil || got != want {
			t.Errorf("Number(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "01", "Latest", "1.5", "v2"} {
		if _, err := Number(in); err == nil {
			t.Errorf("Number(%q) accepted", in)
		}
	}
}

func TestHistory(t *testing.T) {
	if n, err := History(nil); err != nil || n != DefaultHistory {
		t.Errorf("History(nil) = %d, %v", n, err)
	}
	if n, err := History(map[string]string{HistoryAnnotation: "2"}); err != nil || n != 2 {
		t.Errorf("History(2) = %d, %v", n, err)
	}
	for _, bad := range []string{"0", "x", "-3"} {
		if _, err := History(map[string]string{HistoryAnnotation: bad}); err == nil || !strings.Contains(err.Error(), HistoryAnnotation) {
			t.Errorf("History(%q) = %v; want an error naming the annotation", bad, err)
		}
	}
}

func obj(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "spec": spec}}
	u.SetName(name)
	u.SetNamespace("default")
	return u
}

func TestContentOf_hashFollowsWhatTheComputationReads(t *testing.T) {
	class := obj("cluster.x-k8s.io/v1beta1", "ClusterClass", "quick-start", map[string]any{"infrastructure": map[string]any{"ref": map[string]any{"name": "t1"}}})
	class.Object["status"] = map[string]any{"variables": []any{map[string]any{"name": "region"}}, "observedGeneration": int64(3)}
	t1 := obj("infra/v1", "DockerClusterTemplate", "t1", map[string]any{"template": map[string]any{"spec": map[string]any{"a": "b"}}})
	t2 := obj("infra/v1", "DockerMachineTemplate", "t0", map[string]any{"template": map[string]any{}})
	base := mustHash(t, ContentOf(class, []*unstructured.Unstructured{t1, t2}))

	// Order of the templates, status other than variables, resourceVersion, last-applied: no change.
	same := class.DeepCopy()
	same.SetResourceVersion("99")
	same.Object["status"].(map[string]any)["observedGeneration"] = int64(4)
	t1b := t1.DeepCopy()
	t1b.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"})
	t1b.SetResourceVersion("7")
	if got := mustHash(t, ContentOf(same, []*unstructured.Unstructured{t2, t1b})); got != base {
		t.Errorf("hash changed with nothing the computation reads: %s != %s", got, base)
	}
	// A template edited in place, a label on a template, a class spec edit, a variable: a change.
	edits := map[string]func(c *unstructured.Unstructured, ts []*unstructured.Unstructured){
		"template spec": func(_ *unstructured.Unstructured, ts []*unstructured.Unstructured) {
			ts[0].Object["spec"] = map[string]any{"x": "y"}
		},
		"template labels": func(_ *unstructured.Unstructured, ts []*unstructured.Unstructured) {
			ts[0].SetLabels(map[string]string{"l": "v"})
		},
		"class spec": func(c *unstructured.Unstructured, _ []*unstructured.Unstructured) {
			c.Object["spec"] = map[string]any{}
		},
		"class variables": func(c *unstructured.Unstructured, _ []*unstructured.Unstructured) {
			c.Object["status"] = map[string]any{"variables": []any{}}
		},
	}
	for name, edit := range edits {
		c, ts := class.DeepCopy(), []*unstructured.Unstructured{t1.DeepCopy(), t2.DeepCopy()}
		edit(c, ts)
		if got := mustHash(t, ContentOf(c, ts)); got == base {
			t.Errorf("%s: hash did not change", name)
		}
	}
}

func mustHash(t *testing.T, c Content) string {
	t.Helper()
	h, err := Hash(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "sha256:") || len(h) != 7+64 {
		t.Fatalf("hash %q", h)
	}
	return h
}

func TestNext(t *testing.T) {
	revs := []Recorded{{Name: "c-1", Revision: 1, Hash: "h1"}, {Name: "c-3", Revision: 3, Hash: "h3"}, {Name: "c-2", Revision: 2, Hash: "h2"}}
	cases := []struct {
		name     string
		existing []Recorded
		hash     string
		record   bool
		n        int64
	}{
		{"first", nil, "h1", true, 1},
		{"newest holds it", revs, "h3", false, 3},
		{"new content", revs, "h4", true, 4},
		{"reverted to an older content", revs, "h1", true, 4},
	}
	for _, c := range cases {
		record, n := Next(c.existing, c.hash)
		if record != c.record || n != c.n {
			t.Errorf("%s: Next = %v, %d; want %v, %d", c.name, record, n, c.record, c.n)
		}
	}
}

func TestPrune(t *testing.T) {
	revs := []Recorded{
		{Name: "c-1", Revision: 1, Clusters: 2},
		{Name: "c-2", Revision: 2},
		{Name: "c-3", Revision: 3},
		{Name: "c-4", Revision: 4, Clusters: 1},
		{Name: "c-5", Revision: 5},
		{Name: "c-6", Revision: 6},
	}
	cases := []struct {
		keep int
		want []string
	}{
		{5, []string{}},
		{2, []string{"c-3", "c-2"}},
		{1, []string{"c-5", "c-3", "c-2"}},
		{0, []string{"c-5", "c-3", "c-2"}}, // the newest is always kept
	}
	for _, c := range cases {
		got := Prune(revs, c.keep)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("Prune(keep %d) = %v; want %v", c.keep, got, c.want)
		}
	}
}
