package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/model/validation"
)

// The compute side of ClusterClass revisions (issue #38): a Cluster of a class that opted in is
// computed from the ClusterClassRevision it is pinned to, so an edit of the class or of a template
// in place reaches it only when a Rollout moves its pin. The rules are model/revision's.

// pinnedClass is the class and templates a Cluster is computed from when its class opted in to
// revisions: those of the revision Name.
type pinnedClass struct {
	// Name is the revision's name ("<class>-<n>").
	Name string
	// Pin: the Cluster is not pinned to this revision yet (never pinned, or pinned to a revision
	// of the class it was rebased from); a pass pins it before it applies (planning does not).
	Pin bool
	// Class is the live class's metadata with the revision's spec and status.variables.
	Class *hubv1.ClusterClass
	// Templates are the revision's templates, keyed by desired.RefKey: no live template is read.
	Templates map[string]*unstructured.Unstructured
}

// classRevisionFor is the revision a Cluster of class is computed from: the one it is pinned to,
// else the class's newest. Nil when the class did not opt in (nothing else is read then: the hot
// path stays as it was) or has no revision yet (the live class is used; the recorder pins it).
func (a *Activities) classRevisionFor(ctx context.Context, cluster *hubv1.Cluster, class *hubv1.ClusterClass) (*pinnedClass, error) {
	if !revision.On(class.Annotations) {
		return nil, nil
	}
	n, pinned := revision.PinnedTo(cluster.Annotations, class.Name)
	why := "the Cluster's pin"
	if !pinned {
		newest, err := a.newestClassRevision(ctx, class)
		if err != nil || newest == nil {
			return nil, err
		}
		n, why = newest.Revision, "the newest revision of ClusterClass "+class.Name
	}
	rev, err := a.readClassRevision(ctx, class.Namespace, revision.Name(class.Name, n), why)
	if err != nil {
		return nil, err
	}
	out, err := a.pinnedClassOf(class, rev)
	if err != nil {
		return nil, err
	}
	out.Pin = !pinned
	return out, nil
}

// readClassRevision reads a revision by name; absent from the worker's cache it is looked up on the
// API server (a revision just recorded). Not found is an error a retry may fix (why says whose
// revision it is); content that does not match its hash is not.
func (a *Activities) readClassRevision(ctx context.Context, ns, name, why string) (*revision.Stored, error) {
	rev := &rolloutv1.ClusterClassRevision{}
	err := a.Kube.GetTyped(ctx, kube.ClusterClassRevisions, ns, name, rev)
	if kube.IsNotFound(err) {
		var u *unstructured.Unstructured
		if u, err = a.Kube.GetUncached(ctx, kube.ClusterClassRevisions, ns, name); err == nil {
			err = a.Kube.Decode(u, rev)
		}
	}
	switch {
	case kube.IsNotFound(err):
		return nil, fmt.Errorf("ClusterClassRevision %s/%s (%s) not found", ns, name, why)
	case err != nil:
		return nil, fmt.Errorf("reading ClusterClassRevision %s/%s (%s): %w", ns, name, why, err)
	}
	stored, err := revision.Read(rev)
	if err != nil {
		return nil, invalid(err)
	}
	return stored, nil
}

// newestClassRevision is the class's newest recorded revision (nil: none, or revisions are not
// served).
func (a *Activities) newestClassRevision(ctx context.Context, class metav1.Object) (*revision.Recorded, error) {
	recs, err := a.recordedClassRevisions(ctx, class.GetNamespace(), class.GetName())
	if err != nil {
		return nil, err
	}
	return revision.Newest(recs), nil
}

// recordedClassRevisions lists a class's revisions by its label, from the worker's cache.
func (a *Activities) recordedClassRevisions(ctx context.Context, ns, class string) ([]revision.Recorded, error) {
	items, err := a.Kube.List(ctx, kube.ClusterClassRevisions, ns, revision.ClassLabel+"="+class)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the ClusterClassRevisions of ClusterClass %s/%s: %w", ns, class, err)
	}
	out := make([]revision.Recorded, 0, len(items))
	for i := range items {
		n, _, _ := unstructured.NestedInt64(items[i].Object, "spec", "revision")
		hash, _, _ := unstructured.NestedString(items[i].Object, "spec", "hash")
		out = append(out, revision.Recorded{Name: items[i].GetName(), Revision: n, Hash: hash})
	}
	return out, nil
}

