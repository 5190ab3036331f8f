package activities

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/runtimeext"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/model/validation"
)

// Scope says which part of the topology ApplyTopology writes.
type Scope string

const (
	// ScopeControlPlane is the infrastructure cluster, the control plane and its machine
	// template, and the Cluster's references to them.
	ScopeControlPlane Scope = "ControlPlane"
	// ScopeWorkers is the MachineDeployments and their templates; pools no longer in the
	// topology are deleted.
	ScopeWorkers Scope = "Workers"
)

// ApplyInput asks for one part of a Cluster's topology to be applied.
type ApplyInput struct {
	Cluster ClusterRef `json:"cluster"`
	Scope   Scope      `json:"scope"`
	// HoldCreate keeps a Cluster that does not exist yet from being created (its
	// BeforeClusterCreate hook has not passed); existing Clusters are reconciled as usual.
	HoldCreate bool `json:"holdCreate,omitempty"`
	// Gate, when set, holds version moves until the upgrade hooks allow them.
	Gate *UpgradeGate `json:"gate,omitempty"`
	// Seen are the objects the events that started this pass were about: they are read no
	// older than the events showed them (see kube.Client.AwaitSeen).
	Seen []corev1.ObjectReference `json:"seen,omitempty"`
	// Observe (control plane scope) also reports what the providers say (ApplyResult.Provisioning),
	// sparing the workflow a step of its own.
	Observe bool `json:"observe,omitempty"`
}

// UpgradeGate holds version moves for the upgrade lifecycle hooks (see upgrade.Gate).
type UpgradeGate = upgrade.Gate

// ApplyResult says what was found and applied. It is small on purpose: workflow history keeps it.
type ApplyResult struct {
	// ClusterGone: the Cluster no longer exists. Deleting: it has a deletion timestamp.
	ClusterGone bool `json:"clusterGone,omitempty"`
	Deleting    bool `json:"deleting,omitempty"`
	// OkToDelete: the Cluster being deleted carries runtime.cluster.x-k8s.io/ok-to-delete, so its
	// BeforeClusterDelete hook passed already (in an earlier run, or for Cluster API).
	OkToDelete bool `json:"okToDelete,omitempty"`
	// NoTopology: the Cluster is not managed by a ClusterClass.
	NoTopology bool `json:"noTopology,omitempty"`
	// Paused: spec.paused or the cluster.x-k8s.io/paused annotation is set; nothing was applied.
	Paused bool `json:"paused,omitempty"`
	// CreateHeld: the Cluster does not exist yet and creation is held (HoldCreate); nothing applied.
	CreateHeld bool   `json:"createHeld,omitempty"`
	Generation int64  `json:"generation,omitempty"`
	Class      string `json:"class,omitempty"`
	Version    string `json:"version,omitempty"`
	// HasInfrastructure is false for classes without an infrastructure cluster (seed 003).
	HasInfrastructure bool `json:"hasInfrastructure,omitempty"`
	// Applied lists "Kind name" of every object applied; Deleted of every object deleted.
	Applied []string `json:"applied,omitempty"`
	// ExternalPatches says what each external patch handler answered (for the UI).
	ExternalPatches []string `json:"externalPatches,omitempty"`
	Deleted         []string `json:"deleted,omitempty"`
	// MachineDeployments are the topology names of the pools in the desired state.
	MachineDeployments []string `json:"machineDeployments,omitempty"`
	// Upgrade is set while an upgrade is in progress.
	Upgrade *UpgradeSummary `json:"upgrade,omitempty"`
	// RollingOut names pools whose machines are being replaced (an upgrade is complete only when
	// none is).
	RollingOut []string `json:"rollingOut,omitempty"`
	// Provisioning is what ObserveProvisioning reports, read after the applies (ApplyInput.Observe;
	// nil when it could not be read: the workflow then asks on its own).
	Provisioning *Provisioning `json:"provisioning,omitempty"`
	// SkipHooks are the lifecycle hooks the workflow lets pass without a call: no Runtime
	// Extension handles them for this Cluster's namespace (runtimeext.Client.Unhandled) and their
	// call has nothing else to do (see announces).
	SkipHooks []string `json:"skipHooks,omitempty"`
}

