package revision

import (
	"strings"
	"testing"
)

func TestHandBackRefusals(t *testing.T) {
	revs := []Recorded{{Name: "qs-1", Revision: 1, Hash: "h1"}, {Name: "qs-2", Revision: 2, Hash: "h2"}}
	cases := []struct {
		name      string
		revisions []Recorded
		live      string
		clusters  []Pin
		want      []string // a fragment of each refusal, in order
	}{
		{"no revisions: nothing pinned, nothing to refuse", nil, "h0", []Pin{{Cluster: "ns/a"}}, nil},
		{"every Cluster on the newest", revs, "h2", []Pin{{"ns/a", "qs-2"}, {"ns/b", "qs-2"}}, nil},
		{"one behind", revs, "h2", []Pin{{"ns/a", "qs-2"}, {"ns/b", "qs-1"}}, []string{"Cluster ns/b is on revision qs-1 of ClusterClass ns/qs, behind the newest, qs-2"}},
		{"an edit not recorded yet", revs, "h3", []Pin{{"ns/a", "qs-2"}}, []string{"ClusterClass ns/qs has changes its newest revision, qs-2, does not hold yet"}},
		{"unpinned, and pinned to another class's revision", revs, "h2", []Pin{{"ns/c", ""}, {"ns/d", "other-2"}},
			[]string{"Cluster ns/c (ClusterClass ns/qs) is pinned to no revision", "Cluster ns/d (ClusterClass ns/qs) is pinned to no revision"}},
	}
	for _, c := range cases {
		got := HandBackRefusals("ns", "qs", c.live, c.revisions, c.clusters)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d refusals %q, want %d", c.name, len(got), got, len(c.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], c.want[i]) {
				t.Errorf("%s: refusal %q does not say %q", c.name, got[i], c.want[i])
			}
		}
	}
}
