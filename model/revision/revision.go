// Package revision holds the rules of ClusterClass revisions (issue #38): when a class's content
// makes a new revision, what a revision is named and holds, which revision a Cluster is pinned to,
// and which revisions are pruned. A class opts in with an annotation; Cluster API knows none of
// this, so everything lives in topoflow.dev objects and annotations. No I/O here.
package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// EnabledAnnotation on a ClusterClass opts it in to revisions (value "enabled").
	EnabledAnnotation = "topoflow.dev/class-revisions"
	// Enabled is EnabledAnnotation's value that opts in.
	Enabled = "enabled"
	// HistoryAnnotation on a ClusterClass sets how many unused revisions are kept (default
	// DefaultHistory).
	HistoryAnnotation = "topoflow.dev/class-revision-history"
	// DefaultHistory is how many of the newest revisions are kept beside those in use.
	DefaultHistory = 5
	// PinAnnotation on a Cluster names the ClusterClassRevision its topology is computed from.
	PinAnnotation = "topoflow.dev/class-revision"
	// AppliedAnnotation on a Cluster names the revision its topology was last applied from:
	// equal to PinAnnotation once the Cluster's workflow applied a move.
	AppliedAnnotation = "topoflow.dev/class-revision-applied"
	// ClassLabel on a ClusterClassRevision names its class, so a class's revisions list by label.
	ClassLabel = "topoflow.dev/cluster-class"
	// Latest is the classRevision of a change that moves to the class's newest revision.
	Latest = "latest"
)

// On says whether a ClusterClass (its annotations) opted in to revisions.
func On(classAnnotations map[string]string) bool {
	return classAnnotations[EnabledAnnotation] == Enabled
}

// History is how many unused revisions of a class are kept: its HistoryAnnotation, or
// DefaultHistory when absent; an invalid value is an error naming the annotation.
func History(classAnnotations map[string]string) (int, error) {
	v, ok := classAnnotations[HistoryAnnotation]
	if !ok {
		return DefaultHistory, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("metadata.annotations[%s]: %q is not a whole number of 1 or more", HistoryAnnotation, v)
	}
	return n, nil
}

// Name is the name of revision n of a class: "<class>-<n>". The revision number never holds a
// dash, so two classes never share a revision name.
func Name(class string, n int64) string { return class + "-" + strconv.FormatInt(n, 10) }

// Number parses what a change names ("latest" or a number of 1 or more): 0 for latest.
func Number(classRevision string) (int64, error) {
	if classRevision == Latest {
		return 0, nil
	}
	n, err := strconv.ParseInt(classRevision, 10, 64)
	if err != nil || n < 1 || strings.HasPrefix(classRevision, "0") {
		return 0, fmt.Errorf("%q: want %q or a revision number of 1 or more", classRevision, Latest)
	}
	return n, nil
}

// Content is what a revision records: the class (apiVersion, kind, spec, status.variables) and
// each referenced template (apiVersion, kind, metadata.name/labels/annotations, spec), sorted.
type Content struct {
	Class     map[string]any   `json:"class"`
	Templates []map[string]any `json:"templates,omitempty"`
}

// ContentOf keeps of a class and its templates what a revision records: what the computation of a
// Cluster's topology reads of them, and nothing that changes on its own (status, resourceVersion,
// managed fields).
func ContentOf(class *unstructured.Unstructured, templates []*unstructured.Unstructured) Content {
	c := Content{Class: map[string]any{"apiVersion": class.GetAPIVersion(), "kind": class.GetKind()}}
	if spec, ok := class.Object["spec"]; ok {
		c.Class["spec"] = spec
	}
	if vars, ok, _ := unstructured.NestedFieldNoCopy(class.Object, "status", "variables"); ok {
		c.Class["status"] = map[string]any{"variables": vars}
	}
	for _, t := range templates {
		meta := map[string]any{"name": t.GetName()}
		if l, _, _ := unstructured.NestedMap(t.Object, "metadata", "labels"); len(l) > 0 {
			meta["labels"] = l
		}
		a, _, _ := unstructured.NestedMap(t.Object, "metadata", "annotations")
		// Noise: how the template was written, not what it is.
		delete(a, "kubectl.kubernetes.io/last-applied-configuration")
		if len(a) > 0 {
			meta["annotations"] = a
		}
		o := map[string]any{"apiVersion": t.GetAPIVersion(), "kind": t.GetKind(), "metadata": meta}
		if spec, ok := t.Object["spec"]; ok {
			o["spec"] = spec
		}
		c.Templates = append(c.Templates, o)
	}
	sort.SliceStable(c.Templates, func(i, j int) bool { return templateKey(c.Templates[i]) < templateKey(c.Templates[j]) })
	return c
}

func templateKey(t map[string]any) string {
	u := unstructured.Unstructured{Object: t}
	return u.GetAPIVersion() + "/" + u.GetKind() + "/" + u.GetName()
}

// Hash is "sha256:" and the hex digest of the content's JSON (keys sorted by encoding/json): the
// same content always has the same hash.
func Hash(c Content) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("hashing the class revision content: %w", err)
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Recorded is what the decisions read of an existing revision.
type Recorded struct {
	Name     string
	Revision int64
	Hash     string
	// Clusters pinned to it.
	Clusters int
}

// Next says whether content with hash makes a new revision, and its number: not when the newest
// revision already holds it (an edit reverted to an older content is a new revision, as the
// newest is what new Clusters get).
func Next(existing []Recorded, hash string) (bool, int64) {
	newest := Newest(existing)
	if newest == nil {
		return true, 1
	}
	if newest.Hash == hash {
		return false, newest.Revision
	}
	return true, newest.Revision + 1
}

// Newest is the revision with the highest number (nil: none).
func Newest(existing []Recorded) *Recorded {
	var out *Recorded
	for i := range existing {
		if out == nil || existing[i].Revision > out.Revision {
			out = &existing[i]
		}
	}
	return out
}

// Prune names the revisions to delete: those no Cluster is pinned to, beyond the newest keep
// revisions. The newest is never pruned, nor one in use.
func Prune(existing []Recorded, keep int) []string {
	sorted := slices.Clone(existing)
	slices.SortFunc(sorted, func(a, b Recorded) int { return int(b.Revision - a.Revision) })
	var out []string
	for i, r := range sorted {
		if i >= max(keep, 1) && r.Clusters == 0 {
			out = append(out, r.Name)
		}
	}
	return out
}

// PinnedTo is the revision of class a Cluster (its annotations) is pinned to; false when it is
// pinned to none of this class's (never pinned, or pinned to a revision of the class it was
// rebased from).
func PinnedTo(clusterAnnotations map[string]string, class string) (int64, bool) {
	return numberOf(clusterAnnotations[PinAnnotation], class)
}

// numberOf parses a revision name of class ("<class>-<n>").
func numberOf(name, class string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, class+"-")
	if !ok {
		return 0, false
	}
	n, err := Number(rest)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}
