package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
)

// The fleet rollout's activities (see workflows.Rollout): read the Rollout, freeze its selection,
// write each Cluster's change, follow the Clusters in flight, write the Rollout's status. The
// decisions are model/rollout's.

// RolloutRef names a Rollout.
type RolloutRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r RolloutRef) String() string { return r.Namespace + "/" + r.Name }

// RolloutFinalizer keeps a deleted Rollout until its workflow has stopped.
const RolloutFinalizer = "topoflow.dev/rollout"

// RolloutRead is a Rollout as its workflow reads it.
type RolloutRead struct {
	Exists      bool                  `json:"exists"`
	Deleting    bool                  `json:"deleting,omitempty"`
	Generation  int64                 `json:"generation,omitempty"`
	Spec        rolloutv1.RolloutSpec `json:"spec"`
	Annotations map[string]string     `json:"annotations,omitempty"`
	// Ended: the Rollout completed or was aborted at its current generation (a later spec edit
	// starts a new rollout).
	Ended bool `json:"ended,omitempty"`
}

// ReadRollout reads the Rollout from the API server (annotations and a deletion count at once)
// and adds the finalizer while it is not being deleted.
func (a *Activities) ReadRollout(ctx context.Context, ref RolloutRef) (RolloutRead, error) {
	u, err := a.Kube.Dynamic.Resource(kube.Rollouts).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if kube.IsNotFound(err) {
		return RolloutRead{}, nil
	}
	if err != nil {
		return RolloutRead{}, fmt.Errorf("reading Rollout %s: %w", ref, err)
	}
	r := &rolloutv1.Rollout{}
	if err := a.Kube.Decode(u, r); err != nil {
		return RolloutRead{}, fmt.Errorf("reading Rollout %s: %w", ref, err)
	}
	out := RolloutRead{Exists: true, Deleting: r.DeletionTimestamp != nil, Generation: r.Generation, Spec: r.Spec, Annotations: r.Annotations,
		Ended: rollout.Ended(r.Status.Phase, r.Status.ObservedGeneration, r.Generation)}
	if !out.Deleting && !slices.Contains(r.Finalizers, RolloutFinalizer) {
		if err := a.setRolloutFinalizers(ctx, r, append(r.Finalizers, RolloutFinalizer)); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ReleaseRollout removes the finalizer: the workflow has stopped (the Rollout is being deleted).
func (a *Activities) ReleaseRollout(ctx context.Context, ref RolloutRef) error {
	r := &rolloutv1.Rollout{}
	if err := a.Kube.GetTyped(ctx, kube.Rollouts, ref.Namespace, ref.Name, r); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Rollout %s: %w", ref, err)
	}
	if !slices.Contains(r.Finalizers, RolloutFinalizer) {
		return nil
	}
	return a.setRolloutFinalizers(ctx, r, slices.DeleteFunc(slices.Clone(r.Finalizers), func(f string) bool { return f == RolloutFinalizer }))
}

// setRolloutFinalizers writes the finalizer list, on the resourceVersion read (a conflict retries).
func (a *Activities) setRolloutFinalizers(ctx context.Context, r *rolloutv1.Rollout, finalizers []string) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": r.ResourceVersion, "finalizers": finalizers}})
	if _, err := a.Kube.MergePatch(ctx, kube.Rollouts, r.Namespace, r.Name, patch, StatusFieldManager); err != nil {
		return fmt.Errorf("setting the finalizers of Rollout %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}

// clustersMatching lists the Clusters of the namespaces (every one when empty) whose labels match,
// on the hub, ordered by namespace and name: a Rollout's selection.
func (a *Activities) clustersMatching(ctx context.Context, namespaces []string, sel *metav1.LabelSelector) ([]hubv1.Cluster, error) {
	return clustersMatchingAs[hubv1.Cluster](ctx, a, kube.Clusters, namespaces, sel)
}

// ClustersMatching is clustersMatching as v1beta1 Clusters, for the Rollout admission webhook:
// internal/admission.Reader still takes v1beta1 (and only counts them). It goes when that reader
// moves to the hub; the Rollout path reads clustersMatching.
func (a *Activities) ClustersMatching(ctx context.Context, namespaces []string, sel *metav1.LabelSelector) ([]clusterv1.Cluster, error) {
	return clustersMatchingAs[clusterv1.Cluster](ctx, a, kube.V1Beta1Clusters, namespaces, sel)
}

// clustersMatchingAs lists the matching Clusters as gvr's version (T), ordered by namespace and
// name.
func clustersMatchingAs[T any](ctx context.Context, a *Activities, gvr schema.GroupVersionResource, namespaces []string, sel *metav1.LabelSelector) ([]T, error) {
	items, err := a.listMatching(ctx, namespaces, sel, gvr, a.Kube.List)
	if err != nil {
		return nil, err
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].GetNamespace()+"/"+items[i].GetName() < items[j].GetNamespace()+"/"+items[j].GetName()
	})
	out := make([]T, len(items))
	for i := range items {
		if err := a.Kube.Decode(&items[i], &out[i]); err != nil {
			return nil, fmt.Errorf("decoding Cluster %s/%s: %w", items[i].GetNamespace(), items[i].GetName(), err)
		}
	}
	return out, nil
}

// SelectInput asks for a Rollout's selection.
type SelectInput struct {
	Rollout RolloutRef            `json:"rollout"`
	Spec    rolloutv1.RolloutSpec `json:"spec"`
}

// SelectResult is a Rollout's selection, and what stops it from starting.
type SelectResult struct {
	// Invalid says what is wrong with the spec itself (admission was bypassed) or that its
	// RolloutStrategy is missing: nothing else is read then. It is checked here, not in the
	// workflow: windows name time zones, whose rules are files of the worker's host.
	Invalid string `json:"invalid,omitempty"`
	// Spec is the spec to run: the Rollout's, with its RolloutStrategy's stages, failure budget
	// and windows when it names one (rollout.Resolve).
	Spec       rolloutv1.RolloutSpec `json:"spec"`
	Candidates []rollout.Candidate   `json:"candidates,omitempty"`
	// Refused are the Clusters admission would refuse the change for ("ns/name: why").
	Refused []string `json:"refused,omitempty"`
	// BlockedBy names an older Rollout, not yet ended, that selects some of the same Clusters.
	BlockedBy string `json:"blockedBy,omitempty"`
}

// SelectClusters lists the Clusters a Rollout selects (its namespace when it names none), asks
// admission about each change with a server-side dry run (the same webhooks the write meets:
// topoflow's, and Cluster API's beside it), and finds an older unfinished Rollout over the same
// Clusters.
func (a *Activities) SelectClusters(ctx context.Context, in SelectInput) (SelectResult, error) {
	var out SelectResult
	if errs := rollout.Validate(&rolloutv1.Rollout{Spec: in.Spec}); len(errs) > 0 {
		out.Invalid = errs.ToAggregate().Error()
		return out, nil
	}
	res, err := a.ResolveStrategy(ctx, in.Rollout.Namespace, in.Spec)
	if err != nil || res.Invalid != "" {
		out.Invalid = res.Invalid
		return out, err
	}
	out.Spec, in.Spec = res.Spec, res.Spec
	clusters, err := a.clustersMatching(ctx, selectionNamespaces(in.Spec, in.Rollout.Namespace), &in.Spec.Clusters.Selector)
	if err != nil {
		return out, err
	}
	// "latest" becomes a number here: the workflow freezes the spec returned, so a revision
	// recorded later does not move later stages.
	if out.Invalid, err = a.resolveClassRevision(ctx, &out.Spec.Change, clusters); err != nil || out.Invalid != "" {
		return out, err
	}
	fragment, err := rollout.Topology(out.Spec.Change)
	if err != nil {
		return out, err
	}
	for i := range clusters {
		c := &clusters[i]
		cand := rollout.Candidate{Namespace: c.Namespace, Name: c.Name, Labels: c.Labels, Windows: windowsOf(c)}
		w, err := writeFor(out.Spec.Change, fragment, c)
		if err != nil {
			return out, err
		}
		if holds(c, w) {
			cand.Holds, cand.Generation = true, c.Generation
			out.Candidates = append(out.Candidates, cand)
			continue // nothing to write, nothing for admission to refuse
		}
		out.Candidates = append(out.Candidates, cand)
		if _, err := a.applyChange(ctx, c, in.Rollout, w, true); err != nil && !kube.IsNotFound(err) {
			if why, refused := refusal(err); refused {
				out.Refused = append(out.Refused, c.Namespace+"/"+c.Name+": "+why)
				continue
			}
			return out, err
		}
	}
	out.BlockedBy, err = a.olderRolloutOver(ctx, in.Rollout, clusters)
	return out, err
}

// ResolveStrategy reads the RolloutStrategy a Rollout's spec names, if any (rollout.Resolved).
func (a *Activities) ResolveStrategy(ctx context.Context, namespace string, spec rolloutv1.RolloutSpec) (rollout.Resolved, error) {
	if spec.StrategyRef == nil {
		return rollout.Resolved{Spec: spec}, nil
	}
	st := &rolloutv1.RolloutStrategy{}
	err := a.Kube.GetTyped(ctx, kube.RolloutStrategies, namespace, spec.StrategyRef.Name, st)
	switch {
	case kube.IsNotFound(err):
		return rollout.Resolved{Spec: spec, Invalid: fmt.Sprintf("spec.strategyRef: RolloutStrategy %s/%s not found", namespace, spec.StrategyRef.Name)}, nil
	case err != nil:
		return rollout.Resolved{}, fmt.Errorf("reading RolloutStrategy %s/%s: %w", namespace, spec.StrategyRef.Name, err)
	}
	if errs := rollout.ValidateStrategy(st); len(errs) > 0 {
		return rollout.Resolved{Spec: spec, Invalid: fmt.Sprintf("RolloutStrategy %s/%s: %v", namespace, st.Name, errs.ToAggregate())}, nil
	}
	return rollout.Resolved{Spec: rollout.Resolve(spec, &st.Spec)}, nil
}

func selectionNamespaces(spec rolloutv1.RolloutSpec, own string) []string {
	if len(spec.Clusters.Namespaces) == 0 {
		return []string{own}
	}
	return spec.Clusters.Namespaces
}

// windowsOf is the Cluster's own maintenance windows (nil: the rollout's).
func windowsOf(c *hubv1.Cluster) []string {
	v, ok := c.Annotations[rollout.WindowsAnnotation]
	if !ok {
		return nil
	}
	return append([]string{}, rollout.SplitAnnotation(v)...)
}

// olderRolloutOver names the oldest Rollout created before this one, not ended, whose selection
// shares a Cluster with this one's (the conflict rule: the younger waits).
func (a *Activities) olderRolloutOver(ctx context.Context, self RolloutRef, ours []hubv1.Cluster) (string, error) {
	items, err := a.Kube.Dynamic.Resource(kube.Rollouts).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("listing Rollouts: %w", err)
	}
	var me *unstructured.Unstructured
	for i := range items.Items {
		if items.Items[i].GetNamespace() == self.Namespace && items.Items[i].GetName() == self.Name {
			me = &items.Items[i]
		}
	}
	mine := map[string]bool{}
	for _, c := range ours {
		mine[c.Namespace+"/"+c.Name] = true
	}
	for i := range items.Items {
		o := &items.Items[i]
		if me == nil || o == me || !olderThan(o, me) {
			continue
		}
		r := &rolloutv1.Rollout{}
		if err := a.Kube.Decode(o, r); err != nil {
			return "", err
		}
		if rollout.Ended(r.Status.Phase, r.Status.ObservedGeneration, r.Generation) {
			continue
		}
		theirs, err := a.clustersMatching(ctx, selectionNamespaces(r.Spec, r.Namespace), &r.Spec.Clusters.Selector)
		if err != nil {
			return "", err
		}
		for _, c := range theirs {
			if mine[c.Namespace+"/"+c.Name] {
				return fmt.Sprintf("Rollout %s/%s (it also selects Cluster %s/%s)", r.Namespace, r.Name, c.Namespace, c.Name), nil
			}
		}
	}
	return "", nil
}