// pinnedClassOf is the class a revision recorded, with the live class's metadata (and its status
// but for the variables), and the revision's templates in the class's namespace. A class recorded
// as v1beta1 is read on the hub through Cluster API's conversion.
func (a *Activities) pinnedClassOf(live *hubv1.ClusterClass, rev *revision.Stored) (*pinnedClass, error) {
	what := "ClusterClassRevision " + live.Namespace + "/" + rev.Name
	u := rev.Class.DeepCopy()
	u.SetName(live.Name)
	u.SetNamespace(live.Namespace)
	u, _, err := conversion.ToV1Beta2(u)
	if err != nil {
		return nil, invalid(fmt.Errorf("%s: reading its class as %s: %w", what, hubv1.GroupVersion, err))
	}
	class := &hubv1.ClusterClass{}
	if err := a.Kube.Decode(u, class); err != nil {
		return nil, invalid(fmt.Errorf("%s: decoding its class: %w", what, err))
	}
	variables := class.Status.Variables
	class.ObjectMeta, class.Status = *live.ObjectMeta.DeepCopy(), *live.Status.DeepCopy()
	class.Status.Variables = variables
	if errs := validation.ClusterClass(class, nil, nil); len(errs) > 0 {
		return nil, invalid(&desired.InvalidError{Object: what, Errs: errs})
	}
	templates := map[string]*unstructured.Unstructured{}
	for _, t := range rev.Templates {
		t = t.DeepCopy()
		t.SetNamespace(live.Namespace)
		templates[desired.RefKey(&corev1.ObjectReference{Kind: t.GetKind(), Namespace: t.GetNamespace(), Name: t.GetName()})] = t
	}
	var lacking []string
	for _, tr := range desired.TemplateRefs(class) {
		if _, ok := templates[desired.RefKey(tr.Ref)]; !ok {
			lacking = append(lacking, fmt.Sprintf("%s %s (%s)", tr.Ref.Kind, tr.Ref.Name, tr.Field))
		}
	}
	if len(lacking) > 0 {
		return nil, invalid(fmt.Errorf("%s holds no template %s", what, strings.Join(lacking, ", ")))
	}
	return &pinnedClass{Name: rev.Name, Class: class, Templates: templates}, nil
}

// pinCluster pins a Cluster to a revision (the pass computes from it), on the resourceVersion read:
// a pin a Rollout wrote meanwhile is not overwritten (the conflict is retried, on a new read).
// Written under topoflow's own field manager, as the Cluster's other metadata.
func (a *Activities) pinCluster(ctx context.Context, cluster *hubv1.Cluster, name string) error {
	_, err := a.pinClusterAt(ctx, cluster.Namespace, cluster.Name, cluster.ResourceVersion, name)
	if kube.IsNotFound(err) {
		return nil
	}
	return err
}

// pinClusterAt pins a Cluster to the revision name, on the resourceVersion read (a pin written
// meanwhile, by a Rollout or the recorder, is never overwritten: a conflict), under the
// revisions' field manager, which the starter does not take for the workflow's own echo: the
// Cluster's workflow sees the pin. Both the recorder and a pass pin through here.
func (a *Activities) pinClusterAt(ctx context.Context, ns, name, resourceVersion, revisionName string) (*unstructured.Unstructured, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": resourceVersion, "annotations": map[string]any{revision.PinAnnotation: revisionName}}})
	if err != nil {
		return nil, err
	}
	out, err := a.Kube.MergePatch(ctx, kube.V1Beta1Clusters, ns, name, patch, revision.FieldManager)
	if err != nil {
		return nil, fmt.Errorf("pinning Cluster %s/%s to ClusterClassRevision %s (metadata.annotations[%s]): %w", ns, name, revisionName, revision.PinAnnotation, err)
	}
	a.Log.InfoContext(ctx, "Cluster pinned to class revision", "cluster", ns+"/"+name, "revision", revisionName)
	return out, nil
}

