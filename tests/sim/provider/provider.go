// Package provider simulates the controllers topoflow works with but does not own: an
// infrastructure provider (SimCluster, SimMachinePool), a control plane provider (SimControlPlane)
// and Cluster API's MachineDeployment and MachinePool controllers. It writes real status to a real
// API server, over time, so workflows wait on real state changes.
//
// Behaviour is scripted per object with annotations (see the constants below). An annotation on
// the object wins; otherwise the same annotation on the owning Cluster applies; otherwise the
// provider's defaults.
package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Annotations that script the simulation.
const (
	// ProvisionDelay (a Go duration) is how long after creation an object becomes ready/initialized.
	ProvisionDelay = "sim.topoflow.dev/provision-delay"
	// RolloutDuration is how long a version or template change takes to roll out.
	RolloutDuration = "sim.topoflow.dev/rollout-duration"
	// DeleteDelay is how long deletion waits before the simulator releases its finalizer.
	DeleteDelay = "sim.topoflow.dev/delete-delay"
	// FailProvisioning "true" makes provisioning fail (failureReason/failureMessage, never ready).
	FailProvisioning = "sim.topoflow.dev/fail-provisioning"
	// StuckRollout "true" makes rollouts never finish.
	StuckRollout = "sim.topoflow.dev/stuck-rollout"
	// Finalizer is put on every simulated object so deletion is observable and can be slow.
	Finalizer = "sim.topoflow.dev/cleanup"
	// clusterNameLabel is Cluster API's cluster-name label.
	clusterNameLabel = "cluster.x-k8s.io/cluster-name"
)

// Resources the simulator serves.
var (
	SimClusters        = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "simclusters"}
	SimMachinePools    = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "simmachinepools"}
	SimControlPlanes   = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Resource: "simcontrolplanes"}
	MachineDeployments = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinedeployments"}
	MachinePools       = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinepools"}
	Clusters           = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "clusters"}
)

// TopologyKinds are the kinds a sample Cluster's topology creates on the simulated providers
// (the soak checks none is left after a delete; the bench counts them).
var TopologyKinds = []schema.GroupVersionResource{
	SimClusters, SimControlPlanes, MachineDeployments, MachinePools, SimMachinePools,
	{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinehealthchecks"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "simmachinetemplates"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Resource: "simconfigtemplates"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta1", Resource: "simconfigs"},
}

// Options are the simulator's defaults.
type Options struct {
	ProvisionDelay  time.Duration
	RolloutDuration time.Duration
	DeleteDelay     time.Duration
	// Namespace limits the simulator to one namespace; empty serves all.
	Namespace string
}

// Provider runs the simulation.
type Provider struct {
	dyn   dynamic.Interface
	opts  Options
	log   *slog.Logger
	queue workqueue.TypedRateLimitingInterface[key]
	// listers read the watched kinds (and Clusters) from the informers' caches, as a real
	// provider's controllers do: a GET per reconcile made the simulator the API server's and
	// etcd's biggest reader in the bench.
	listers map[schema.GroupVersionResource]cache.GenericLister

	mu       sync.Mutex
	rollouts map[types.UID]rollout
	// Transitions records, per object, the versions it reported in order (for tests and logs).
	transitions []Transition
	// deletions records when the simulator first saw each object's deletion and released it.
	deletions map[types.UID]*Deletion
	// pruned are the status fields the API server dropped from a status write, by resource: fields
	// the kind's CRD schema does not have (topoflow's own MachineDeployment and MachinePool CRDs
	// have no status.v1beta2 or status.versions; Cluster API's have). They are not sent again, so
	// a status the server already holds is not written over and over.
	pruned map[schema.GroupVersionResource]map[string]bool
}

// Deletion is when the simulator saw an object's deletion requested, and when it let it go.
type Deletion struct {
	Kind, Name          string
	Requested, Released time.Time
}

// Deletions returns the deletions seen so far.
func (p *Provider) Deletions() []Deletion {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Deletion, 0, len(p.deletions))
	for _, d := range p.deletions {
		out = append(out, *d)
	}
	return out
}

func (p *Provider) recordDeletion(u *unstructured.Unstructured, released bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.deletions[u.GetUID()]
	if !ok {
		d = &Deletion{Kind: u.GetKind(), Name: u.GetName(), Requested: time.Now()}
		p.deletions[u.GetUID()] = d
	}
	if released && d.Released.IsZero() {
		d.Released = time.Now()
	}
}

type key struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// rollout tracks the change an object is rolling out.
type rollout struct {
	target  string // hash of what is being rolled out
	started time.Time
	done    bool
}

// Transition is one version change an object reported in status.
type Transition struct {
	Kind, Name, Version string
	At                  time.Time
}

// New returns a simulator.
func New(dyn dynamic.Interface, opts Options, log *slog.Logger) *Provider {
	return &Provider{
		dyn:  dyn,
		opts: opts,
		log:  log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[key](100*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[key]{Name: "sim"}),
		rollouts:  map[types.UID]rollout{},
		deletions: map[types.UID]*Deletion{},
		pruned:    map[schema.GroupVersionResource]map[string]bool{},
	}
}