// loaded is everything read from the API server for one computation.
type loaded struct {
	cluster *clusterv1.Cluster
	class   *clusterv1.ClusterClass
	input   desired.Input
	// scopeTemplates marks, by RefKey, which current templates belong to which apply scope.
	scopeTemplates map[string]bool
	// extensionCalls collects the external patch answers of the computation.
	extensionCalls []string
	// currentMDs and currentMPs are the topology-owned pools of the Cluster, currentMHCs its
	// topology-owned health checks.
	currentMDs  []clusterv1.MachineDeployment
	currentMPs  []clusterv1.MachinePool
	currentMHCs []clusterv1.MachineHealthCheck
	// uids are the uids of everything read that exists: every apply intent for one of them is
	// an update (desired.UIDs.Stamp).
	uids desired.UIDs
}

// ApplyTopology computes the Cluster's desired topology from its ClusterClass and applies the
// part named by the scope with server-side apply (field manager capi-topology).
func (a *Activities) ApplyTopology(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	res, err := a.applyTopology(ctx, in)
	if err != nil || res == nil || res.ClusterGone || res.NoTopology {
		return res, err
	}
	// From the cache: the workflow needs no step of its own for a hook nobody handles. A read
	// error only costs those steps.
	if unhandled, err := (&runtimeext.Client{Kube: a.Kube}).Unhandled(ctx, in.Cluster.Namespace); err == nil {
		for _, hook := range unhandled {
			if !announces(hook) {
				res.SkipHooks = append(res.SkipHooks, hook)
			}
		}
	}
	return res, nil
}

func (a *Activities) applyTopology(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	if err := a.Kube.AwaitSeen(ctx, in.Seen); err != nil {
		return nil, err
	}
	l, res, err := a.load(ctx, in.Cluster)
	if err != nil || res != nil {
		return res, err
	}
	if in.HoldCreate && l.cluster.Spec.ControlPlaneRef == nil && l.cluster.Spec.InfrastructureRef == nil {
		return &ApplyResult{CreateHeld: true, Generation: l.cluster.Generation, Class: l.class.Name, Version: l.cluster.Spec.Topology.Version}, nil
	}
	dec, err := topology.Decide(topology.Input{Desired: l.input, Gate: in.Gate, Planner: a.upgradePlanner(ctx, l)})
	if err != nil {
		return nil, computeFailed(err)
	}
	state := dec.State
	res = &ApplyResult{
		ExternalPatches:   l.extensionCalls,
		Upgrade:           upgradeSummary(l, dec),
		RollingOut:        dec.Result.RollingOut,
		Generation:        l.cluster.Generation,
		Class:             l.class.Name,
		Version:           l.cluster.Spec.Topology.Version,
		HasInfrastructure: state.InfrastructureCluster != nil,
	}
	for _, md := range state.MachineDeployments {
		res.MachineDeployments = append(res.MachineDeployments, md.TopologyName)
	}

	l.scopeTemplates = map[string]bool{}
	if in.Scope == ScopeControlPlane && l.input.Current.ControlPlane != nil {
		if ref, err := contract.ObjectRef(l.input.Current.ControlPlane, contract.ControlPlaneInfrastructureRef); err == nil && ref != nil {
			l.scopeTemplates[desired.RefKeyIn(ref, l.cluster.Namespace)] = true
		}
	}
	objs, err := state.Objects()
	if err != nil {
		return nil, invalid(err)
	}
	switch in.Scope {
	case ScopeControlPlane:
		// The finalizer comes first: from now on deletion waits for the ordered teardown.
		if err := a.setFinalizer(ctx, in.Cluster, true); err != nil {
			return nil, err
		}
		if err := a.applyControlPlane(ctx, l, state, res); err != nil {
			return nil, err
		}
		a.changeEvents(l.cluster, topology.ControlPlaneChanges(l.input.Current, state))
		if err := a.deleteRotated(ctx, l, state, objs, res); err != nil {
			return nil, err
		}
		if in.Observe {
			if p, err := a.ObserveProvisioning(ctx, ObserveInput{Cluster: in.Cluster, HasInfrastructure: res.HasInfrastructure}); err == nil {
				res.Provisioning = p
			}
		}
	case ScopeWorkers:
		if err := a.applyWorkers(ctx, l, state, res); err != nil {
			return nil, err
		}
		a.changeEvents(l.cluster, topology.WorkerChanges(l.input.Current, state))
		if err := a.deletePoolTemplates(ctx, l, state, objs, res); err != nil {
			return nil, err
		}
	default:
		return nil, invalid(fmt.Errorf("unknown scope %q", in.Scope))
	}
	return res, nil
}