func olderThan(a, b *unstructured.Unstructured) bool {
	ta, tb := a.GetCreationTimestamp().Time, b.GetCreationTimestamp().Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.GetNamespace()+"/"+a.GetName() < b.GetNamespace()+"/"+b.GetName()
}

// holds says whether the Cluster already holds the change's write: its spec.topology has every
// value of the fragment and its annotations the pin (rollout.Write.HeldBy, on the v1beta2
// topology as JSON, the fragment's shape).
func holds(c *hubv1.Cluster, w rollout.Write) bool {
	if !c.Spec.Topology.IsDefined() {
		return false
	}
	topo, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c.Spec.Topology)
	return err == nil && w.HeldBy(topo, c.Annotations)
}

// writeFor is the change's write to one Cluster (fragment: the change's topology), its pin naming
// a revision of the Cluster's class.
func writeFor(change rolloutv1.Change, fragment map[string]any, c *hubv1.Cluster) (rollout.Write, error) {
	return rollout.WriteFor(change, fragment, c.Spec.Topology.ClassRef.Name)
}

// applyChange writes the change to one Cluster with server-side apply as the rollout's field
// manager, with the claim annotation naming the Rollout and the pin of a classRevision change
// (dryRun: admission only); the answer is the Cluster as v1beta2. Every Rollout writes as that
// one manager, so the apply also names what earlier Rollouts wrote and the rollout's manager
// still owns, at the Cluster's values (kube.Client.ApplyKeeping): server-side apply would
// otherwise remove it (a class rebase after a version rollout would remove the version). Through
// the client that remembers the written object in the worker's cache: the next read of the
// Cluster must not see it from before the write (a hand change, it would say).
func (a *Activities) applyChange(ctx context.Context, c *hubv1.Cluster, by RolloutRef, w rollout.Write, dryRun bool) (*unstructured.Unstructured, error) {
	return a.Kube.ApplyKeeping(ctx, changeObject(c, by, w), rollout.FieldManager, dryRun)
}

