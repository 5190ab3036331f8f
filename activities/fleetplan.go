package activities

import (
	"context"
	"fmt"
	"sort"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/model/validation"
)

// Fleet plans (`starter rollout plan`, `starter plan --class`): the reads, which change nothing.
// Each Cluster's plan input is read as the change would leave the Cluster, with the same reads as
// the apply's (loadFor, planInput); plan.Categorize, pure, then plans it. The one request that is
// not a read is the server-side dry run that asks admission about the change, the one the rollout
// itself sends when it starts (applyChange with dryRun): the API server stores nothing.

// RolloutPlanRead is what a Rollout's fleet plan is made from.
type RolloutPlanRead struct {
	Rollout    RolloutRef `json:"rollout"`
	Generation int64      `json:"generation"`
	// Spec is the Rollout's spec with its RolloutStrategy's stages, budget and windows.
	Spec rolloutv1.RolloutSpec `json:"spec"`
	// Invalid says why the rollout would not start at all (its spec, its strategy, overlapping
	// stages); nothing else is read then.
	Invalid string `json:"invalid,omitempty"`
	// BlockedBy names an older Rollout, not ended, over some of the same Clusters: this one
	// would wait for it.
	BlockedBy string `json:"blockedBy,omitempty"`
	// Clusters are the Clusters the rollout selects now, in the order it would change them (stage
	// by stage, by namespace and name within a stage).
	Clusters []plan.ClusterInput `json:"-"`
	// Skipped are the selected Clusters no stage takes.
	Skipped []string `json:"skipped,omitempty"`
}

// ReadRolloutPlan reads a Rollout and, for every Cluster it selects now, the plan input of the
// Cluster as its change would leave it: the Cluster the rollout's server-side apply would store
// (a dry run, through admission: a refusal is the Cluster's answer), or the Cluster itself when
// the change already holds (the rollout writes nothing). Unlike ReadRollout it adds no finalizer.
func (a *Activities) ReadRolloutPlan(ctx context.Context, ref RolloutRef) (*RolloutPlanRead, error) {
	r := &rolloutv1.Rollout{}
	if err := a.Kube.GetTyped(ctx, kube.Rollouts, ref.Namespace, ref.Name, r); err != nil {
		return nil, fmt.Errorf("reading Rollout %s: %w", ref, err)
	}
	return a.readRolloutPlanOf(ctx, ref, r)
}

// readRolloutPlanOf is ReadRolloutPlan of the Rollout r, already read.
func (a *Activities) readRolloutPlanOf(ctx context.Context, ref RolloutRef, r *rolloutv1.Rollout) (*RolloutPlanRead, error) {
	out := &RolloutPlanRead{Rollout: ref, Generation: r.Generation, Spec: r.Spec}
	if errs := rollout.Validate(r); len(errs) > 0 {
		out.Invalid = errs.ToAggregate().Error()
		return out, nil
	}
	res, err := a.ResolveStrategy(ctx, ref.Namespace, r.Spec)
	if err != nil {
		return nil, err
	}
	if res.Invalid != "" {
		out.Invalid = res.Invalid
		return out, nil
	}
	out.Spec = res.Spec
	clusters, err := a.clustersMatching(ctx, selectionNamespaces(out.Spec, ref.Namespace), &out.Spec.Clusters.Selector)
	if err != nil {
		return nil, err
	}
	if out.Invalid, err = a.resolveClassRevision(ctx, &out.Spec.Change, clusters); err != nil || out.Invalid != "" {
		return out, err
	}
	cands := make([]rollout.Candidate, len(clusters))
	byKey := map[string]*hubv1.Cluster{}
	for i := range clusters {
		c := &clusters[i]
		cands[i] = rollout.Candidate{Namespace: c.Namespace, Name: c.Name, Labels: c.Labels, Windows: windowsOf(c)}
		byKey[cands[i].Key()] = c
	}
	frozen, err := rollout.Freeze(out.Spec, r.Generation, cands)
	if err != nil {
		out.Invalid = err.Error()
		return out, nil
	}
	fragment, err := rollout.Topology(out.Spec.Change)
	if err != nil {
		return nil, err
	}
	order := frozen.Clusters
	sort.SliceStable(order, func(i, j int) bool { return order[i].Stage < order[j].Stage })
	var taken []rollout.Cluster
	for _, fc := range order {
		if fc.Stage < 0 {
			out.Skipped = append(out.Skipped, fc.Key())
			continue
		}
		taken = append(taken, fc)
	}
	out.Clusters = make([]plan.ClusterInput, len(taken))
	eachCluster(ctx, len(taken), func(ctx context.Context, i int) {
		out.Clusters[i] = a.rolloutClusterInput(ctx, ref, byKey[taken[i].Key()], out.Spec.Change, fragment)
		out.Clusters[i].Stage = out.Spec.Stages[taken[i].Stage].Name
	})
	if out.BlockedBy, err = a.olderRolloutOver(ctx, ref, clusters); err != nil {
		return nil, err
	}
	return out, nil
}