// computeFailed classifies an error of the desired-state computation for the workflow.
func computeFailed(err error) error {
	var mt *desired.MissingTemplateError
	var te *transientError
	switch {
	case errors.As(err, &mt):
		return missing("%s", err)
	case isExtensionError(err):
		return extensionFailed(err)
	case errors.As(err, &te):
		return err // reading an ExtensionConfig failed: the activity retries
	}
	return invalid(err)
}

// load reads the Cluster, its class, the class's templates and the current topology objects. A
// non-nil result means there is nothing to compute (the Cluster is gone, deleting, or unmanaged).
func (a *Activities) load(ctx context.Context, ref ClusterRef) (*loaded, *ApplyResult, error) {
	cluster, err := a.readCluster(ctx, ref)
	if err != nil {
		if kube.IsNotFound(err) {
			return nil, &ApplyResult{ClusterGone: true}, nil
		}
		var fe *decode.FieldError
		if errors.As(err, &fe) {
			return nil, nil, invalid(err)
		}
		return nil, nil, fmt.Errorf("reading Cluster %s: %w", ref, err)
	}
	if cluster.DeletionTimestamp != nil {
		_, ok := cluster.Annotations[runtimev1.OkToDeleteAnnotation]
		return nil, &ApplyResult{Deleting: true, OkToDelete: ok, Generation: cluster.Generation}, nil
	}
	if cluster.Spec.Topology == nil {
		return nil, &ApplyResult{NoTopology: true, Generation: cluster.Generation}, nil
	}
	if _, annotated := cluster.Annotations[labels.Paused]; cluster.Spec.Paused || annotated {
		return nil, &ApplyResult{Paused: true, Generation: cluster.Generation, HasInfrastructure: cluster.Spec.InfrastructureRef != nil}, nil
	}

	class := &clusterv1.ClusterClass{}
	classNS := cluster.ClassNamespace()
	if err := a.Kube.GetTyped(ctx, kube.ClusterClasses, classNS, cluster.Spec.Topology.Class, class); err != nil {
		if kube.IsNotFound(err) {
			return nil, nil, missing("ClusterClass %s/%s (spec.topology.class) not found", classNS, cluster.Spec.Topology.Class)
		}
		var fe *decode.FieldError
		if errors.As(err, &fe) {
			return nil, nil, invalid(err)
		}
		return nil, nil, fmt.Errorf("reading ClusterClass %s/%s: %w", classNS, cluster.Spec.Topology.Class, err)
	}

	if errs := validation.ClusterClass(class, nil, nil); len(errs) > 0 {
		return nil, nil, invalid(&desired.InvalidError{Object: "ClusterClass " + class.Namespace + "/" + class.Name, Errs: errs})
	}
	if discoversVariables(class) && class.Status.ObservedGeneration < class.Generation {
		// Its variables come from extensions: wait for the class's status (an event) so the
		// Cluster's variables are checked against the discovered definitions.
		return nil, nil, missing("ClusterClass %s/%s: variable discovery has not run for generation %d yet (status.observedGeneration %d)",
			class.Namespace, class.Name, class.Generation, class.Status.ObservedGeneration)
	}

	templates := map[string]*unstructured.Unstructured{}
	var absent []string
	for _, tr := range desired.TemplateRefs(class) {
		key := desired.RefKey(tr.Ref)
		if _, seen := templates[key]; seen {
			continue
		}
		obj, err := a.Kube.GetRef(ctx, tr.Ref, class.Namespace)
		if kube.IsNotFound(err) {
			absent = append(absent, fmt.Sprintf("%s %s/%s (%s)", tr.Ref.Kind, tr.Ref.Namespace, tr.Ref.Name, tr.Field))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading template %s %s/%s: %w", tr.Ref.Kind, tr.Ref.Namespace, tr.Ref.Name, err)
		}
		templates[key] = obj
	}
	if len(absent) > 0 {
		return nil, nil, missing("ClusterClass %s/%s references templates that do not exist: %s", class.Namespace, class.Name, strings.Join(absent, ", "))
	}

	current := desired.Current{
		MachineDeployments: map[string]*clusterv1.MachineDeployment{},
		MachinePools:       map[string]*clusterv1.MachinePool{},
		Templates:          map[string]*unstructured.Unstructured{},
	}
	// Current objects are read in the version topoflow writes them (desired.AtWriteVersion).
	at := func(ref *corev1.ObjectReference) *corev1.ObjectReference { return desired.AtWriteVersion(class, ref) }
	if current.InfrastructureCluster, err = a.getReferenced(ctx, at(cluster.Spec.InfrastructureRef), cluster.Namespace, "spec.infrastructureRef"); err != nil {
		return nil, nil, err
	}
	if current.ControlPlane, err = a.getReferenced(ctx, at(cluster.Spec.ControlPlaneRef), cluster.Namespace, "spec.controlPlaneRef"); err != nil {
		return nil, nil, err
	}
	if cp := current.ControlPlane; cp != nil {
		if ref, err := contract.ObjectRef(cp, contract.ControlPlaneInfrastructureRef); err == nil && ref != nil {
			if err := a.readTemplate(ctx, at(ref), cluster.Namespace, current.Templates); err != nil {
				return nil, nil, err
			}
		}
	}
	mds, err := listOwned[clusterv1.MachineDeployment](ctx, a, kube.MachineDeployments, cluster)
	if err != nil {
		return nil, nil, err
	}
	for i := range mds {
		if name := mds[i].Labels[labels.MachineDeploymentName]; name != "" {
			current.MachineDeployments[name] = &mds[i]
		}
		refs := []*corev1.ObjectReference{&mds[i].Spec.Template.Spec.InfrastructureRef, mds[i].Spec.Template.Spec.Bootstrap.ConfigRef}
		for _, ref := range refs {
			if ref != nil {
				if err := a.readTemplate(ctx, at(ref), cluster.Namespace, current.Templates); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	mps, err := listOwned[clusterv1.MachinePool](ctx, a, kube.MachinePools, cluster)
	if err != nil {
		return nil, nil, err
	}
	for i := range mps {
		if name := mps[i].Labels[labels.MachinePoolName]; name != "" {
			current.MachinePools[name] = &mps[i]
		}
	}
	mhcs, err := listOwned[clusterv1.MachineHealthCheck](ctx, a, kube.MachineHealthChecks, cluster)
	if err != nil {
		return nil, nil, err
	}
	uids := desired.UIDs{}
	uids.Add("Cluster", cluster)
	uids.Add(kindOf(current.InfrastructureCluster), current.InfrastructureCluster)
	uids.Add(kindOf(current.ControlPlane), current.ControlPlane)
	for _, t := range current.Templates {
		uids.Add(t.GetKind(), t)
	}
	for i := range mds {
		uids.Add("MachineDeployment", &mds[i])
	}
	for i := range mps {
		uids.Add("MachinePool", &mps[i])
	}
	for i := range mhcs {
		uids.Add("MachineHealthCheck", &mhcs[i])
	}
	l := &loaded{
		cluster: cluster,
		class:   class,
		input: desired.Input{
			Cluster:   cluster,
			Class:     class,
			Templates: templates,
			Current:   current,
			Names:     names.Source{Seed: names.SeedFrom(string(cluster.UID))},
		},
		currentMDs:  mds,
		currentMPs:  mps,
		currentMHCs: mhcs,
		uids:        uids,
	}
	l.input.Extensions = a.patchExtensions(ctx, cluster.Namespace, &l.extensionCalls)
	return l, nil, nil
}

// getReferenced reads the object a reference of the Cluster points at (nil: no reference yet,
// the first pass). Like Cluster API's topology controller (getCurrentInfrastructureClusterState,
// getCurrentControlPlaneState), an object the Cluster references must exist and be
// topology-owned: one that is gone is not created again (it is not topoflow's to bring back, and
// while the Cluster is being deleted it must stay gone), and one the topology does not own is not
// taken over. Both wait for a change with the reason on TopologyReconciled.
func (a *Activities) getReferenced(ctx context.Context, ref *corev1.ObjectReference, ns, field string) (*unstructured.Unstructured, error) {
	if ref == nil {
		return nil, nil
	}
	u, err := a.getIfExists(ctx, ref, ns, field)
	switch {
	case err != nil:
		return nil, err
	case u == nil:
		return nil, missing("%s %s/%s (%s) not found", ref.Kind, ns, ref.Name, field)
	}
	if _, owned := u.GetLabels()[labels.TopologyOwned]; !owned {
		return nil, invalid(fmt.Errorf("%s %s/%s (%s) is not topology owned: it lacks the label %s", ref.Kind, ns, ref.Name, field, labels.TopologyOwned))
	}
	return u, nil
}

// getIfExists reads the object a reference points at; nil for no reference or an absent object
// (the lenient read of admission checks).
func (a *Activities) getIfExists(ctx context.Context, ref *corev1.ObjectReference, ns, field string) (*unstructured.Unstructured, error) {
	if ref == nil {
		return nil, nil
	}
	u, err := a.Kube.GetRef(ctx, ref, ns)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s/%s (%s): %w", ref.Kind, ns, ref.Name, field, err)
	}
	return u, nil
}

// kindOf is the kind of an object read, "" for none.
func kindOf(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	return u.GetKind()
}

// readTemplate reads a current cloned template into into; an absent one is skipped.
func (a *Activities) readTemplate(ctx context.Context, ref *corev1.ObjectReference, ns string, into map[string]*unstructured.Unstructured) error {
	r := ref.DeepCopy()
	if r.Namespace == "" {
		r.Namespace = ns
	}
	t, err := a.Kube.GetRef(ctx, r, ns)
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading template %s %s: %w", r.Kind, r.Name, err)
	}
	into[desired.RefKey(r)] = t
	return nil
}

// deleteRotated deletes current templates the desired state no longer references (they were
// rotated away from); it runs after the parents were applied with their new references.
func (a *Activities) deleteRotated(ctx context.Context, l *loaded, state *desired.State, keep []*unstructured.Unstructured, res *ApplyResult) error {
	kept := inUse(state, keep)
	for _, key := range desired.SortedKeys(l.input.Current.Templates) {
		t := l.input.Current.Templates[key]
		if kept[key] || !l.scopeTemplates[key] {
			continue
		}
		ref := corev1.ObjectReference{APIVersion: t.GetAPIVersion(), Kind: t.GetKind(), Name: t.GetName()}
		if err := a.deleteAll(ctx, t.GetNamespace(), []corev1.ObjectReference{ref}, res); err != nil {
			return err
		}
	}
	return nil
}

// deletePoolTemplates deletes the MachineDeployments' templates nothing uses any more: rotated away
// from, or left by a removed pool. As Cluster API's topology MachineDeployment and MachineSet
// controllers do, a template is kept while a MachineSet of the Cluster still uses it (its old
// machines may need it); without Cluster API core there are no MachineSets. The templates are found
// by their labels (cluster-name and deployment-name), so one kept in an earlier pass is found again.
func (a *Activities) deletePoolTemplates(ctx context.Context, l *loaded, state *desired.State, keep []*unstructured.Unstructured, res *ApplyResult) error {
	used := inUse(state, keep)
	// MachineSets are read leniently (only the two references): Cluster API's have many fields.
	sets, err := a.listIfServed(ctx, kube.MachineSets, l.cluster, "")
	if err != nil {
		return err
	}
	for _, ms := range sets {
		for _, r := range contract.MachineTemplateRefs(&ms) {
			used[desired.RefKeyIn(r, ms.GetNamespace())] = true
		}
	}
	// The template kinds: the class's, and those current pools use (a class may have changed kind).
	kinds := map[string]bool{}
	refs := []*corev1.ObjectReference{}
	for _, md := range l.class.Spec.Workers.MachineDeployments {
		refs = append(refs, md.Template.Bootstrap.Ref, md.Template.Infrastructure.Ref)
	}
	for _, md := range l.currentMDs {
		refs = append(refs, &md.Spec.Template.Spec.InfrastructureRef, md.Spec.Template.Spec.Bootstrap.ConfigRef)
	}
	for _, r := range refs {
		if r != nil {
			kinds[r.APIVersion+" "+r.Kind] = true
		}
	}
	var unused []corev1.ObjectReference
	for _, k := range desired.SortedKeys(kinds) {
		apiVersion, kind, _ := strings.Cut(k, " ")
		gvr, err := a.Kube.ResourceFor(apiVersion, kind)
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		templates, err := a.listIfServed(ctx, gvr, l.cluster, labels.MachineDeploymentName)
		if err != nil {
			return err
		}
		for _, t := range templates {
			if !used[t.GetKind()+"/"+t.GetNamespace()+"/"+t.GetName()] {
				unused = append(unused, corev1.ObjectReference{APIVersion: t.GetAPIVersion(), Kind: t.GetKind(), Name: t.GetName()})
			}
		}
	}
	return a.deleteAll(ctx, l.cluster.Namespace, unused, res)
}

// inUse is the set (by RefKey) of the objects written in this pass and the current templates
// waiting parts still use: what must not be deleted.
func inUse(state *desired.State, written []*unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, o := range written {
		out[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = true
	}
	for _, key := range state.Kept {
		out[key] = true
	}
	return out
}

// listOwned lists a Cluster's topology-owned objects of one resource, decoded and sorted by name.
func listOwned[T any](ctx context.Context, a *Activities, gvr schema.GroupVersionResource, cluster *clusterv1.Cluster) ([]T, error) {
	sel := labels.ClusterName + "=" + cluster.Name + "," + labels.TopologyOwned

	items, err := a.Kube.List(ctx, gvr, cluster.Namespace, sel)
	if err != nil {
		return nil, fmt.Errorf("listing %s of Cluster %s/%s: %w", gvr.Resource, cluster.Namespace, cluster.Name, err)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	out := make([]T, len(items))
	for i := range items {
		if err := a.Kube.Decode(&items[i], &out[i]); err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", items[i].GetKind(), items[i].GetName(), err)
		}
	}
	return out, nil
}

// listIfServed lists a Cluster's objects (label cluster-name, and withLabel when given) of a
// resource that may not be served: none then.
func (a *Activities) listIfServed(ctx context.Context, gvr schema.GroupVersionResource, cluster *clusterv1.Cluster, withLabel string) ([]unstructured.Unstructured, error) {
	sel := labels.ClusterName + "=" + cluster.Name
	if withLabel != "" {
		sel += "," + withLabel
	}
	items, err := a.Kube.List(ctx, gvr, cluster.Namespace, sel)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing %s of Cluster %s/%s: %w", gvr.Resource, cluster.Namespace, cluster.Name, err)
	}
	return items, nil
}

// apply server-side-applies one object of the topology; an object that existed when the pass
// read it is updated, never created again (desired.UIDs.Stamp).
func (a *Activities) apply(ctx context.Context, l *loaded, obj *unstructured.Unstructured, res *ApplyResult) (*unstructured.Unstructured, error) {
	l.uids.Stamp(obj)
	applied, err := a.Kube.Apply(ctx, obj, labels.FieldManager)
	if err != nil {
		return nil, err
	}
	res.Applied = append(res.Applied, obj.GetKind()+" "+obj.GetName())
	a.Log.DebugContext(ctx, "applied", "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
	return applied, nil
}

// applyTyped applies a typed object and returns what the server holds.
func (a *Activities) applyTyped(ctx context.Context, l *loaded, obj any, res *ApplyResult) (*unstructured.Unstructured, error) {
	u, err := desired.ToIntent(obj)
	if err != nil {
		return nil, invalid(err)
	}
	return a.apply(ctx, l, u, res)
}

// applyControlPlane writes the control plane scope in Cluster API's order (reconcileState): the
// shim first when something is about to be created (reconcileClusterShim), the infrastructure
// cluster, the control plane machine template and the control plane, its health check, then the
// Cluster's references. The Cluster controller role then makes the Cluster their owner.
func (a *Activities) applyControlPlane(ctx context.Context, l *loaded, state *desired.State, res *ApplyResult) error {
	cur := l.input.Current
	switch {
	case state.ShimNeeded:
		ref, err := a.ensureShim(ctx, l.cluster)
		if err != nil {
			return err
		}
		state.AddShimOwner(ref)
	case desired.ShimDeletable(l.cluster, cur.InfrastructureCluster, cur.ControlPlane, state.InfrastructureCluster != nil):
		if err := a.deleteShim(ctx, l.cluster); err != nil {
			return err
		}
	}
	var infra, cp *unstructured.Unstructured
	for _, obj := range state.ClusterObjects() {
		applied, err := a.apply(ctx, l, obj, res)
		if err != nil {
			return err
		}
		switch obj {
		case state.InfrastructureCluster:
			infra = applied
		case state.ControlPlane:
			cp = applied
		}
	}
	if mhc := state.ControlPlaneMachineHealthCheck; mhc != nil {
		if _, err := a.applyTyped(ctx, l, mhc, res); err != nil {
			return err
		}
	}
	if _, err := a.apply(ctx, l, state.Cluster, res); err != nil {
		return err
	}
	if err := a.ownByCluster(ctx, l.cluster, infra, true); err != nil {
		return err
	}
	return a.ownByCluster(ctx, l.cluster, cp, true)
}

// applyWorkers applies MachineDeployments (templates, the pool, its health check) and
// MachinePools (bootstrap config, infrastructure pool, the pool), then deletes pools and health
// checks the topology no longer has.
func (a *Activities) applyWorkers(ctx context.Context, l *loaded, state *desired.State, res *ApplyResult) error {
	wantMD, wantMP, wantMHC := map[string]bool{}, map[string]bool{}, map[string]bool{}
	if state.ControlPlaneMachineHealthCheck != nil {
		wantMHC[state.ControlPlaneMachineHealthCheck.Name] = true
	}
	// What each pool writes in this pass (a pool waiting for its version only its health check, a
	// pool not to be created yet nothing) is desired's rule; the Cluster controller role then makes
	// the Cluster the owner of the pools written.
	write := func(objs []*unstructured.Unstructured, poolKind string) error {
		for _, o := range objs {
			applied, err := a.apply(ctx, l, o, res)
			if err != nil {
				return err
			}
			if o.GetKind() == poolKind {
				if err := a.ownByCluster(ctx, l.cluster, applied, false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, md := range state.MachineDeployments {
		if md.PendingCreate {
			continue
		}
		wantMD[md.Object.Name] = true
		if md.MachineHealthCheck != nil {
			wantMHC[md.MachineHealthCheck.Name] = true
		}
		objs, err := md.Objects()
		if err != nil {
			return invalid(err)
		}
		if err := write(objs, "MachineDeployment"); err != nil {
			return err
		}
	}
	for _, mp := range state.MachinePools {
		if !mp.PendingCreate {
			wantMP[mp.Object.Name] = true
		}
		objs, err := mp.Objects()
		if err != nil {
			return invalid(err)
		}
		if err := write(objs, "MachinePool"); err != nil {
			return err
		}
	}
	for i := range l.currentMDs {
		md := &l.currentMDs[i]
		if wantMD[md.Name] {
			continue
		}
		// Its templates go once nothing uses them (deletePoolTemplates).
		refs := []corev1.ObjectReference{{APIVersion: md.APIVersion, Kind: "MachineDeployment", Name: md.Name}}
		if err := a.deleteAll(ctx, md.Namespace, refs, res); err != nil {
			return err
		}
	}
	for i := range l.currentMPs {
		mp := &l.currentMPs[i]
		if wantMP[mp.Name] {
			continue
		}
		refs := []corev1.ObjectReference{{APIVersion: mp.APIVersion, Kind: "MachinePool", Name: mp.Name}, mp.Spec.Template.Spec.InfrastructureRef}
		if cr := mp.Spec.Template.Spec.Bootstrap.ConfigRef; cr != nil {
			refs = append(refs, *cr)
		}
		if err := a.deleteAll(ctx, mp.Namespace, refs, res); err != nil {
			return err
		}
	}
	// Health checks of removed pools, and checks the topology disabled.
	for _, m := range l.currentMHCs {
		if !wantMHC[m.Name] {
			ref := corev1.ObjectReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineHealthCheck", Name: m.Name}
			if err := a.deleteAll(ctx, m.Namespace, []corev1.ObjectReference{ref}, res); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteAll deletes the referenced objects (absent ones are fine), recording them in res.
func (a *Activities) deleteAll(ctx context.Context, ns string, refs []corev1.ObjectReference, res *ApplyResult) error {
	for i := range refs {
		if err := a.Kube.DeleteRef(ctx, &refs[i], ns); err != nil {
			return err
		}
		res.Deleted = append(res.Deleted, refs[i].Kind+" "+refs[i].Name)
	}
	return nil
}
