package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/topoflow/topoflow/model/revision"
)

// A classRevision change moves Clusters between the recorded revisions of their ClusterClass
// (model/revision). Its revision number is per class, so the rollout's Clusters must share one
// class, and the revision it names must exist when the rollout starts.

// OneClass is the class ("namespace/name") every selected Cluster is of (classOf: the class of
// each Cluster, by key; "" for a Cluster without a topology), or why a classRevision change
// cannot move them.
func OneClass(classOf map[string]string) (string, string) {
	byClass := map[string][]string{}
	for key, class := range classOf {
		if class == "" {
			class = "no ClusterClass"
		}
		byClass[class] = append(byClass[class], key)
	}
	if len(byClass) == 1 {
		for class := range byClass {
			if class != "no ClusterClass" {
				return class, ""
			}
		}
	}
	var parts []string
	for _, class := range slices.Sorted(maps.Keys(byClass)) {
		slices.Sort(byClass[class])
		parts = append(parts, class+": "+ListSome(byClass[class], 3))
	}
	return "", "spec.change.classRevision moves Clusters between the revisions of one ClusterClass; the selected Clusters are of " + strings.Join(parts, "; ")
}

// ResolveClassRevision is the revision number a classRevision change moves to ("latest": the
// newest recorded), or why it cannot start: class ("namespace/name", opted in: on) has no such
// revision.
func ResolveClassRevision(classRevision, class string, on bool, recorded []revision.Recorded) (int64, string) {
	if !on {
		return 0, fmt.Sprintf("spec.change.classRevision: ClusterClass %s has not opted in to revisions (annotation %s: %q)", class, revision.EnabledAnnotation, revision.Enabled)
	}
	n, err := revision.Number(classRevision)
	if err != nil {
		return 0, "spec.change.classRevision: " + err.Error()
	}
	if n == 0 {
		newest := revision.Newest(recorded)
		if newest == nil {
			return 0, fmt.Sprintf("spec.change.classRevision %s: ClusterClass %s has no revision recorded yet", revision.Latest, class)
		}
		return newest.Revision, ""
	}
	var numbers []int64
	for _, r := range recorded {
		if r.Revision == n {
			return n, ""
		}
		numbers = append(numbers, r.Revision)
	}
	slices.Sort(numbers)
	have := []string{"none"}
	if len(numbers) > 0 {
		have = strings.Fields(strings.Trim(fmt.Sprint(numbers), "[]"))
	}
	_, name, _ := strings.Cut(class, "/")
	return 0, fmt.Sprintf("spec.change.classRevision %d: ClusterClass %s has no revision %d (no ClusterClassRevision %s; recorded: %s)",
		n, class, n, revision.Name(name, n), ListSome(have, 10))
}
