package watcher

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// echo says whether an update is only topoflow's own write coming back through the watch: the
// managedFields entries of topoflow's field managers changed and no one else's did. The pass that
// wrote it already knows what it wrote, so a signal would only run a pass that finds nothing to do
// (on the sample's create, about half of all events). Any doubt is not an echo: no entry changed
// (a write that changed only values a manager already owned leaves the entries as they were), an
// entry of another manager changed (a provider took a field over, or wrote alongside), the
// object was not readable.
func echo(old, cur *unstructured.Unstructured, ours map[string]bool) bool {
	if old == nil || cur == nil || old.GetResourceVersion() == cur.GetResourceVersion() {
		return false
	}
	if (old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil) {
		return false // a delete request records no field owner
	}
	before, after := entries(old), entries(cur)
	if before == nil || after == nil {
		return false
	}
	changed := false
	for key, e := range after {
		if prev, ok := before[key]; ok && sameEntry(prev, e) {
			continue
		}
		if !ours[key.manager] {
			return false
		}
		changed = true
	}
	for key := range before {
		if _, ok := after[key]; !ok {
			if !ours[key.manager] {
				return false
			}
			changed = true
		}
	}
	return changed
}

type entryKey struct{ manager, operation, subresource, apiVersion string }

// entries indexes an object's managedFields; nil when they cannot be read.
func entries(u *unstructured.Unstructured) map[entryKey]metav1.ManagedFieldsEntry {
	if _, found, err := unstructured.NestedFieldNoCopy(u.Object, "metadata", "managedFields"); !found || err != nil {
		return nil
	}
	out := map[entryKey]metav1.ManagedFieldsEntry{}
	for _, e := range u.GetManagedFields() {
		out[entryKey{e.Manager, string(e.Operation), e.Subresource, e.APIVersion}] = e
	}
	return out
}

func sameEntry(a, b metav1.ManagedFieldsEntry) bool {
	if !a.Time.Equal(b.Time) || (a.FieldsV1 == nil) != (b.FieldsV1 == nil) {
		return false
	}
	return a.FieldsV1 == nil || bytes.Equal(a.FieldsV1.Raw, b.FieldsV1.Raw)
}

// ownCreate says whether an added object was written by topoflow alone: every managedFields entry
// is one of topoflow's managers (its create, by the apply that also told the workflow so). A
// provider's write, or an object without managedFields, is not.
func ownCreate(u *unstructured.Unstructured, ours map[string]bool) bool {
	if u == nil || u.GetDeletionTimestamp() != nil {
		return false
	}
	mfs := u.GetManagedFields()
	if len(mfs) == 0 {
		return false
	}
	for _, e := range mfs {
		if !ours[e.Manager] {
			return false
		}
	}
	return true
}