// rolloutClusterInput is one Cluster of a Rollout's plan (see ReadRolloutPlan): a classRevision
// change's pin is in the changed Cluster, so it is computed from the revision it moves to.
func (a *Activities) rolloutClusterInput(ctx context.Context, by RolloutRef, c *hubv1.Cluster, change rolloutv1.Change, fragment map[string]any) plan.ClusterInput {
	ci := plan.ClusterInput{Cluster: c.Namespace + "/" + c.Name}
	stored := c.DeepCopy()
	changed := c.DeepCopy()
	w, err := writeFor(change, fragment, c)
	if err != nil {
		ci.Err = err.Error()
		return ci
	}
	if !holds(c, w) {
		u, err := a.applyChange(ctx, c, by, w, true)
		if why, refused := refusal(err); refused {
			ci.Refused = why
			return ci
		}
		if err != nil {
			ci.Err = fmt.Sprintf("asking admission about the change (server-side dry run): %v", err)
			return ci
		}
		changed = &hubv1.Cluster{}
		if err := a.Kube.Decode(u, changed); err != nil {
			ci.Err = fmt.Sprintf("decoding the changed Cluster: %v", err)
			return ci
		}
		ci.WritesCluster = true
	}
	return a.hubClusterInput(ctx, ci, changed, stored, nil, nil)
}

// hubClusterInput completes a fleet plan's Cluster: the plan input of changed (the Cluster as the
// change leaves it; stored is the Cluster now, the update rules' old object), computed with class
// and the templates given when given (an edited ClusterClass), and the hooks no extension handles.
func (a *Activities) hubClusterInput(ctx context.Context, ci plan.ClusterInput, changed, stored *hubv1.Cluster, class *hubv1.ClusterClass, templates map[string]*unstructured.Unstructured) plan.ClusterInput {
	for _, c := range []*hubv1.Cluster{changed, stored} {
		if err := validation.DefaultCluster(c); err != nil {
			ci.Err = err.Error()
			return ci
		}
	}
	if skip := skipOf(changed); skip != nil {
		ci.Err = fmt.Sprintf("the Cluster is not managed now (%s): topoflow would write nothing for it", skip.Skip)
		return ci
	}
	l, err := a.loadFor(ctx, changed, class, templates)
	if err != nil {
		ci.Err = err.Error()
		return ci
	}
	if ci.Plan, err = a.planInput(ctx, l, stored); err != nil {
		ci.Err = err.Error()
		return ci
	}
	// Every hook a selecting ExtensionConfig handles is called; the rest pass without a call. A
	// read error counts every hook as called.
	ci.Unhandled, _ = (&runtimeext.Client{Kube: a.Kube}).Unhandled(ctx, changed.Namespace)
	return ci
}

// ClassPlanRead is what a fleet plan of an edited ClusterClass is made from.
type ClassPlanRead struct {
	// Class is "namespace/name".
	Class string `json:"class"`
	// Exists: the class is stored (else no Cluster can use it, and nothing else is read).
	Exists bool `json:"exists"`
	// Refused is admission's answer to the edit (a server-side dry run of the update): then no
	// Cluster changes.
	Refused string `json:"refused,omitempty"`
	// Revisions: the class opted in to revisions, so the edit itself changes no Cluster; the
	// Clusters are planned as a Rollout moving them to it would change them.
	Revisions bool                `json:"revisions,omitempty"`
	Clusters  []plan.ClusterInput `json:"-"`
}

