package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/model/validation"
)

// ApplyInput asks for one pass over a Cluster's topology.
type ApplyInput struct {
	Cluster ClusterRef `json:"cluster"`
	// Ledger is what the lifecycle hooks answered so far (the workflow's record): it holds the
	// creation of a Cluster BeforeClusterCreate has not let through, and version moves the
	// upgrade hooks have not allowed.
	Ledger upgrade.Ledger `json:"ledger"`
	// Seen are the objects the events that started this pass were about: they are read no
	// older than the events showed them (see kube.Client.AwaitSeen).
	Seen []corev1.ObjectReference `json:"seen,omitempty"`
}

// Skip says why a pass applied nothing.
type Skip string

const (
	// SkipGone: the Cluster no longer exists.
	SkipGone Skip = "Gone"
	// SkipNoTopology: the Cluster is not managed by a ClusterClass.
	SkipNoTopology Skip = "NoTopology"
	// SkipDeleting: the Cluster has a deletion timestamp; the teardown is the workflow's.
	SkipDeleting Skip = "Deleting"
	// SkipPaused: spec.paused or the cluster.x-k8s.io/paused annotation is set.
	SkipPaused Skip = "Paused"
	// SkipCreateHeld: the Cluster's objects do not exist yet, and BeforeClusterCreate, which an
	// extension handles, has not passed (upgrade.Ledger.CreatePassed).
	SkipCreateHeld Skip = "CreateHeld"
)

// ApplyResult is the outcome of one pass. It is small on purpose: workflow history keeps it.
type ApplyResult struct {
	// Skip is set when the pass applied nothing, and says why.
	Skip Skip `json:"skip,omitempty"`
	// OkToDelete: the Cluster being deleted carries runtime.cluster.x-k8s.io/ok-to-delete, so its
	// BeforeClusterDelete hook passed already (in an earlier run, or for Cluster API).
	OkToDelete bool   `json:"okToDelete,omitempty"`
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
	// PendingCreate are the pools not created yet (an existing control plane is not stable).
	PendingCreate []string `json:"pendingCreate,omitempty"`
	// Upgrade is set while an upgrade is in progress: a part's version is not yet the target, or
	// its pools still roll out to it (upgrade.Ledger.Finishing).
	Upgrade *UpgradeSummary `json:"upgrade,omitempty"`
	// Owed is the upgrade hook the decision waits for (upgrade.Ledger.Owed), nil for none.
	Owed *upgrade.Due `json:"owed,omitempty"`
	// Provisioning is what the providers report, read after the applies (nil when it could not
	// be read, or the Cluster is gone or unmanaged: the workflow then asks on its own).
	Provisioning *Provisioning `json:"provisioning,omitempty"`
	// Passed are the hooks the pass let through without a call, in order: no extension handles
	// them (SkipHooks), and Cluster API goes on in the same reconcile when a hook has no handler.
	// BeforeClusterCreate so lets the pass create; an upgrade hook owed on the way lets the next
	// move go (upgrade.Ledger.Decide). The workflow records each as passed. PendingHooks is then
	// the pending-hooks annotation the pass wrote before its applies, when that changed (on a
	// create, AfterControlPlaneInitialized owed, as Cluster API marks it).
	Passed       []upgrade.Due `json:"passed,omitempty"`
	PendingHooks []string      `json:"pendingHooks,omitempty"`
	// SkipHooks are the lifecycle hooks the workflow lets pass without a call: no Runtime
	// Extension handles them for this Cluster's namespace (runtimeext.Client.Unhandled) and their
	// call has nothing else to do (see announces).
	SkipHooks []string `json:"skipHooks,omitempty"`
}

// unmanaged says the pass found nothing to manage any more: the Cluster is gone or has no topology.
func (r *ApplyResult) unmanaged() bool { return r.Skip == SkipGone || r.Skip == SkipNoTopology }