// Transitions returns the version changes reported so far.
func (p *Provider) Transitions() []Transition {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Transition(nil), p.transitions...)
}

type reconcileFunc func(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error)

// Run serves until ctx ends.
func (p *Provider) Run(ctx context.Context) error {
	defer p.queue.ShutDown()
	reconcilers := map[schema.GroupVersionResource]reconcileFunc{
		SimClusters:        p.reconcileInfraCluster,
		SimMachinePools:    p.reconcileInfraMachinePool,
		SimControlPlanes:   p.reconcileControlPlane,
		MachineDeployments: p.reconcileMachineDeployment,
		MachinePools:       p.reconcileMachinePool,
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(p.dyn, 30*time.Second, p.opts.Namespace, nil)
	for gvr := range reconcilers {
		handler := func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				p.queue.Add(key{gvr: gvr, namespace: u.GetNamespace(), name: u.GetName()})
			}
		}
		if _, err := factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: handler, UpdateFunc: func(_, o any) { handler(o) }, DeleteFunc: handler,
		}); err != nil {
			return err
		}
	}
	p.listers = map[schema.GroupVersionResource]cache.GenericLister{}
	for _, gvr := range append(slices.Collect(maps.Keys(reconcilers)), Clusters) {
		p.listers[gvr] = factory.ForResource(gvr).Lister()
	}
	// A control plane waits for its Cluster's infrastructure: like a real control plane provider,
	// it is reconciled when that becomes ready, not only by polling for it.
	if _, err := factory.ForResource(Clusters).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { p.clusterChanged(nil, obj) },
		UpdateFunc: p.clusterChanged,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("simulator: watch of %s did not sync (are the CRDs installed?)", gvr.Resource)
		}
	}
	p.log.Info("simulated providers running", "namespace", p.opts.Namespace)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k, quit := p.queue.Get()
				if quit {
					return
				}
				p.process(ctx, k, reconcilers[k.gvr])
				p.queue.Done(k)
			}
		}()
	}
	<-ctx.Done()
	p.queue.ShutDown()
	wg.Wait()
	return nil
}

// clusterChanged queues a Cluster's simulated control plane when the Cluster's infrastructure
// has just become ready.
func (p *Provider) clusterChanged(old, obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !infrastructureReady(u) {
		return
	}
	if was, ok := old.(*unstructured.Unstructured); ok && infrastructureReady(was) {
		return
	}
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "kind")
	name, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneRef", "name")
	if kind == "SimControlPlane" && name != "" {
		p.queue.Add(key{gvr: SimControlPlanes, namespace: u.GetNamespace(), name: name})
	}
}

func infrastructureReady(cluster *unstructured.Unstructured) bool {
	ready, _, _ := unstructured.NestedBool(cluster.Object, "status", "infrastructureReady")
	return ready
}

func (p *Provider) process(ctx context.Context, k key, fn reconcileFunc) {
	u, err := p.cached(k.gvr, k.namespace, k.name)
	if apierrors.IsNotFound(err) {
		p.queue.Forget(k)
		return
	}
	if err == nil {
		var after time.Duration
		after, err = fn(ctx, u)
		if err == nil {
			p.queue.Forget(k)
			if after > 0 {
				p.queue.AddAfter(k, after)
			}
			return
		}
	}
	if !apierrors.IsConflict(err) && ctx.Err() == nil {
		p.log.Warn("simulator reconcile failed", "resource", k.gvr.Resource, "namespace", k.namespace, "name", k.name, "error", err)
	}
	p.queue.AddRateLimited(k)
}

// setting returns an annotation from the object, else from its Cluster.
func (p *Provider) setting(u *unstructured.Unstructured, name string) string {
	if v, ok := u.GetAnnotations()[name]; ok {
		return v
	}
	cluster := u.GetLabels()[clusterNameLabel]
	if cluster == "" {
		if c, _, _ := unstructured.NestedString(u.Object, "spec", "clusterName"); c != "" {
			cluster = c
		}
	}
	if cluster == "" {
		return ""
	}
	c, err := p.cached(Clusters, u.GetNamespace(), cluster)
	if err != nil {
		return ""
	}
	return c.GetAnnotations()[name]
}

// cached is a copy of an object from the informers' cache (the reconcilers change their copy); a
// stale one only costs a conflict when its status is written, and the key is tried again.
func (p *Provider) cached(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	obj, err := p.listers[gvr].ByNamespace(namespace).Get(name)
	if err != nil {
		return nil, err
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("simulator: %s %s/%s is a %T", gvr.Resource, namespace, name, obj)
	}
	return u.DeepCopy(), nil
}

func (p *Provider) duration(u *unstructured.Unstructured, name string, def time.Duration) time.Duration {
	if v := p.setting(u, name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		p.log.Warn("ignoring bad duration annotation", "object", u.GetName(), "annotation", name, "value", v)
	}
	return def
}

