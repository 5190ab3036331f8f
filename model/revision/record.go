package revision

import (
	"sort"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// FieldManager is the field manager revisions are created under, and a Cluster's revision
// annotations (pin, applied) are written under. It is not
// one of the managers whose writes the starter takes for a Cluster workflow's own echo: a pin
// changes what the Cluster's topology is computed from, so its workflow must see it.
const FieldManager = "topoflow-class-revisions"

// Unpinned names the Clusters (name: annotations) pinned to no revision of class, sorted: those
// the recorder pins to the class's newest revision.
func Unpinned(clusters map[string]map[string]string, class string) []string {
	var out []string
	for name, annotations := range clusters {
		if _, ok := PinnedTo(annotations, class); !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Count sets each revision's Clusters: how many of the Clusters (name: annotations) are pinned
// to it.
func Count(existing []Recorded, clusters map[string]map[string]string, class string) {
	by := map[int64]int{}
	for _, annotations := range clusters {
		if n, ok := PinnedTo(annotations, class); ok {
			by[n]++
		}
	}
	for i := range existing {
		existing[i].Clusters = by[existing[i].Revision]
	}
}

// Statuses is the status each revision (by name) should have: the Clusters pinned to it, and
// whether it is the newest.
func Statuses(existing []Recorded) map[string]rolloutv1.ClusterClassRevisionStatus {
	out := make(map[string]rolloutv1.ClusterClassRevisionStatus, len(existing))
	newest := Newest(existing)
	for _, r := range existing {
		out[r.Name] = rolloutv1.ClusterClassRevisionStatus{Clusters: int32(r.Clusters), Latest: r.Name == newest.Name}
	}
	return out
}

// NextNumber is the number a new revision gets after Next chose n: above every revision that
// exists (taken gives the numbers of revisions not trusted, which Next did not see), so a
// create never meets an existing name.
func NextNumber(n int64, taken []int64) int64 {
	for _, t := range taken {
		if t >= n {
			n = t + 1
		}
	}
	return n
}
