package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
)

// ErrInvalidRevisions: a class's revisions cannot be kept as asked (a bad history annotation, a
// revision whose content does not match its hash). Non-retryable: a fix is a change, and the
// change starts a fresh run.
const ErrInvalidRevisions = "InvalidClassRevisions"

// recordAttempts bounds how often a create that met a revision another run created is decided
// again.
const recordAttempts = 5

// classRevisions is what RecordClassRevisions works on: one opted-in class (on the hub), its
// content now, its trusted revisions and the Clusters of the class (name: annotations).
type classRevisions struct {
	class    *hubv1.ClusterClass
	hash     string
	content  revision.Content
	existing []rolloutv1.ClusterClassRevision
	// recorded are the trusted revisions (those whose content matches their hash).
	recorded []revision.Recorded
	// untrusted are the numbers of revisions whose content does not match their hash.
	untrusted []int64
	clusters  map[string]map[string]string
	// resourceVersions of the Clusters, so a pin never overwrites a concurrent write.
	resourceVersions map[string]string
}

func (c *classRevisions) key() string { return c.class.Namespace + "/" + c.class.Name }

// RecordClassRevisions keeps the ClusterClassRevisions of a class that opted in (issue #38): it
// records the class's content (spec, status.variables, referenced templates) as a new numbered
// revision when it differs from the newest, pins every Cluster of the class not pinned to one of
// its revisions, writes each revision's status (Clusters pinned, latest) and prunes unused ones
// beyond the class's history. A deleted class loses its revisions. Every read that decides
// something goes to the API server, so a retry (or a concurrent run) decides from what is there.
func (a *Activities) RecordClassRevisions(ctx context.Context, ref ObjectRef) error {
	u, err := a.Kube.GetUncached(ctx, kube.V1Beta1ClusterClasses, ref.Namespace, ref.Name)
	if kube.IsNotFound(err) {
		return a.deleteRevisions(ctx, ref)
	}
	if err != nil {
		return fmt.Errorf("reading ClusterClass %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if !revision.On(u.GetAnnotations()) {
		return nil
	}
	class, err := a.revisionClass(u)
	if err != nil {
		return err
	}
	if err := variablesCurrent(class); err != nil {
		return err
	}
	cr, err := a.readClassRevisions(ctx, class, u)
	if err != nil {
		return err
	}
	history, historyErr := revision.History(class.Annotations)
	if err := a.recordAndPin(ctx, cr); err != nil {
		return err
	}
	if err := a.writeRevisionStatuses(ctx, cr); err != nil {
		return err
	}
	if historyErr == nil {
		if err := a.pruneRevisions(ctx, cr, history); err != nil {
			return err
		}
	}
	var problems []error
	if historyErr != nil {
		problems = append(problems, fmt.Errorf("ClusterClass %s: unused revisions not pruned: %w", cr.key(), historyErr))
	}
	for _, n := range cr.untrusted {
		problems = append(problems, fmt.Errorf("ClusterClassRevision %s/%s does not hold what its spec.hash says (written by hand?): not used; delete it", class.Namespace, revision.Name(class.Name, n)))
	}
	if err := errors.Join(problems...); err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidRevisions, err)
	}
	return nil
}

// variablesCurrent says (a retryable error) when a class's status.variables may not be those of
// its generation yet: a revision records them, and one recorded before its status is written
// would be followed at once by another. Not only classes whose external patches discover
// variables: the inline ones reach status.variables by the same status write
// (ReconcileClusterClassStatus), which is an event that records the revision.
func variablesCurrent(class *hubv1.ClusterClass) error {
	if class.Status.ObservedGeneration >= class.Generation {
		return nil
	}
	what := "its status"
	if discoversVariables(class) {
		what = "variable discovery"
	}
	return fmt.Errorf("ClusterClass %s/%s: %s has not caught up with generation %d yet (status.observedGeneration %d): status.variables, which a revision records, may be stale",
		class.Namespace, class.Name, what, class.Generation, class.Status.ObservedGeneration)
}