// lifecycle handles finalizer and deletion; done means the caller should stop.
func (p *Provider) lifecycle(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured) (done bool, after time.Duration, err error) {
	fins := u.GetFinalizers()
	has := false
	for _, f := range fins {
		has = has || f == Finalizer
	}
	if ts := u.GetDeletionTimestamp(); ts != nil {
		if !has {
			return true, 0, nil
		}
		p.recordDeletion(u, false)
		wait := p.duration(u, DeleteDelay, p.opts.DeleteDelay) - time.Since(ts.Time)
		if wait > 0 {
			return true, wait, nil
		}
		kept := fins[:0:0]
		for _, f := range fins {
			if f != Finalizer {
				kept = append(kept, f)
			}
		}
		u.SetFinalizers(kept)
		_, err := p.dyn.Resource(gvr).Namespace(u.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{FieldManager: "simprovider"})
		if apierrors.IsNotFound(err) {
			err = nil
		}
		if err == nil {
			p.recordDeletion(u, true)
		}
		p.log.Info("released finalizer", "kind", u.GetKind(), "name", u.GetName())
		return true, 0, err
	}
	if !has {
		u.SetFinalizers(append(fins, Finalizer))
		_, err := p.dyn.Resource(gvr).Namespace(u.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{FieldManager: "simprovider"})
		return true, 0, err // the update event brings it back
	}
	return false, 0, nil
}

// updateStatus writes status when it differs from what the object has, leaving out the fields
// the API server prunes for the kind (pruned).
func (p *Provider) updateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, st map[string]any) error {
	cur, _, _ := unstructured.NestedMap(u.Object, "status")
	merged := map[string]any{}
	for k, v := range cur {
		merged[k] = v
	}
	p.mu.Lock()
	pruned := maps.Clone(p.pruned[gvr])
	p.mu.Unlock()
	for k, v := range st {
		switch {
		case pruned[k]:
		case v == nil:
			delete(merged, k)
		default:
			merged[k] = v
		}
	}
	if equalJSON(cur, merged) {
		return nil
	}
	u = u.DeepCopy()
	u.Object["status"] = merged
	updated, err := p.dyn.Resource(gvr).Namespace(u.GetNamespace()).UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "simprovider"})
	if err != nil {
		return err
	}
	kept, _, _ := unstructured.NestedMap(updated.Object, "status")
	for k, v := range st {
		if _, ok := kept[k]; !ok && v != nil && !pruned[k] {
			p.mu.Lock()
			if p.pruned[gvr] == nil {
				p.pruned[gvr] = map[string]bool{}
			}
			p.pruned[gvr][k] = true
			p.mu.Unlock()
			p.log.Info("the API server keeps no such status field; not sent again", "resource", gvr.Resource, "field", "status."+k)
		}
	}
	return nil
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func hashOf(v any) string {
	b, _ := json.Marshal(v)
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

// progress advances the rollout of target for an object: it reports whether the rollout is
// finished and, if not, how long until it is.
func (p *Provider) progress(u *unstructured.Unstructured, target string) (bool, time.Duration) {
	p.mu.Lock()
	r, ok := p.rollouts[u.GetUID()]
	if !ok {
		// First sight: whatever the object has now counts as rolled out.
		p.rollouts[u.GetUID()] = rollout{target: target, done: true}
		p.mu.Unlock()
		return true, 0
	}
	if r.target != target {
		r = rollout{target: target, started: time.Now()}
		p.rollouts[u.GetUID()] = r
	}
	p.mu.Unlock()
	if r.done {
		return true, 0
	}
	if p.setting(u, StuckRollout) == "true" {
		return false, 0
	}
	left := p.duration(u, RolloutDuration, p.opts.RolloutDuration) - time.Since(r.started)
	if left > 0 {
		return false, left
	}
	p.mu.Lock()
	r.done = true
	p.rollouts[u.GetUID()] = r
	p.mu.Unlock()
	return true, 0
}

func (p *Provider) recordVersion(u *unstructured.Unstructured, version string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.transitions = append(p.transitions, Transition{Kind: u.GetKind(), Name: u.GetName(), Version: version, At: time.Now()})
	p.log.Info("version rolled out", "kind", u.GetKind(), "name", u.GetName(), "version", version)
}

func failure(st map[string]any) map[string]any {
	st["failureReason"] = "ProvisioningFailed"
	st["failureMessage"] = "simulated provisioning failure (annotation " + FailProvisioning + ")"
	st["ready"] = false
	return st
}

func provisioned(u *unstructured.Unstructured, delay time.Duration) (bool, time.Duration) {
	left := delay - time.Since(u.GetCreationTimestamp().Time)
	return left <= 0, left
}

func int64Or(u *unstructured.Unstructured, def int64, path ...string) int64 {
	v, ok, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
	if !ok || v == nil {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return def
}

func selectorString(u *unstructured.Unstructured) string {
	m, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