// changeObject is the Cluster a change's apply sends: v1beta2, with only the write's fields (no
// spec when the change moves only a revision pin). On a server that stores v1beta2 it goes out as
// it is: the request the v1beta1 object made before the model moved to the hub, which the client
// converted then (TestChangeWireUnchanged), so the managed fields of the Clusters Rollouts wrote
// stay as they were. On a server that serves only v1beta1 the client converts it back.
func changeObject(c *hubv1.Cluster, by RolloutRef, w rollout.Write) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hubv1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace,
			"annotations": w.Annotations(by.String())},
	}}
	if len(w.Topology) > 0 {
		obj.Object["spec"] = map[string]any{"topology": w.Topology}
	}
	return obj
}

// refusal says whether an error is admission's (or the schema's) answer to the change, and why.
func refusal(err error) (string, bool) {
	if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) {
		return err.Error(), true
	}
	return "", false
}

// WriteInput asks to write a Rollout's change to some Clusters.
type WriteInput struct {
	Rollout  RolloutRef       `json:"rollout"`
	Change   rolloutv1.Change `json:"change"`
	Clusters []string         `json:"clusters"`
}

// WriteRolloutChange writes the change to each Cluster (none when it already holds) and says
// which generation to follow, or why the change was refused. The Clusters are written
// writeConcurrency at a time: a stage's Clusters start together, not one apply after another.
func (a *Activities) WriteRolloutChange(ctx context.Context, in WriteInput) ([]rollout.WriteResult, error) {
	fragment, err := rollout.Topology(in.Change)
	if err != nil {
		return nil, err
	}
	out := make([]rollout.WriteResult, len(in.Clusters))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for i, key := range in.Clusters {
		g.Go(func() (err error) {
			out[i], err = a.writeChange(gctx, in.Rollout, key, in.Change, fragment)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// writeConcurrency bounds the Rollout's writes in flight at once.
const writeConcurrency = 8

// writeChange writes the change to one Cluster (key "namespace/name").
func (a *Activities) writeChange(ctx context.Context, by RolloutRef, key string, change rolloutv1.Change, fragment map[string]any) (rollout.WriteResult, error) {
	ns, name, _ := strings.Cut(key, "/")
	res := rollout.WriteResult{Key: key}
	c, err := a.liveCluster(ctx, ns, name)
	switch {
	case err != nil:
		return res, err
	case c == nil:
		res.Gone = true
		return res, nil
	}
	w, err := writeFor(change, fragment, c)
	switch {
	case err != nil:
		return res, err
	case holds(c, w):
		res.Generation = c.Generation
		return res, nil
	}
	if res.Refused, err = a.pinMissing(ctx, c, w); err != nil || res.Refused != "" {
		return res, err
	}
	u, err := a.applyChange(ctx, c, by, w, false)
	if kube.IsNotFound(err) {
		res.Gone = true // deleted since it was read
		return res, nil
	}
	if why, refused := refusal(err); refused {
		res.Refused = why
		return res, nil
	} else if err != nil {
		return res, fmt.Errorf("writing Cluster %s: %w", key, err)
	}
	res.Generation = u.GetGeneration()
	a.Log.InfoContext(ctx, "rollout wrote a Cluster", "rollout", by.String(), "cluster", key, "generation", res.Generation)
	return res, nil
}

// RolloutObserveInput asks about a Rollout and the Clusters it follows.
type RolloutObserveInput struct {
	Rollout RolloutRef       `json:"rollout"`
	Change  rolloutv1.Change `json:"change"`
	// Clusters in flight: key -> the generation written.
	Clusters map[string]int64 `json:"clusters,omitempty"`
	// Windows are the lists of maintenance windows to lay out (rollout.State.WindowLists).
	Windows [][]string `json:"windows,omitempty"`
}

// RolloutObservation is the Rollout, what its Clusters in flight show, and when the windows asked
// for are open.
type RolloutObservation struct {
	Rollout  RolloutRead                 `json:"rollout"`
	Clusters map[string]rollout.Seen     `json:"clusters,omitempty"`
	Windows  map[string]rollout.Openings `json:"windows,omitempty"`
}

// ObserveRollout reads the Rollout and, for each Cluster in flight, whether the change still holds
// and whether the Cluster is done with it (rollout.Settled). It also lays out when the windows
// asked for open, on this host's time zone rules, so the workflow reads none.
func (a *Activities) ObserveRollout(ctx context.Context, in RolloutObserveInput) (RolloutObservation, error) {
	var out RolloutObservation
	var err error
	if len(in.Windows) > 0 {
		out.Windows = rollout.WindowOpenings(in.Windows, time.Now())
	}
	if out.Rollout, err = a.ReadRollout(ctx, in.Rollout); err != nil {
		return out, err
	}
	fragment, err := rollout.Topology(in.Change)
	if err != nil {
		return out, err
	}
	out.Clusters = map[string]rollout.Seen{}
	for key, written := range in.Clusters {
		seen, err := a.seeCluster(ctx, key, written, in.Change, fragment)
		if err != nil {
			return out, err
		}
		out.Clusters[key] = seen
	}
	return out, nil
}

func (a *Activities) seeCluster(ctx context.Context, key string, written int64, change rolloutv1.Change, fragment map[string]any) (rollout.Seen, error) {
	ns, name, _ := strings.Cut(key, "/")
	// Read as stored (no webhook defaults: a Cluster they would refuse is still followed, and a
	// read error is retried, never final).
	c := &hubv1.Cluster{}
	err := a.Kube.GetTyped(ctx, kube.Clusters, ns, name, c)
	if kube.IsNotFound(err) {
		return rollout.Seen{Gone: true}, nil
	}
	if err != nil {
		return rollout.Seen{}, fmt.Errorf("reading Cluster %s: %w", key, err)
	}
	w, err := writeFor(change, fragment, c)
	if err != nil {
		return rollout.Seen{}, err
	}
	seen := rollout.Seen{Holds: holds(c, w)}
	if !seen.Holds {
		// A hand change fails the Cluster for good: confirm it on the API server itself, not a
		// cache that may lag (a worker that restarted, a watch that was cut).
		live, err := a.liveCluster(ctx, ns, name)
		if err != nil {
			return rollout.Seen{}, err
		}
		if live == nil {
			return rollout.Seen{Gone: true}, nil
		}
		c = live
		seen.Holds = holds(c, w)
	}
	class, err := a.namedClass(ctx, c)
	if err != nil || class == nil {
		seen.Why = fmt.Sprintf("ClusterClass %s not readable: %v", c.Spec.Topology.ClassRef.Name, err)
		return seen, nil
	}
	running, err := a.runningOf(ctx, c, class)
	if err != nil {
		return seen, err
	}
	gen, why := rollout.Reconciled(c)
	p := rollout.Progress{ReconciledFor: gen, Why: why, Running: running,
		Pin: c.Annotations[revision.PinAnnotation], Applied: c.Annotations[revision.AppliedAnnotation]}
	seen.Done, seen.Why = rollout.Settled(p, change, written)
	return seen, nil
}

// RolloutStatusInput is the status a Rollout's workflow wants it to show, and the Events to
// record on it.
type RolloutStatusInput struct {
	Rollout RolloutRef              `json:"rollout"`
	Status  rolloutv1.RolloutStatus `json:"status"`
	Events  []rollout.Event         `json:"events,omitempty"`
	// Selection is the running rollout's (nil before it started): the Clusters it matches now
	// that the status does not list are reported as late matches.
	Selection *rolloutv1.ClusterSelection `json:"selection,omitempty"`
}

// SetRolloutStatus writes the Rollout's status, keeping the conditions' transition times, with the
// late matches (rollout.AddLateMatches) read from the worker's cache.
func (a *Activities) SetRolloutStatus(ctx context.Context, in RolloutStatusInput) error {
	r := &rolloutv1.Rollout{}
	if err := a.Kube.GetTyped(ctx, kube.Rollouts, in.Rollout.Namespace, in.Rollout.Name, r); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Rollout %s: %w", in.Rollout, err)
	}
	st := in.Status
	if in.Selection != nil {
		matching, err := a.clusterKeysMatching(ctx, selectionNamespaces(rolloutv1.RolloutSpec{Clusters: *in.Selection}, in.Rollout.Namespace), &in.Selection.Selector)
		if err != nil {
			return err
		}
		rollout.AddLateMatches(&st, matching)
	}
	conds := slices.Clone(r.Status.Conditions)
	now := metav1.NewTime(time.Now())
	for _, c := range st.Conditions {
		c.LastTransitionTime = now
		meta.SetStatusCondition(&conds, c)
	}
	st.Conditions = conds
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": rolloutv1.GroupVersion.String(), "kind": "Rollout",
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace}, "status": body}}
	if _, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager); err != nil {
		return fmt.Errorf("writing the status of Rollout %s: %w", in.Rollout, err)
	}
	c := st.Counts
	for state, n := range map[string]int32{"pending": c.Pending, "waiting": c.Waiting, "changing": c.Changing, "done": c.Done, "failed": c.Failed, "skipped": c.Skipped} {
		metrics.RolloutClusters.WithLabelValues(in.Rollout.String(), state).Set(float64(n))
	}
	for _, s := range st.Stages {
		if s.StartedAt != nil && s.FinishedAt != nil {
			metrics.RolloutStageSeconds.WithLabelValues(in.Rollout.String(), s.Name).Set(s.FinishedAt.Sub(s.StartedAt.Time).Seconds())
		}
	}
	if a.Events != nil {
		ref := &corev1.ObjectReference{APIVersion: rolloutv1.GroupVersion.String(), Kind: "Rollout",
			Namespace: r.Namespace, Name: r.Name, UID: r.UID, ResourceVersion: r.ResourceVersion}
		for _, e := range in.Events {
			kind := corev1.EventTypeNormal
			if e.Warning {
				kind = corev1.EventTypeWarning
			}
			a.Events.Event(ref, kind, e.Reason, e.Message)
		}
	}
	return nil
}

