package revision

import (
	"encoding/json"
	"fmt"
	"sort"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// FieldManager is the field manager revisions are created, and Clusters pinned, under. It is not
// one of the managers whose writes the starter takes for a Cluster workflow's own echo: a pin
// changes what the Cluster's topology is computed from, so its workflow must see it.
const FieldManager = "topoflow-class-revisions"

// Spec is the spec of revision n of class holding content (whose hash is given).
func Spec(class string, n int64, c Content, hash string) (rolloutv1.ClusterClassRevisionSpec, error) {
	spec := rolloutv1.ClusterClassRevisionSpec{ClusterClassName: class, Revision: n, Hash: hash}
	raw, err := json.Marshal(c.Class)
	if err != nil {
		return spec, fmt.Errorf("revision %s: spec.class: %w", Name(class, n), err)
	}
	spec.Class = apiextensionsv1.JSON{Raw: raw}
	for i, t := range c.Templates {
		raw, err := json.Marshal(t)
		if err != nil {
			return spec, fmt.Errorf("revision %s: spec.templates[%d]: %w", Name(class, n), i, err)
		}
		spec.Templates = append(spec.Templates, apiextensionsv1.JSON{Raw: raw})
	}
	return spec, nil
}

// Stored is the content a revision's spec holds.
func Stored(spec rolloutv1.ClusterClassRevisionSpec) (Content, error) {
	var c Content
	if err := json.Unmarshal(spec.Class.Raw, &c.Class); err != nil {
		return c, fmt.Errorf("spec.class: %w", err)
	}
	for i, t := range spec.Templates {
		var m map[string]any
		if err := json.Unmarshal(t.Raw, &m); err != nil {
			return c, fmt.Errorf("spec.templates[%d]: %w", i, err)
		}
		c.Templates = append(c.Templates, m)
	}
	return c, nil
}

// Verify says whether a revision's content still hashes to its spec.hash: one that does not was
// written by hand (its spec is immutable once created) and is not trusted.
func Verify(spec rolloutv1.ClusterClassRevisionSpec) error {
	c, err := Stored(spec)
	if err != nil {
		return err
	}
	got, err := Hash(c)
	if err != nil {
		return err
	}
	if got != spec.Hash {
		return fmt.Errorf("its content hashes to %s, not to spec.hash %s", got, spec.Hash)
	}
	return nil
}

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
