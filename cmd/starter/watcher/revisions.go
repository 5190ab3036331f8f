package watcher

import (
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/workflows"
)

// The starter keeps the revisions of the ClusterClasses that opted in to them (issue #38) by
// queueing a record of the class's revisions (workflows.ClassRevisionsKind) on the objects queue
// whenever what a revision holds may have changed (the class, a template it references) or
// what its status counts (a Cluster of the class came, went, or moved to another revision).
// Classes that did not opt in cost a lookup in the class informer's store.

// recordRevisions queues the record of a class's revisions.
func (w *Watcher) recordRevisions(ns, name string) {
	w.objects.Add(activities.ObjectRef{Kind: workflows.ClassRevisionsKind, Namespace: ns, Name: name})
}

// revisionsOn says whether the class ("namespace/name") opted in to revisions, as the class
// informer holds it (false when it holds no such class).
func (w *Watcher) revisionsOn(classKey string) bool {
	if w.classes == nil {
		return false
	}
	obj, ok, err := w.classes.GetStore().GetByKey(classKey)
	if err != nil || !ok {
		return false
	}
	u := asUnstructured(obj)
	return u != nil && revision.On(u.GetAnnotations())
}

// onClassRevisions queues the record of a class's revisions for an add, an update that changes
// what a revision holds (spec, status.variables) or the class's metadata (opt-in, history), or
// a delete (deleted: its revisions go), when the class is or was opted in.
func (w *Watcher) onClassRevisions(oldObj, obj any, deleted bool) {
	u, old := asUnstructured(obj), asUnstructured(oldObj)
	if u == nil || (!revision.On(u.GetAnnotations()) && (old == nil || !revision.On(old.GetAnnotations()))) {
		return
	}
	if deleted || classRevisionInputChanged(old, u) {
		w.recordRevisions(u.GetNamespace(), u.GetName())
	}
}

// classRevisionInputChanged says whether a class update (old nil: an add) may change its
// revisions: its spec (the generation), status.variables, labels or annotations; or its
// status.observedGeneration, which a revision waits for (activities.variablesCurrent) even when
// the variables stay the same.
func classRevisionInputChanged(old, cur *unstructured.Unstructured) bool {
	if old == nil {
		return true
	}
	if old.GetResourceVersion() == cur.GetResourceVersion() {
		return false // a resync
	}
	oldVars, _, _ := unstructured.NestedFieldNoCopy(old.Object, "status", "variables")
	curVars, _, _ := unstructured.NestedFieldNoCopy(cur.Object, "status", "variables")
	oldObserved, _, _ := unstructured.NestedInt64(old.Object, "status", "observedGeneration")
	curObserved, _, _ := unstructured.NestedInt64(cur.Object, "status", "observedGeneration")
	return old.GetGeneration() != cur.GetGeneration() || oldObserved != curObserved || !equality.Semantic.DeepEqual(oldVars, curVars) ||
		!maps.Equal(old.GetLabels(), cur.GetLabels()) || !topology.SameAnnotations(old.GetAnnotations(), cur.GetAnnotations())
}

// onTemplateRevisions queues the record of the revisions of the opted-in classes among those
// (by "namespace/name") that reference a template that changed.
func (w *Watcher) onTemplateRevisions(classes []string) {
	for _, c := range classes {
		if w.revisionsOn(c) {
			ns, name := splitKey(c)
			w.recordRevisions(ns, name)
		}
	}
}

// onClusterRevisions queues the record of the revisions of an opted-in class when one of its
// Clusters is added or deleted (old nil), or an update moves it to another revision or class.
func (w *Watcher) onClusterRevisions(old, cur *unstructured.Unstructured) {
	for _, c := range clusterRevisionClasses(old, cur) {
		if w.revisionsOn(c) {
			ns, name := splitKey(c)
			w.recordRevisions(ns, name)
		}
	}
}

// clusterRevisionClasses are the classes ("namespace/name") whose revisions a Cluster event may
// change: its class on an add or delete (old nil); on an update that changes its pin or its
// class, the classes before and after.
func clusterRevisionClasses(old, cur *unstructured.Unstructured) []string {
	now := clusterClassKey(cur)
	if old == nil {
		return nonEmpty(now)
	}
	before := clusterClassKey(old)
	if before == now && old.GetAnnotations()[revision.PinAnnotation] == cur.GetAnnotations()[revision.PinAnnotation] {
		return nil
	}
	if before == now {
		return nonEmpty(now)
	}
	return nonEmpty(before, now)
}

// clusterClassKey is the class a Cluster's topology names ("namespace/name"; "" for none): v1beta2's
// spec.topology.classRef, whose empty namespace is the Cluster's.
func clusterClassKey(u *unstructured.Unstructured) string {
	class, _, _ := unstructured.NestedString(u.Object, "spec", "topology", "classRef", "name")
	if class == "" {
		return ""
	}
	ns, _, _ := unstructured.NestedString(u.Object, "spec", "topology", "classRef", "namespace")
	if ns == "" {
		ns = u.GetNamespace()
	}
	return ns + "/" + class
}

func nonEmpty(keys ...string) []string {
	var out []string
	for _, k := range keys {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}

func splitKey(key string) (ns, name string) {
	ns, name, _ = strings.Cut(key, "/")
	return ns, name
}