// loaded is everything read from the API server for one computation.
type loaded struct {
	// input is the computation's input: the Cluster and its class as read (or its class's
	// revision), the templates and the current objects.
	input desired.Input
	// state is the decision's desired state, once made: the apply writes its objects in the
	// version the server serves (desired.State.InServedVersion).
	state *desired.State
	// extensionCalls collects the external patch answers of the computation.
	extensionCalls []string
	// currentMPs are the topology-owned MachinePools of the Cluster.
	currentMPs []hubv1.MachinePool
	// uids are the uids of everything read that exists: every apply intent for one of them is
	// an update (desired.UIDs.Stamp).
	uids desired.UIDs
	// revision is the ClusterClassRevision class and templates come from (nil: the live ones).
	revision *pinnedClass
}

// ApplyTopology runs one pass over a Cluster, the way Cluster API's topology reconciler does one
// reconcile: read the Cluster, its class and its current objects (no older than the events that
// started the pass), decide once (topology.Decide), apply the control plane part, read what the
// providers report, and apply the workers part when that allows it. Objects are written with
// server-side apply under the field manager capi-topology.
func (a *Activities) ApplyTopology(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	if err := a.Kube.AwaitSeen(ctx, in.Seen); err != nil {
		return nil, err
	}
	// 1. Read; a Cluster there is nothing to compute for is a skip.
	l, res, err := a.load(ctx, in.Cluster)
	if err != nil {
		return nil, err
	}
	// 2. From the cache: the lifecycle hooks that need no call.
	skipHooks := a.skipHooks(ctx, in.Cluster.Namespace)
	// 3. Decide once and apply.
	if res == nil {
		if res, err = a.applyPass(ctx, in, l, skipHooks); err != nil {
			return nil, err
		}
	}
	if res.unmanaged() {
		a.workload.drop(in.Cluster.Namespace, in.Cluster.Name)
		return res, nil
	}
	res.SkipHooks = skipHooks
	// 4. What the providers say, after the applies, for the workflow's status. A read error
	// only costs the workflow a step of its own.
	if res.Provisioning == nil {
		if p, err := a.ObserveProvisioning(ctx, ObserveInput{Cluster: in.Cluster, HasInfrastructure: res.HasInfrastructure}); err == nil {
			res.Provisioning = p
		}
	}
	return res, nil
}

// skipHooks are the lifecycle hooks that pass without a call for Clusters of a namespace: no
// extension handles them, and their call has nothing else to do (see announces). A read error
// only costs the workflow those calls.
func (a *Activities) skipHooks(ctx context.Context, namespace string) []string {
	unhandled, err := (&runtimeext.Client{Kube: a.Kube}).Unhandled(ctx, namespace)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(unhandled, announces)
}

// applyPass decides once and applies what the decision allows. A create waits for
// BeforeClusterCreate, and a version move for its upgrade hook, unless no extension handles the hook
// (skipHooks): then, as Cluster API does, the pass goes on, with the pending-hooks annotation the
// hooks passed leave (AfterControlPlaneInitialized marked pending on a create) written first.
func (a *Activities) applyPass(ctx context.Context, in ApplyInput, l *loaded, skipHooks []string) (*ApplyResult, error) {
	start := in.Ledger
	// 1. Decide: the create gate, the desired state and the upgrade's step.
	dec, passed, held, err := a.decidePass(ctx, &in.Ledger, l, skipHooks)
	if err != nil || held != nil {
		return held, err
	}
	pending := start.PendingAfter(passed)
	if pending != nil {
		if err := a.writePendingHooks(ctx, l.input.Cluster, pending); err != nil {
			return nil, err
		}
	}
	res := &ApplyResult{
		ExternalPatches:   l.extensionCalls,
		Upgrade:           upgradeSummary(l, dec),
		Owed:              dec.Owed,
		Generation:        l.input.Cluster.Generation,
		Class:             l.input.Class.Name,
		Version:           l.input.Cluster.Spec.Topology.Version,
		HasInfrastructure: dec.State.InfrastructureCluster != nil,
		Passed:            passed,
		PendingHooks:      pending,
	}
	// 2. Write: the control plane part, then the workers part.
	if err := a.writeParts(ctx, in.Cluster, l, dec, res); err != nil {
		return nil, err
	}
	// 3. What the providers report now, for the status and AfterControlPlaneInitialized.
	prov, err := a.ObserveProvisioning(ctx, ObserveInput{Cluster: in.Cluster, HasInfrastructure: res.HasInfrastructure})
	if err != nil {
		return nil, err
	}
	res.Provisioning = prov
	if prov.ClusterGone {
		return &ApplyResult{Skip: SkipGone}, nil
	}
	return res, nil
}

