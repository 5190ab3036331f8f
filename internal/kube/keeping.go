package kube

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/ssa"
)

// keepingAttempts bounds the applies ApplyKeeping makes when the object changes under it.
const keepingAttempts = 5

// ApplyKeeping server-side applies obj as fieldManager (forcing ownership, as Apply does)
// together with what fieldManager's last apply to the object set and obj does not name, at the
// values the object holds now (model/ssa.Owned and Over). A manager that applies one change after
// another (a Rollout's class after another Rollout's version, both as topoflow-rollout) then
// removes none of the earlier ones: server-side apply removes a field its manager applied before
// and no longer names. The object is read from the API server itself, and the apply is made on
// the resourceVersion read, so a change made in between is not overwritten with the value read:
// on a conflict it is read and applied again. The object must exist (a NotFound error says it
// does not). dryRun asks admission only. The answer comes back in obj's version.
func (c *Client) ApplyKeeping(ctx context.Context, obj *unstructured.Unstructured, fieldManager string, dryRun bool) (*unstructured.Unstructured, error) {
	asked := obj.GroupVersionKind().GroupVersion().WithResource("")
	wireObj, converted, err := c.toWire(obj)
	if err != nil {
		return nil, err
	}
	gvr, err := c.ResourceFor(wireObj.GetAPIVersion(), wireObj.GetKind())
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		intent, err := c.keeping(ctx, gvr, wireObj, fieldManager)
		if err != nil {
			return nil, err
		}
		out, err := c.apply(ctx, intent, fieldManager, "", dryRun)
		if IsConflict(err) && attempt < keepingAttempts {
			continue // changed since it was read: read it again
		}
		if err != nil || !converted {
			return out, err
		}
		return c.fromWire(asked, out)
	}
}

// keeping is intent (in gvr's version) with what fieldManager's last apply set merged under it,
// on the resourceVersion of the object as the API server holds it now.
func (c *Client) keeping(ctx context.Context, gvr schema.GroupVersionResource, intent *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	ns, name := intent.GetNamespace(), intent.GetName()
	live, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", intent.GetKind(), ns, name, err)
	}
	out := intent.DeepCopy()
	out.SetResourceVersion(live.GetResourceVersion())
	if !slices.ContainsFunc(live.GetManagedFields(), func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == fieldManager && m.Operation == metav1.ManagedFieldsOperationApply && m.Subresource == ""
	}) {
		return out, nil // the manager applied nothing yet: nothing to keep
	}
	tc, err := c.typeConverter(gvr.GroupVersion(), intent.GroupVersionKind())
	if err != nil {
		return nil, fmt.Errorf("typing %s %s/%s: %w", intent.GetKind(), ns, name, err)
	}
	owned, recordVersion, err := ssa.Owned(tc, live, fieldManager)
	if err != nil {
		return nil, err
	}
	if owned == nil && recordVersion != "" {
		if owned, err = c.ownedIn(live, recordVersion, fieldManager); err != nil {
			return nil, err
		}
	}
	if owned == nil {
		return out, nil
	}
	if out, err = ssa.Over(tc, owned, intent); err != nil {
		return nil, err
	}
	out.SetResourceVersion(live.GetResourceVersion())
	return out, nil
}

// ownedIn is what fieldManager's last apply set, recorded in another version than the one
// requests go to (an older topoflow wrote v1beta1 where the server now prefers v1beta2, or the
// other way): live is converted to that version here (Cluster API's conversion, as the server's
// webhook would: no request in a deprecated version), the fields are extracted there, and the
// part is converted back (a field it does not set is not set in the other version either, see
// model/api/conversion).
func (c *Client) ownedIn(live *unstructured.Unstructured, recordVersion, fieldManager string) (*unstructured.Unstructured, error) {
	gv, err := schema.ParseGroupVersion(recordVersion)
	if err != nil || (gv != v1beta1 && gv != v1beta2) || live.GroupVersionKind().Group != gv.Group {
		return nil, fmt.Errorf("%s %s/%s: %s's last apply was made in %s, which topoflow cannot convert to %s",
			live.GetKind(), live.GetNamespace(), live.GetName(), fieldManager, recordVersion, live.GetAPIVersion())
	}
	toRecord, back := conversion.ToV1Beta1, func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		out, _, err := conversion.ToV1Beta2(u)
		return out, err
	}
	if gv == v1beta2 {
		toRecord = func(u *unstructured.Unstructured, _ conversion.APIVersionOf) (*unstructured.Unstructured, error) {
			out, _, err := conversion.ToV1Beta2(u)
			return out, err
		}
		back = func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			return conversion.ToV1Beta1(u, c.PreferredVersion)
		}
	}
	there, err := toRecord(live, c.PreferredVersion)
	if err != nil {
		return nil, err
	}
	tc, err := c.typeConverter(gv, gv.WithKind(live.GetKind()))
	if err != nil {
		return nil, err
	}
	owned, _, err := ssa.Owned(tc, there, fieldManager)
	if err != nil || owned == nil {
		return owned, err
	}
	out, err := back(owned)
	if err != nil {
		return nil, err
	}
	ann := out.GetAnnotations()
	delete(ann, conversion.DataAnnotation) // the conversion's, not the manager's: it would own it
	if len(ann) == 0 {
		ann = nil
	}
	out.SetAnnotations(ann)
	return out, nil
}

// typeConverter types objects of gvk by the API server's OpenAPI schema of gv.
func (c *Client) typeConverter(gv schema.GroupVersion, gvk schema.GroupVersionKind) (ssa.TypeConverter, error) {
	c.mu.Lock()
	if c.schemas == nil {
		c.schemas = newSchemas(c.Config, slog.Default())
	}
	s := c.schemas
	c.mu.Unlock()
	return s.converter(gv, gvk)
}