// ReadClassPlan reads, for every Cluster that uses the class (same namespace and name), the plan
// input of the Cluster computed with the edited class instead of the stored one. edited is the
// class as written in a file (cluster.x-k8s.io v1beta1 or v1beta2); templates are documents of
// the same file, used instead of the stored templates of the same kind, namespace and name (an
// edit that names new templates). The edit is put to admission with a server-side dry run of the
// update (the ClusterClass webhook checks it against the Clusters using it); the class planned is
// the one that update would store (defaults included).
func (a *Activities) ReadClassPlan(ctx context.Context, edited *unstructured.Unstructured, templates map[string]*unstructured.Unstructured) (*ClassPlanRead, error) {
	if edited.GetNamespace() == "" {
		edited.SetNamespace("default")
	}
	out := &ClassPlanRead{Class: edited.GetNamespace() + "/" + edited.GetName()}
	stored, err := a.Kube.GetUncached(ctx, kube.V1Beta1ClusterClasses, edited.GetNamespace(), edited.GetName())
	if kube.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ClusterClass %s: %w", out.Class, err)
	}
	out.Exists = true
	out.Revisions = revision.On(stored.GetAnnotations()) || revision.On(edited.GetAnnotations())
	class, refused, err := a.classAsUpdated(ctx, edited, stored.GetResourceVersion())
	if err != nil {
		return nil, err
	}
	out.Refused = refused
	users, err := a.clustersUsing(ctx, class.Namespace, class.Name)
	if err != nil {
		return nil, err
	}
	sort.Slice(users, func(i, j int) bool {
		return users[i].Namespace+"/"+users[i].Name < users[j].Namespace+"/"+users[j].Name
	})
	out.Clusters = make([]plan.ClusterInput, len(users))
	eachCluster(ctx, len(users), func(ctx context.Context, i int) {
		c := &users[i]
		ci := plan.ClusterInput{Cluster: c.Namespace + "/" + c.Name}
		if refused != "" {
			ci.Refused = "the ClusterClass edit is refused: " + refused
			out.Clusters[i] = ci
			return
		}
		out.Clusters[i] = a.hubClusterInput(ctx, ci, c.DeepCopy(), c.DeepCopy(), class.DeepCopy(), templates)
	})
	return out, nil
}

// eachCluster runs read for the Clusters 0..n-1, writeConcurrency at a time (as a rollout writes
// them); read records its own outcome, errors included.
func eachCluster(ctx context.Context, n int, read func(context.Context, int)) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for i := range n {
		g.Go(func() error {
			read(gctx, i)
			return nil
		})
	}
	_ = g.Wait()
}

// classAsUpdated asks admission about an update of the class to edited (a server-side dry run, in
// the version edited is written in, on the stored resourceVersion) and returns the class that
// update would store, in topoflow's version; refused is admission's answer when it refuses (the
// class is then edited as written, for the Clusters' list).
func (a *Activities) classAsUpdated(ctx context.Context, edited *unstructured.Unstructured, resourceVersion string) (*hubv1.ClusterClass, string, error) {
	gvr, err := a.Kube.ResourceFor(edited.GetAPIVersion(), edited.GetKind())
	if err != nil {
		return nil, "", err
	}
	obj := edited.DeepCopy()
	obj.SetResourceVersion(resourceVersion)
	refused := ""
	u, err := a.Kube.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Update(ctx, obj,
		metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: PlanFieldManager})
	if why, ok := refusal(err); ok {
		refused, u = why, obj
	} else if err != nil {
		return nil, "", fmt.Errorf("asking admission about the ClusterClass edit (server-side dry run): %w", err)
	}
	if u, _, err = conversion.ToV1Beta2(u); err != nil {
		return nil, "", fmt.Errorf("reading the edited ClusterClass as %s: %w", hubv1.GroupVersion, err)
	}
	class := &hubv1.ClusterClass{}
	if err := a.Kube.Decode(u, class); err != nil {
		return nil, "", fmt.Errorf("decoding the edited ClusterClass: %w", err)
	}
	validation.DefaultClusterClass(class)
	return class, refused, nil
}

// PlanFieldManager is the field manager of a fleet plan's dry runs (nothing is stored).
const PlanFieldManager = "topoflow-plan"
