package ssa

import (
	"bytes"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// SharedFields lists the fields of an object (as managedFields paths) that one of "ours" managers
// and another manager both own: beside Cluster API each field should have one owner, else the
// two controllers take it from each other. Only leaves count: two managers may each own entries
// of the same map or keyed list (metadata.labels, the v1beta2 conditions).
func SharedFields(mfs []metav1.ManagedFieldsEntry, ours func(manager string) bool) ([]string, error) {
	mine, theirs := &fieldpath.Set{}, &fieldpath.Set{}
	for _, mf := range mfs {
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", mf.Manager, err)
		}
		if ours(mf.Manager) {
			mine = mine.Union(set.Leaves())
		} else {
			theirs = theirs.Union(set.Leaves())
		}
	}
	var out []string
	mine.Intersection(theirs).Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	sort.Strings(out)
	return out, nil
}