// decidePass makes the pass's decision: the create gate (held: BeforeClusterCreate holds the
// create, nothing else is done), the desired state and what the upgrade passes (passed, recorded
// in ledger too). A Cluster computed from the newest revision of its class, not yet pinned to
// it, is pinned before anything is written.
func (a *Activities) decidePass(ctx context.Context, ledger *upgrade.Ledger, l *loaded, skipHooks []string) (*topology.Decision, []upgrade.Due, *ApplyResult, error) {
	var passed []upgrade.Due
	switch ledger.CreateGate(l.input.Cluster, !slices.Contains(skipHooks, hooksv1.BeforeClusterCreate)) {
	case upgrade.CreateHeld:
		return nil, nil, &ApplyResult{Skip: SkipCreateHeld, Generation: l.input.Cluster.Generation, Class: l.input.Class.Name, Version: l.input.Cluster.Spec.Topology.Version}, nil
	case upgrade.CreateUnhandled:
		passed = append(passed, upgrade.Due{Hook: hooksv1.BeforeClusterCreate})
		ledger.Record(passed[0])
	}
	dec, err := topology.Decide(topology.Input{Desired: l.input, Ledger: ledger, Unhandled: skipHooks, Planner: a.upgradePlanner(ctx, l)})
	if err != nil {
		return nil, nil, nil, computeFailed(err)
	}
	l.state = dec.State
	if rev := l.revision; rev != nil && rev.Pin {
		if err := a.pinCluster(ctx, l.input.Cluster, rev.Name); err != nil {
			return nil, nil, nil, err
		}
	}
	return dec, append(passed, dec.Passed...), nil, nil
}