// markClassRevisionApplied records on a Cluster the revision its topology was just applied from:
// how a Rollout moving revisions sees the Cluster moved (an annotation write bumps no generation).
// It writes under the revisions' field manager, as the pins are: the revision annotations are all
// that manager owns on a Cluster. A Cluster deleted meanwhile is left alone.
func (a *Activities) markClassRevisionApplied(ctx context.Context, cluster *hubv1.Cluster, name string) error {
	if !revision.AppliedLags(cluster.Annotations, name) {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{revision.AppliedAnnotation: name}}})
	if err != nil {
		return err
	}
	_, err = a.Kube.MergePatch(ctx, kube.Clusters, cluster.Namespace, cluster.Name, patch, revision.FieldManager)
	switch {
	case kube.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("patching Cluster %s/%s (recording ClusterClassRevision %s applied): %w", cluster.Namespace, cluster.Name, name, err)
	}
	a.Log.InfoContext(ctx, "class revision applied", "cluster", cluster.Namespace+"/"+cluster.Name, "revision", name)
	return nil
}

// resolveClassRevision checks a classRevision change against the Clusters selected and puts the
// revision number it moves to in change (rollout.OneClass, rollout.ResolveClassRevision); the
// string says why the rollout cannot start. Another change, or no Cluster, is left as it is.
func (a *Activities) resolveClassRevision(ctx context.Context, change *rolloutv1.Change, clusters []hubv1.Cluster) (string, error) {
	if change.ClassRevision == "" || len(clusters) == 0 {
		return "", nil
	}
	classOf := make(map[string]string, len(clusters))
	for i := range clusters {
		c := &clusters[i]
		if c.Spec.Topology.IsDefined() {
			classOf[c.Namespace+"/"+c.Name] = c.ClassNamespace() + "/" + c.Spec.Topology.ClassRef.Name
		} else {
			classOf[c.Namespace+"/"+c.Name] = ""
		}
	}
	key, why := rollout.OneClass(classOf)
	if why != "" {
		return why, nil
	}
	ns, name, _ := strings.Cut(key, "/")
	class := &hubv1.ClusterClass{}
	switch err := a.Kube.GetTyped(ctx, kube.ClusterClasses, ns, name, class); {
	case kube.IsNotFound(err):
		return fmt.Sprintf("spec.change.classRevision: ClusterClass %s not found", key), nil
	case err != nil:
		return "", fmt.Errorf("reading ClusterClass %s: %w", key, err)
	}
	recorded, err := a.recordedClassRevisions(ctx, ns, name)
	if err != nil {
		return "", err
	}
	n, why := rollout.ResolveClassRevision(change.ClassRevision, key, revision.On(class.Annotations), recorded)
	if why == "" {
		change.ClassRevision = strconv.FormatInt(n, 10)
	}
	return why, nil
}

// pinMissing says why a Cluster is not written a pin: the revision it names is not recorded (the
// Cluster was rebased since the rollout started, or the revision was deleted). "" when it is, or
// the write pins nothing.
func (a *Activities) pinMissing(ctx context.Context, c *hubv1.Cluster, w rollout.Write) (string, error) {
	if w.Pin == "" {
		return "", nil
	}
	ns := c.ClassNamespace()
	err := a.Kube.GetTyped(ctx, kube.ClusterClassRevisions, ns, w.Pin, &rolloutv1.ClusterClassRevision{})
	if kube.IsNotFound(err) {
		_, err = a.Kube.GetUncached(ctx, kube.ClusterClassRevisions, ns, w.Pin)
	}
	switch {
	case kube.IsNotFound(err):
		return fmt.Sprintf("ClusterClassRevision %s/%s not found: the Cluster's class is %s", ns, w.Pin, c.Spec.Topology.ClassRef.Name), nil
	case err != nil:
		return "", fmt.Errorf("reading ClusterClassRevision %s/%s: %w", ns, w.Pin, err)
	}
	return "", nil
}
