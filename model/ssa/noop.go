// Package ssa decides, without asking the API server, whether a server-side apply would change
// anything. A pass that finds every object as its intent wants it then sends no request at all.
//
// The decision reads the live object's managedFields as structured-merge-diff records them: the
// set of fields the manager owns and their values, typed by the resource's OpenAPI schema (so
// associative lists are compared by key, not as atomic lists, and fields the server defaulted or
// other managers own do not count as changes).
package ssa

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// TypeConverter types objects by their schema (managedfields.NewTypeConverter over the API
// server's OpenAPI v3 documents).
type TypeConverter = managedfields.TypeConverter

// notRecorded are the fields the API server never records as owned (its stripmeta step): an
// intent names them to identify the object, not to own them.
var notRecorded = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// Unchanged reports whether server-side applying intent as manager (to the main resource when
// subresource is "", else to that subresource) would leave live exactly as it is: live records an
// apply by manager whose owned fields are exactly the intent's, each holding the intent's value.
// Then the apply would change neither a value nor an owner, and the API server would not write.
// Any doubt (no record, a schema that does not type the object) answers false: apply.
func Unchanged(tc TypeConverter, intent, live *unstructured.Unstructured, manager, subresource string) (bool, error) {
	if live == nil || live.GetDeletionTimestamp() != nil {
		return false, nil
	}
	if uid := intent.GetUID(); uid != "" && uid != live.GetUID() {
		return false, nil // an intent for another object of that name: the API server decides
	}
	owned, ok, err := ownedFields(live, manager, subresource, intent.GetAPIVersion())
	if err != nil {
		return false, err
	}
	want, err := tc.ObjectToTyped(intent, typed.AllowDuplicates)
	if err != nil {
		return false, fmt.Errorf("typing the intent of %s %s: %w", intent.GetKind(), intent.GetName(), err)
	}
	wantSet, err := want.ToFieldSet()
	if err != nil {
		return false, fmt.Errorf("fields of the intent of %s %s: %w", intent.GetKind(), intent.GetName(), err)
	}
	wantSet = wantSet.Difference(notRecorded)
	if !ok {
		// No record: the manager owns nothing. Only an intent that sets nothing changes nothing.
		return wantSet.Empty(), nil
	}
	if !wantSet.Equals(owned.Difference(notRecorded)) {
		return false, nil
	}
	have, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return false, fmt.Errorf("typing %s %s: %w", live.GetKind(), live.GetName(), err)
	}
	leaves := wantSet.Leaves()
	cmp, err := have.ExtractItems(leaves).Compare(want.ExtractItems(leaves))
	if err != nil {
		return false, fmt.Errorf("comparing %s %s with its intent: %w", live.GetKind(), live.GetName(), err)
	}
	return cmp.IsSame(), nil
}

// ownedFields is the field set live's managedFields record for an apply by manager. A record
// made in another API version than apiVersion does not count: the apply would rewrite it (the
// fields are recorded in the version they were applied in).
func ownedFields(live *unstructured.Unstructured, manager, subresource, apiVersion string) (*fieldpath.Set, bool, error) {
	for _, mf := range live.GetManagedFields() {
		if mf.Manager != manager || mf.Operation != metav1.ManagedFieldsOperationApply || mf.Subresource != subresource || mf.FieldsV1 == nil {
			continue
		}
		if mf.APIVersion != apiVersion {
			return nil, false, nil
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(mf.FieldsV1.GetRawReader()); err != nil {
			return nil, false, fmt.Errorf("managedFields of %s %s for %s: %w", live.GetKind(), live.GetName(), manager, err)
		}
		return set, true, nil
	}
	return nil, false, nil
}