// writeParts writes the decision: the control plane part, then the workers part, each applied
// and then its deletions; then the topology finalizers let go, and the revision the topology was
// applied from recorded.
func (a *Activities) writeParts(ctx context.Context, cluster ClusterRef, l *loaded, dec *topology.Decision, res *ApplyResult) error {
	state := dec.State
	// The finalizer comes first: from now on deletion waits for the ordered teardown. Beside
	// Cluster API core (the Cluster controller role off) its own finalizer holds the Cluster and
	// the delete hold keeps the children until BeforeClusterDelete passed, so topoflow adds none:
	// a takeover changes nothing, and a hand-back leaves nothing behind that Cluster API would
	// never remove.
	if a.ClusterController {
		if err := a.setFinalizer(ctx, cluster, true); err != nil {
			return err
		}
	}
	if err := a.applyControlPlane(ctx, l, state, res); err != nil {
		return err
	}
	a.changeEvents(l.input.Cluster, topology.ControlPlaneChanges(l.input.Current, state))
	if err := a.deleteAll(ctx, dec.Deletes.ControlPlane, res); err != nil {
		return err
	}
	// New pools are created with the control plane (the decision holds them only while an
	// existing control plane is not stable).
	res.PendingCreate = dec.PendingCreates()
	if err := a.applyWorkers(ctx, l, state, res); err != nil {
		return err
	}
	a.changeEvents(l.input.Cluster, topology.WorkerChanges(l.input.Current, state))
	if err := a.deleteAll(ctx, dec.Deletes.Workers, res); err != nil {
		return err
	}
	if err := a.releaseTopologyFinalizers(ctx, l.input.Cluster.Namespace, l.input.Current); err != nil {
		return err
	}
	if rev := l.revision; rev != nil {
		return a.markClassRevisionApplied(ctx, l.input.Cluster, rev.Name)
	}
	return nil
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
// non-nil result is a skip (res.Skip says why: the Cluster is gone, deleting, paused or
// unmanaged): there is nothing to compute.
func (a *Activities) load(ctx context.Context, ref ClusterRef) (*loaded, *ApplyResult, error) {
	cluster, err := a.readCluster(ctx, ref)
	if err != nil {
		if kube.IsNotFound(err) {
			return nil, &ApplyResult{Skip: SkipGone}, nil
		}
		var fe *decode.FieldError
		if errors.As(err, &fe) {
			return nil, nil, invalid(err)
		}
		return nil, nil, fmt.Errorf("reading Cluster %s: %w", ref, err)
	}
	if skip := skipOf(cluster); skip != nil {
		return nil, skip, nil
	}
	l, err := a.loadFor(ctx, cluster, nil, nil)
	return l, nil, err
}

// loadFor reads what a computation for the Cluster needs besides the Cluster: its class (class
// when given: a fleet plan of an edited class, else the one it names), the class's templates
// (those of given first, keyed by RefKey) and its current topology objects. When the class read
// opted in to revisions, its spec and templates are those of the Cluster's revision
// (classRevisionFor): an edit of such a class moves no Cluster until a Rollout moves its pin. A
// class given is computed from as given: the fleet plan of an edit plans what moving to it does.
func (a *Activities) loadFor(ctx context.Context, cluster *hubv1.Cluster, class *hubv1.ClusterClass, given map[string]*unstructured.Unstructured) (*loaded, error) {
	var err error
	var rev *pinnedClass
	live := class == nil
	if live {
		if class, err = a.getClass(ctx, cluster); err != nil {
			return nil, err
		}
		rev, err = a.classRevisionFor(ctx, cluster, class)
	}
	switch {
	case err != nil:
		return nil, err
	case rev != nil:
		class, given = rev.Class, rev.Templates
	case live:
		if err := checkClass(class); err != nil {
			return nil, err
		}
	}
	templates, err := a.readClassTemplates(ctx, class, given)
	if err != nil {
		return nil, err
	}
	l := &loaded{uids: desired.UIDs{}, revision: rev}
	l.input.Cluster, l.input.Class = cluster, class
	current, err := a.readCurrent(ctx, l)
	if err != nil {
		return nil, err
	}
	l.input = desired.Input{
		Cluster:   cluster,
		Class:     class,
		Templates: templates,
		Current:   *current,
		Names:     names.Source{Seed: names.SeedFrom(string(cluster.UID))},
		// Owner references name the Cluster in the version the API server serves, as Cluster
		// API's controllers write them.
		ClusterAPIVersion:    a.servedVersion("Cluster"),
		WorkloadAPIVersion:   a.servedVersion("MachineDeployment"),
		ControlPlaneContract: a.controlPlaneContract(ctx, class),
	}
	l.input.Extensions = a.patchExtensions(ctx, cluster.Namespace, &l.extensionCalls)
	return l, nil
}

// skipOf says why a Cluster is not computed: deleting, not managed by a class, or paused (nil: it is).
func skipOf(cluster *hubv1.Cluster) *ApplyResult {
	switch _, paused := cluster.Annotations[labels.Paused]; {
	case cluster.DeletionTimestamp != nil:
		_, ok := cluster.Annotations[runtimev1.OkToDeleteAnnotation]
		return &ApplyResult{Skip: SkipDeleting, OkToDelete: ok, Generation: cluster.Generation, HasInfrastructure: cluster.Spec.InfrastructureRef.IsDefined()}
	case !cluster.Spec.Topology.IsDefined():
		return &ApplyResult{Skip: SkipNoTopology, Generation: cluster.Generation}
	case (cluster.Spec.Paused != nil && *cluster.Spec.Paused) || paused:
		return &ApplyResult{Skip: SkipPaused, Generation: cluster.Generation, HasInfrastructure: cluster.Spec.InfrastructureRef.IsDefined()}
	}
	return nil
}

// getClass reads the Cluster's ClusterClass (checkClass checks it, when it is computed from).
func (a *Activities) getClass(ctx context.Context, cluster *hubv1.Cluster) (*hubv1.ClusterClass, error) {
	class := &hubv1.ClusterClass{}
	classNS, name := cluster.ClassNamespace(), cluster.Spec.Topology.ClassRef.Name
	if err := a.Kube.GetTyped(ctx, kube.ClusterClasses, classNS, name, class); err != nil {
		if kube.IsNotFound(err) {
			return nil, missing("ClusterClass %s/%s (spec.topology.classRef) not found", classNS, name)
		}
		var fe *decode.FieldError
		if errors.As(err, &fe) {
			return nil, invalid(err)
		}
		return nil, fmt.Errorf("reading ClusterClass %s/%s: %w", classNS, name, err)
	}
	return class, nil
}

// checkClass checks a live ClusterClass a Cluster is computed from.
func checkClass(class *hubv1.ClusterClass) error {
	if errs := validation.ClusterClass(class, nil, nil); len(errs) > 0 {
		return invalid(&desired.InvalidError{Object: "ClusterClass " + class.Namespace + "/" + class.Name, Errs: errs})
	}
	if discoversVariables(class) && class.Status.ObservedGeneration < class.Generation {
		// Its variables come from extensions: wait for the class's status (an event) so the
		// Cluster's variables are checked against the discovered definitions.
		return missing("ClusterClass %s/%s: variable discovery has not run for generation %d yet (status.observedGeneration %d)",
			class.Namespace, class.Name, class.Generation, class.Status.ObservedGeneration)
	}
	return nil
}

// readClassTemplates reads every template the class references, keyed by RefKey (those of given,
// when given, are not read); absent ones are reported together.
func (a *Activities) readClassTemplates(ctx context.Context, class *hubv1.ClusterClass, given map[string]*unstructured.Unstructured) (map[string]*unstructured.Unstructured, error) {
	templates := map[string]*unstructured.Unstructured{}
	var absent []string
	for _, tr := range desired.TemplateRefs(class) {
		key := desired.RefKey(tr.Ref)
		if _, seen := templates[key]; seen {
			continue
		}
		if t, ok := given[key]; ok {
			templates[key] = t
			continue
		}
		obj, err := a.Kube.GetRef(ctx, tr.Ref, class.Namespace)
		if kube.IsNotFound(err) {
			absent = append(absent, fmt.Sprintf("%s %s/%s (%s)", tr.Ref.Kind, tr.Ref.Namespace, tr.Ref.Name, tr.Field))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading template %s %s/%s: %w", tr.Ref.Kind, tr.Ref.Namespace, tr.Ref.Name, err)
		}
		templates[key] = obj
	}
	if len(absent) > 0 {
		return nil, missing("ClusterClass %s/%s references templates that do not exist: %s", class.Namespace, class.Name, strings.Join(absent, ", "))
	}
	return templates, nil
}

// readCurrent reads the Cluster's current topology objects, noting the uid of each in l.uids:
// every apply intent for one of them is an update (desired.UIDs.Stamp).
func (a *Activities) readCurrent(ctx context.Context, l *loaded) (*desired.Current, error) {
	cluster := l.input.Cluster
	current := &desired.Current{
		MachineDeployments: map[string]*hubv1.MachineDeployment{},
		MachinePools:       map[string]*hubv1.MachinePool{},
		Templates:          map[string]*unstructured.Unstructured{},
		RefVersions:        desired.RefVersions{},
	}
	infraRef, cpRef, err := a.refsOf("Cluster", cluster.Name, current.RefVersions, cluster.Namespace, cluster.Spec.InfrastructureRef, cluster.Spec.ControlPlaneRef)
	if err != nil {
		return nil, err
	}
	// Current objects are read in the version topoflow writes them (desired.AtWriteVersion).
	at := func(ref *corev1.ObjectReference) *corev1.ObjectReference {
		return desired.AtWriteVersion(l.input.Class, ref)
	}
	if current.InfrastructureCluster, err = a.getReferenced(ctx, at(infraRef), cluster.Namespace, "spec.infrastructureRef"); err != nil {
		return nil, err
	}
	if current.ControlPlane, err = a.getReferenced(ctx, at(cpRef), cluster.Namespace, "spec.controlPlaneRef"); err != nil {
		return nil, err
	}
	if cp := current.ControlPlane; cp != nil {
		if ref, err := contract.ControlPlaneMachineInfrastructureRef(cp); err == nil && ref != nil {
			if !strings.Contains(ref.APIVersion, "/") {
				// A v1beta2-contract reference names its group only: read at the served version.
				v, err := a.Kube.PreferredVersion(ref.APIVersion, ref.Kind)
				if err != nil {
					return nil, fmt.Errorf("control plane %s: %w", cp.GetName(), err)
				}
				ref.APIVersion = schema.GroupVersion{Group: ref.APIVersion, Version: v}.String()
			}
			if err := a.readTemplate(ctx, at(ref), cluster.Namespace, current.Templates); err != nil {
				return nil, err
			}
		}
	}
	if err := a.readPools(ctx, l, current, at); err != nil {
		return nil, err
	}
	l.uids.Add("Cluster", cluster)
	l.uids.Add(kindOf(current.InfrastructureCluster), current.InfrastructureCluster)
	l.uids.Add(kindOf(current.ControlPlane), current.ControlPlane)
	for _, t := range current.Templates {
		l.uids.Add(t.GetKind(), t)
	}
	return current, nil
}

// refsOf resolves two contract references of the object named owner (of kind ownerKind: the
// Cluster, a pool) to object references (contractRef), recording their versions in rv.
func (a *Activities) refsOf(ownerKind, owner string, rv desired.RefVersions, ns string, first, second hubv1.ContractVersionedObjectReference) (*corev1.ObjectReference, *corev1.ObjectReference, error) {
	r1, err := a.contractRef(first, ns)
	if err != nil {
		return nil, nil, err
	}
	r2, err := a.contractRef(second, ns)
	if err != nil {
		return nil, nil, err
	}
	rv.Add(ownerKind, owner, r1, r2)
	return r1, r2, nil
}

// readPools reads the Cluster's topology-owned MachineDeployments (and their templates),
// MachinePools and health checks, its MachineSets, and the templates labelled as its pools'.
func (a *Activities) readPools(ctx context.Context, l *loaded, current *desired.Current, at func(*corev1.ObjectReference) *corev1.ObjectReference) error {
	cluster := l.input.Cluster
	mds, err := listOwned[hubv1.MachineDeployment](ctx, a, kube.MachineDeployments, cluster)
	if err != nil {
		return err
	}
	for i := range mds {
		md := &mds[i]
		l.uids.Add("MachineDeployment", md)
		if name := md.Labels[labels.MachineDeploymentName]; name != "" {
			current.MachineDeployments[name] = md
		}
		infra, bootstrap, err := a.refsOf("MachineDeployment", md.Name, current.RefVersions, cluster.Namespace, md.Spec.Template.Spec.InfrastructureRef, md.Spec.Template.Spec.Bootstrap.ConfigRef)
		if err != nil {
			return err
		}
		for _, ref := range []*corev1.ObjectReference{infra, bootstrap} {
			if ref != nil {
				if err := a.readTemplate(ctx, at(ref), cluster.Namespace, current.Templates); err != nil {
					return err
				}
			}
		}
	}
	mps, err := listOwned[hubv1.MachinePool](ctx, a, kube.MachinePools, cluster)
	if err != nil {
		return err
	}
	l.currentMPs = mps
	for i := range mps {
		mp := &mps[i]
		l.uids.Add("MachinePool", mp)
		if name := mp.Labels[labels.MachinePoolName]; name != "" {
			current.MachinePools[name] = mp
		}
		if _, _, err := a.refsOf("MachinePool", mp.Name, current.RefVersions, cluster.Namespace, mp.Spec.Template.Spec.InfrastructureRef, mp.Spec.Template.Spec.Bootstrap.ConfigRef); err != nil {
			return err
		}
	}
	mhcs, err := listOwned[hubv1.MachineHealthCheck](ctx, a, kube.MachineHealthChecks, cluster)
	if err != nil {
		return err
	}
	for i := range mhcs {
		l.uids.Add("MachineHealthCheck", &mhcs[i])
		current.MachineHealthChecks = append(current.MachineHealthChecks, &mhcs[i])
	}
	// MachineSets are read leniently (only the two references): Cluster API's have many fields.
	sets, err := a.listIfServed(ctx, kube.V1Beta1MachineSets, cluster, "")
	if err != nil {
		return err
	}
	for i := range sets {
		current.MachineSets = append(current.MachineSets, &sets[i])
	}
	if current.MachineVersions, err = a.machineVersions(ctx, cluster); err != nil {
		return err
	}
	if current.NodeVersions, err = a.nodeVersions(ctx, cluster, mps); err != nil {
		return workloadFailed(err)
	}
	current.PoolTemplates, err = a.poolTemplates(ctx, l, mds)
	return err
}

// poolTemplates lists the Cluster's MachineDeployment templates by their labels (cluster-name and
// deployment-name), of the kinds the class and the current pools use (a class may have changed
// kind), so that a template an earlier pass kept is found again.
func (a *Activities) poolTemplates(ctx context.Context, l *loaded, mds []hubv1.MachineDeployment) ([]*unstructured.Unstructured, error) {
	kinds := map[string]bool{}
	for _, md := range l.input.Class.Spec.Workers.MachineDeployments {
		for _, r := range []hubv1.ClusterClassTemplateReference{md.Bootstrap.TemplateRef, md.Infrastructure.TemplateRef} {
			if r.IsDefined() {
				kinds[r.APIVersion+" "+r.Kind] = true
			}
		}
	}
	for _, md := range mds {
		for _, r := range []hubv1.ContractVersionedObjectReference{md.Spec.Template.Spec.InfrastructureRef, md.Spec.Template.Spec.Bootstrap.ConfigRef} {
			if ref, err := a.contractRef(r, md.Namespace); err != nil {
				return nil, err
			} else if ref != nil {
				kinds[ref.APIVersion+" "+ref.Kind] = true
			}
		}
	}
	var out []*unstructured.Unstructured
	for _, k := range desired.SortedKeys(kinds) {
		apiVersion, kind, _ := strings.Cut(k, " ")
		gvr, err := a.Kube.ResourceFor(apiVersion, kind)
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		templates, err := a.listIfServed(ctx, gvr, l.input.Cluster, labels.MachineDeploymentName)
		if err != nil {
			return nil, err
		}
		for i := range templates {
			out = append(out, &templates[i])
		}
	}
	return out, nil
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

// listOwned lists a Cluster's topology-owned objects of one resource, decoded and sorted by name.
func listOwned[T any](ctx context.Context, a *Activities, gvr schema.GroupVersionResource, cluster metav1.Object) ([]T, error) {
	sel := labels.ClusterName + "=" + cluster.GetName() + "," + labels.TopologyOwned

	items, err := a.Kube.List(ctx, gvr, cluster.GetNamespace(), sel)
	if err != nil {
		return nil, fmt.Errorf("listing %s of Cluster %s/%s: %w", gvr.Resource, cluster.GetNamespace(), cluster.GetName(), err)
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

// machineVersions reads the versions the Cluster's Machines run, by MachineDeployment
// (upgrade.MachineVersions); nil where Machines are not served.
func (a *Activities) machineVersions(ctx context.Context, cluster *hubv1.Cluster) (upgrade.MachineVersions, error) {
	items, err := a.Kube.List(ctx, kube.V1Beta1Machines, cluster.Namespace, labels.ClusterName+"="+cluster.Name)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing the Machines of Cluster %s/%s: %w", cluster.Namespace, cluster.Name, err)
	}
	return upgrade.MachineVersionsOf(items), nil
}

// listIfServed lists a Cluster's objects (label cluster-name, and withLabel when given) of a
// resource that may not be served: none then.
func (a *Activities) listIfServed(ctx context.Context, gvr schema.GroupVersionResource, cluster metav1.Object, withLabel string) ([]unstructured.Unstructured, error) {
	sel := labels.ClusterName + "=" + cluster.GetName()
	if withLabel != "" {
		sel += "," + withLabel
	}
	items, err := a.Kube.List(ctx, gvr, cluster.GetNamespace(), sel)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("listing %s of Cluster %s/%s: %w", gvr.Resource, cluster.GetNamespace(), cluster.GetName(), err)
	}
	return items, nil
}

// apply server-side-applies one object of the topology; an object that existed when the pass
// read it is updated, never created again (desired.UIDs.Stamp).
func (a *Activities) apply(ctx context.Context, l *loaded, obj *unstructured.Unstructured, res *ApplyResult) (*unstructured.Unstructured, error) {
	if l.state == nil {
		return nil, fmt.Errorf("applying %s %s: no desired state to write it from", obj.GetKind(), obj.GetName())
	}
	obj, err := l.state.InServedVersion(obj, l.input.WorkloadAPIVersion)
	if err != nil {
		return nil, invalid(err)
	}
	l.uids.Stamp(obj)
	applied, err := a.Kube.Apply(ctx, obj, labels.FieldManager)
	if err != nil {
		return nil, err
	}
	res.Applied = append(res.Applied, obj.GetKind()+" "+obj.GetName())
	a.Log.DebugContext(ctx, "applied", "kind", obj.GetKind(), "namespace", obj.GetNamespace(), "name", obj.GetName())
	return applied, nil
}

// patchCluster writes the Cluster's topology fields with a regular merge patch when they differ,
// as Cluster API v1.14 does (desired.ClusterPatch), under topoflow's own field manager.
func (a *Activities) patchCluster(ctx context.Context, l *loaded, intent *unstructured.Unstructured, res *ApplyResult) error {
	patch, err := desired.ClusterPatch(l.input.Cluster, intent)
	if err != nil || patch == nil {
		return err
	}
	if a.Kube.Sent != nil {
		// Recorded as the topology's intent (what plan prints), though it goes as a patch.
		a.Kube.Sent(intent.DeepCopy(), labels.FieldManager)
	}
	// The intent is computed as v1beta1 (desired's clusterIntent): patched as such, the client
	// converts it to the version the API server serves.
	if _, err := a.Kube.MergePatch(ctx, kube.V1Beta1Clusters, l.input.Cluster.Namespace, l.input.Cluster.Name, patch, StatusFieldManager); err != nil {
		return fmt.Errorf("patching Cluster %s/%s: %w", l.input.Cluster.Namespace, l.input.Cluster.Name, err)
	}
	res.Applied = append(res.Applied, "Cluster "+l.input.Cluster.Name)
	return nil
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
		ref, err := a.ensureShim(ctx, l.input.Cluster, l.input.ClusterAPIVersion)
		if err != nil {
			return err
		}
		state.AddShimOwner(ref)
	case desired.ShimDeletable(l.input.Cluster, cur.InfrastructureCluster, cur.ControlPlane, state.InfrastructureCluster != nil):
		if err := a.deleteShim(ctx, l.input.Cluster); err != nil {
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
	if err := a.patchCluster(ctx, l, state.Cluster, res); err != nil {
		return err
	}
	if err := a.ownByCluster(ctx, l, infra, true); err != nil {
		return err
	}
	return a.ownByCluster(ctx, l, cp, true)
}

// applyWorkers applies MachineDeployments (templates, the pool, its health check) and
// MachinePools (bootstrap config, infrastructure pool, the pool); what each pool writes in this
// pass (a pool waiting for its version only its health check, a pool not to be created yet
// nothing) is desired's rule. The Cluster controller role then makes the Cluster the owner of the
// pools written. Each pool's objects go in order; the pools, which refer to nothing of each
// other, are written side by side (poolWriters at once), so a create of several pools takes the
// time of the largest rather than their sum. res lists what was applied in pool order, as one by
// one would.
func (a *Activities) applyWorkers(ctx context.Context, l *loaded, state *desired.State, res *ApplyResult) error {
	type pool struct {
		objs []*unstructured.Unstructured
		kind string
	}
	var pools []pool
	for _, md := range state.MachineDeployments {
		objs, err := md.Objects()
		if err != nil {
			return invalid(err)
		}
		pools = append(pools, pool{objs, "MachineDeployment"})
	}
	for _, mp := range state.MachinePools {
		objs, err := mp.Objects()
		if err != nil {
			return invalid(err)
		}
		pools = append(pools, pool{objs, "MachinePool"})
	}
	applied := make([]ApplyResult, len(pools))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(poolWriters)
	for i, p := range pools {
		g.Go(func() error {
			for _, o := range p.objs {
				out, err := a.apply(gctx, l, o, &applied[i])
				if err != nil {
					return err
				}
				if o.GetKind() == p.kind {
					if err := a.ownByCluster(gctx, l, out, false); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	err := g.Wait()
	for i := range applied {
		res.Applied = append(res.Applied, applied[i].Applied...)
	}
	return err
}

// poolWriters bounds the pools one pass writes at once.
const poolWriters = 4

// deleteAll deletes the referenced objects (absent ones are fine), recording them in res.
func (a *Activities) deleteAll(ctx context.Context, refs []corev1.ObjectReference, res *ApplyResult) error {
	for i := range refs {
		if err := a.Kube.DeleteRef(ctx, &refs[i], refs[i].Namespace); err != nil {
			return err
		}
		res.Deleted = append(res.Deleted, refs[i].Kind+" "+refs[i].Name)
	}
	return nil
}