// revisionClass is a ClusterClass read in v1beta1 (u) on the hub (through model/api/conversion),
// which the decisions read. A revision records the class as read in v1beta1 (revision.ContentOf
// of u), as it always has: the hash of a class's content must not change with the version the
// worker computes on (a new revision of every opted-in class, a hand-back refused), and recorded
// revisions are read in either version (pinnedClassOf).
func (a *Activities) revisionClass(u *unstructured.Unstructured) (*hubv1.ClusterClass, error) {
	v1beta1Class := &clusterv1.ClusterClass{}
	if err := a.Kube.Decode(u, v1beta1Class); err != nil {
		return nil, fmt.Errorf("reading ClusterClass %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	class, err := conversion.ClusterClassToHub(v1beta1Class)
	if err != nil {
		return nil, fmt.Errorf("reading ClusterClass %s/%s as %s: %w", u.GetNamespace(), u.GetName(), hubv1.GroupVersion, err)
	}
	return class, nil
}

// readClassRevisions reads the class's content (u: the class as read in v1beta1), its revisions
// and its Clusters.
func (a *Activities) readClassRevisions(ctx context.Context, class *hubv1.ClusterClass, u *unstructured.Unstructured) (*classRevisions, error) {
	templates, err := a.revisionTemplates(ctx, class)
	if err != nil {
		return nil, err
	}
	cr := &classRevisions{class: class, content: revision.ContentOf(u, templates)}
	if cr.hash, err = revision.Hash(cr.content); err != nil {
		return nil, fmt.Errorf("ClusterClass %s: %w", cr.key(), err)
	}
	if err := a.listRevisions(ctx, cr); err != nil {
		return nil, err
	}
	if err := a.listClassClusters(ctx, cr); err != nil {
		return nil, err
	}
	return cr, nil
}

// revisionTemplates reads every template the class references from the API server: a revision
// must hold the template as it is now, an edit in place included. A missing one is an error
// (retried: the template may be on its way).
func (a *Activities) revisionTemplates(ctx context.Context, class *hubv1.ClusterClass) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, tr := range distinctTemplateRefs(class) {
		ns := tr.Ref.Namespace // the class's (desired.TemplateRefs)
		gvr, err := a.Kube.ResourceFor(tr.Ref.APIVersion, tr.Ref.Kind)
		if err != nil {
			return nil, fmt.Errorf("template %s %s/%s (%s) of ClusterClass %s/%s: %w", tr.Ref.Kind, ns, tr.Ref.Name, tr.Field, class.Namespace, class.Name, err)
		}
		t, err := a.Kube.GetUncached(ctx, gvr, ns, tr.Ref.Name)
		if kube.IsNotFound(err) {
			return nil, fmt.Errorf("template %s %s/%s (%s) of ClusterClass %s/%s does not exist: no revision is recorded without it",
				tr.Ref.Kind, ns, tr.Ref.Name, tr.Field, class.Namespace, class.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading template %s %s/%s of ClusterClass %s/%s: %w", tr.Ref.Kind, ns, tr.Ref.Name, class.Namespace, class.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// listRevisions reads the class's revisions, keeping as recorded those whose content matches
// their hash (the others are logged and reported, never used).
func (a *Activities) listRevisions(ctx context.Context, cr *classRevisions) error {
	items, err := a.Kube.ListUncached(ctx, kube.ClusterClassRevisions, cr.class.Namespace, revision.ClassLabel+"="+cr.class.Name)
	if err != nil {
		return fmt.Errorf("listing the revisions of ClusterClass %s: %w", cr.key(), err)
	}
	cr.existing, cr.recorded, cr.untrusted = nil, nil, nil
	for i := range items {
		rev := rolloutv1.ClusterClassRevision{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &rev); err != nil {
			return fmt.Errorf("reading ClusterClassRevision %s/%s: %w", items[i].GetNamespace(), items[i].GetName(), err)
		}
		if rev.Spec.ClusterClassName != cr.class.Name || rev.Name != revision.Name(cr.class.Name, rev.Spec.Revision) {
			continue // labelled for the class by hand, not recorded for it
		}
		cr.existing = append(cr.existing, rev)
		if err := revision.Verify(rev.Spec); err != nil {
			a.Log.ErrorContext(ctx, "class revision not trusted", "clusterClass", cr.key(), "revision", rev.Name, "error", err)
			cr.untrusted = append(cr.untrusted, rev.Spec.Revision)
			continue
		}
		cr.recorded = append(cr.recorded, revision.Recorded{Name: rev.Name, Revision: rev.Spec.Revision, Hash: rev.Spec.Hash})
	}
	return nil
}

// listClassClusters reads the Clusters of the class in its namespace (from the API server: a
// Cluster created a moment ago gets its pin in this run).
func (a *Activities) listClassClusters(ctx context.Context, cr *classRevisions) error {
	items, err := a.Kube.ListUncached(ctx, kube.V1Beta1Clusters, cr.class.Namespace, "")
	if err != nil {
		return fmt.Errorf("listing the Clusters of ClusterClass %s: %w", cr.key(), err)
	}
	cr.clusters, cr.resourceVersions = map[string]map[string]string{}, map[string]string{}
	for i := range items {
		c := &items[i]
		class, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "class")
		classNS, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "classNamespace")
		if class != cr.class.Name || (classNS != "" && classNS != cr.class.Namespace) {
			continue
		}
		annotations := c.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		cr.clusters[c.GetName()] = annotations
		if c.GetDeletionTimestamp() == nil {
			cr.resourceVersions[c.GetName()] = c.GetResourceVersion()
		}
	}
	return nil
}

// recordAndPin pins the Clusters pinned to none of the class's revisions to its newest, then
// records a new revision when the content differs from the newest's. The first revision a class
// gets is where its Clusters are pinned.
func (a *Activities) recordAndPin(ctx context.Context, cr *classRevisions) error {
	if newest := revision.Newest(cr.recorded); newest != nil {
		if err := a.pinUnpinned(ctx, cr, newest.Name); err != nil {
			return err
		}
	}
	first := len(cr.recorded) == 0
	created, err := a.recordRevision(ctx, cr)
	if err != nil {
		return err
	}
	if first && created != "" {
		return a.pinUnpinned(ctx, cr, created)
	}
	return nil
}

// recordRevision creates the next revision when the content is new (its name; "" when none was
// needed). A create that meets a revision created meanwhile reads the revisions again and
// decides again: an existing revision is never overwritten.
func (a *Activities) recordRevision(ctx context.Context, cr *classRevisions) (string, error) {
	for range recordAttempts {
		create, n := revision.Next(cr.recorded, cr.hash)
		if !create {
			return "", nil
		}
		n = revision.NextNumber(n, cr.untrusted)
		obj, err := a.revisionObject(cr, n)
		if err != nil {
			return "", err
		}
		_, err = a.Kube.Create(ctx, kube.ClusterClassRevisions, obj, revision.FieldManager)
		switch {
		case err == nil:
			a.Log.InfoContext(ctx, "class revision recorded", "clusterClass", cr.key(), "revision", obj.GetName(), "hash", cr.hash)
			cr.recorded = append(cr.recorded, revision.Recorded{Name: obj.GetName(), Revision: n, Hash: cr.hash})
			return obj.GetName(), nil
		case !kube.IsAlreadyExists(err):
			return "", fmt.Errorf("creating ClusterClassRevision %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
		}
		if err := a.listRevisions(ctx, cr); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("ClusterClass %s: the next revision was taken %d times over; trying again", cr.key(), recordAttempts)
}

// revisionObject is revision n of the class holding its content: labelled with the class, and
// owned by it (not as controller) so a garbage collector deletes it with the class.
func (a *Activities) revisionObject(cr *classRevisions, n int64) (*unstructured.Unstructured, error) {
	spec, err := revision.SpecOf(cr.class.Name, n, cr.content)
	if err != nil {
		return nil, err
	}
	rev := &rolloutv1.ClusterClassRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: rolloutv1.GroupVersion.String(), Kind: "ClusterClassRevision"},
		ObjectMeta: metav1.ObjectMeta{
			Name: revision.Name(cr.class.Name, n), Namespace: cr.class.Namespace,
			Labels: map[string]string{revision.ClassLabel: cr.class.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: clusterv1.GroupVersion.String(), Kind: "ClusterClass", Name: cr.class.Name, UID: cr.class.UID,
			}},
		},
		Spec: spec,
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(rev)
	if err != nil {
		return nil, fmt.Errorf("ClusterClassRevision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// pinUnpinned pins every Cluster of the class that is pinned to none of its revisions (and is
// not being deleted) to the revision named. The patch carries the resourceVersion read, so a pin
// written meanwhile (by the Cluster's workflow or a Rollout) is not overwritten: the activity
// fails and reads again.
func (a *Activities) pinUnpinned(ctx context.Context, cr *classRevisions, name string) error {
	for _, cluster := range revision.Unpinned(cr.clusters, cr.class.Name) {
		if err := a.pinUnpinnedCluster(ctx, cr, cluster, name); err != nil {
			return err
		}
	}
	return nil
}

// pinAttempts bounds how often a pin that met a concurrent write of its Cluster is tried again.
const pinAttempts = 3

// pinUnpinnedCluster pins one Cluster; when it was written meanwhile (a conflict), it is read
// again and pinned only if it is still pinned to no revision of the class.
func (a *Activities) pinUnpinnedCluster(ctx context.Context, cr *classRevisions, cluster, name string) error {
	for attempt := 1; ; attempt++ {
		rv, ok := cr.resourceVersions[cluster]
		if !ok {
			return nil // being deleted
		}
		out, err := a.pinClusterAt(ctx, cr.class.Namespace, cluster, rv, name)
		switch {
		case err == nil:
			cr.clusters[cluster], cr.resourceVersions[cluster] = out.GetAnnotations(), out.GetResourceVersion()
			return nil
		case kube.IsNotFound(err):
			delete(cr.clusters, cluster)
			return nil
		case !apierrors.IsConflict(err) || attempt == pinAttempts:
			return err
		}
		u, err := a.Kube.GetUncached(ctx, kube.V1Beta1Clusters, cr.class.Namespace, cluster)
		if kube.IsNotFound(err) {
			delete(cr.clusters, cluster)
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading Cluster %s/%s again: %w", cr.class.Namespace, cluster, err)
		}
		cr.clusters[cluster], cr.resourceVersions[cluster] = u.GetAnnotations(), u.GetResourceVersion()
		if u.GetDeletionTimestamp() != nil {
			delete(cr.resourceVersions, cluster)
		}
		if _, pinned := revision.PinnedTo(u.GetAnnotations(), cr.class.Name); pinned {
			return nil // pinned meanwhile (a pass, a Rollout)
		}
	}
}

// writeRevisionStatuses writes each revision's status (Clusters pinned to it, latest) where it
// says something else.
func (a *Activities) writeRevisionStatuses(ctx context.Context, cr *classRevisions) error {
	revision.Count(cr.recorded, cr.clusters, cr.class.Name)
	want := revision.Statuses(cr.recorded)
	have := map[string]rolloutv1.ClusterClassRevisionStatus{}
	for _, rev := range cr.existing {
		have[rev.Name] = rev.Status
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		st, ok := have[name]
		if ok && st == want[name] {
			continue
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": rolloutv1.GroupVersion.String(), "kind": "ClusterClassRevision",
			"metadata": map[string]any{"name": name, "namespace": cr.class.Namespace},
			"status":   map[string]any{"clusters": int64(want[name].Clusters), "latest": want[name].Latest},
		}}
		if _, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager); err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("writing the status of ClusterClassRevision %s/%s: %w", cr.class.Namespace, name, err)
		}
	}
	return nil
}

// pruneRevisions deletes the class's unused revisions beyond the newest history ones.
func (a *Activities) pruneRevisions(ctx context.Context, cr *classRevisions, history int) error {
	for _, name := range revision.Prune(cr.recorded, history) {
		if err := a.Kube.Delete(ctx, kube.ClusterClassRevisions, cr.class.Namespace, name); err != nil {
			return fmt.Errorf("pruning ClusterClassRevision %s/%s: %w", cr.class.Namespace, name, err)
		}
		a.Log.InfoContext(ctx, "class revision pruned", "clusterClass", cr.key(), "revision", name, "history", history)
	}
	return nil
}

// deleteRevisions deletes the revisions of a class that is gone (no garbage collector is relied
// on: the local stack has none).
func (a *Activities) deleteRevisions(ctx context.Context, ref ObjectRef) error {
	items, err := a.Kube.ListUncached(ctx, kube.ClusterClassRevisions, ref.Namespace, revision.ClassLabel+"="+ref.Name)
	if kube.IsNotFound(err) {
		return nil // no revisions CRD: nothing was recorded
	}
	if err != nil {
		return fmt.Errorf("listing the revisions of deleted ClusterClass %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	var deleted []string
	for _, it := range items {
		if err := a.Kube.Delete(ctx, kube.ClusterClassRevisions, it.GetNamespace(), it.GetName()); err != nil {
			return fmt.Errorf("deleting ClusterClassRevision %s/%s of deleted ClusterClass %s: %w", it.GetNamespace(), it.GetName(), ref.Name, err)
		}
		deleted = append(deleted, it.GetName())
	}
	if len(deleted) > 0 {
		a.Log.InfoContext(ctx, "class revisions deleted with their class", "clusterClass", ref.Namespace+"/"+ref.Name, "revisions", strings.Join(deleted, ","))
	}
	return nil
}