// clusterKeysMatching lists the keys ("namespace/name") of the Clusters a selection matches,
// decoding none.
func (a *Activities) clusterKeysMatching(ctx context.Context, namespaces []string, sel *metav1.LabelSelector) ([]string, error) {
	items, err := a.listMatching(ctx, namespaces, sel, kube.Clusters, a.Kube.ListNames)
	out := make([]string, len(items))
	for i := range items {
		out[i] = items[i].GetNamespace() + "/" + items[i].GetName()
	}
	return out, err
}

// listMatching lists (with list: kube.Client.List or ListNames) the Clusters a label selector
// matches in the namespaces (none: all), as gvr's version, from the worker's cache.
func (a *Activities) listMatching(ctx context.Context, namespaces []string, sel *metav1.LabelSelector, gvr schema.GroupVersionResource,
	list func(context.Context, schema.GroupVersionResource, string, string) ([]unstructured.Unstructured, error)) ([]unstructured.Unstructured, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, err
	}
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	var out []unstructured.Unstructured
	for _, ns := range namespaces {
		items, err := list(ctx, gvr, ns, s.String())
		if err != nil {
			return nil, fmt.Errorf("listing Clusters in %q: %w", ns, err)
		}
		out = append(out, items...)
	}
	return out, nil
}

// ClassExists says whether a ClusterClass exists (admission of a Rollout's class rebase).
func (a *Activities) ClassExists(ctx context.Context, namespace, name string) (bool, error) {
	_, err := a.Kube.GetUncached(ctx, kube.ClusterClasses, namespace, name)
	if kube.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// liveCluster reads a Cluster on the hub from the API server itself, not the worker's cache (nil,
// nil when it does not exist): a write starts from it, and a hand change is confirmed on it.
func (a *Activities) liveCluster(ctx context.Context, ns, name string) (*hubv1.Cluster, error) {
	return readUncached[hubv1.Cluster](ctx, a, kube.Clusters, ns, name)
}

// namedClass reads the ClusterClass a Cluster names, on the hub (nil, nil when it names none or
// the class does not exist: the rollout says so and keeps following the Cluster).
func (a *Activities) namedClass(ctx context.Context, c *hubv1.Cluster) (*hubv1.ClusterClass, error) {
	name := c.Spec.Topology.ClassRef.Name
	if name == "" {
		return nil, nil
	}
	class := &hubv1.ClusterClass{}
	ns := c.ClassNamespace()
	if err := a.Kube.GetTyped(ctx, kube.ClusterClasses, ns, name, class); err != nil {
		if kube.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClusterClass %s/%s: %w", ns, name, err)
	}
	return class, nil
}
