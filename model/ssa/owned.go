package ssa

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Applying one change after another as the same field manager.
//
// Server-side apply removes a field its manager applied before and no longer names, unless
// another manager owns it too (structured-merge-diff's Updater.prune). A manager that writes one
// change, then another that names other fields (a Rollout's class after another Rollout's
// version, both as topoflow-rollout, which took the version over from whoever set it) would so
// remove the first change: the Cluster loses its version, and admission refuses it. Owned and
// Over let such a manager apply what it owns now together with the new change (client-go's
// managedfields.ExtractInto is the same extraction for typed apply configurations).

// Owned is what live holds of the fields that manager's last apply to the main resource named
// (nil when live records no apply by manager), and the API version that record was made in. The
// record names its fields in that version: when it is not live's, nothing is extracted, and
// the caller reads the object in that version to extract them.
func Owned(tc TypeConverter, live *unstructured.Unstructured, manager string) (owned *unstructured.Unstructured, recordVersion string, err error) {
	var entry *metav1.ManagedFieldsEntry
	for _, mf := range live.GetManagedFields() {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == "" && mf.FieldsV1 != nil {
			entry = &mf
			break
		}
	}
	if entry == nil {
		return nil, "", nil
	}
	if entry.APIVersion != live.GetAPIVersion() {
		return nil, entry.APIVersion, nil
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(entry.FieldsV1.GetRawReader()); err != nil {
		return nil, "", fmt.Errorf("managedFields of %s %s for %s: %w", live.GetKind(), live.GetName(), manager, err)
	}
	tv, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return nil, "", fmt.Errorf("typing %s %s: %w", live.GetKind(), live.GetName(), err)
	}
	m, ok := tv.ExtractItems(set.Leaves()).AsValue().Unstructured().(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	out := &unstructured.Unstructured{Object: m}
	out.SetAPIVersion(live.GetAPIVersion())
	out.SetKind(live.GetKind())
	out.SetNamespace(live.GetNamespace())
	out.SetName(live.GetName())
	return out, entry.APIVersion, nil
}

// Over is over merged onto base as server-side apply merges them: over's values win, and the
// entries of associative lists (variables, machineDeployments) merge by their keys. Both are
// apply configurations of the same kind and version.
func Over(tc TypeConverter, base, over *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	b, err := tc.ObjectToTyped(base)
	if err != nil {
		return nil, fmt.Errorf("typing %s %s: %w", base.GetKind(), base.GetName(), err)
	}
	o, err := tc.ObjectToTyped(over)
	if err != nil {
		return nil, fmt.Errorf("typing %s %s: %w", over.GetKind(), over.GetName(), err)
	}
	merged, err := b.Merge(o)
	if err != nil {
		return nil, fmt.Errorf("merging onto what %s %s holds: %w", base.GetKind(), base.GetName(), err)
	}
	m, ok := merged.AsValue().Unstructured().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("merging onto %s %s: not an object", base.GetKind(), base.GetName())
	}
	return &unstructured.Unstructured{Object: m}, nil
}
