// Package watcher turns Kubernetes watch events into Temporal workflow starts and signals: one
// long-running workflow per managed Cluster, signalled whenever the Cluster, its ClusterClass or
// an object of its topology changes. Events are coalesced per Cluster through a rate-limited
// queue, so a burst of status updates becomes one signal.
package watcher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/workflows"
)

// Options configure a Watcher.
type Options struct {
	TaskQueue string
	// Namespace limits the watch to one Kubernetes namespace; empty watches all.
	Namespace string
	// Resync re-signals every Cluster this often (the safety net; default 10m).
	Resync time.Duration
	// Timing is passed to newly started workflows.
	Timing workflows.Timing
	// RolloutTiming is passed to newly started Rollout workflows.
	RolloutTiming workflows.RolloutTiming
	// Workers is how many signals may be in flight at once (default 4).
	Workers int
	// Coalesce holds a Cluster's first queued event this long before signalling, so a burst of
	// events (a provider updating several objects) becomes one signal and one pass (0: at once).
	Coalesce time.Duration
	// CoalesceMax is how long a Cluster's first event may be held while many Clusters have events
	// at once (see coalesceWindow; at most Coalesce: the hold does not grow).
	CoalesceMax time.Duration
	// ExtensionConfigs turns on the (cluster-wide) watch of ExtensionConfigs, which re-runs
	// discovery whenever one changes.
	ExtensionConfigs bool
}

// DefaultCoalesce is the starter's --coalesce default: long enough to fold the few events a
// provider's reconcile makes (tens of milliseconds apart), short beside a pass.
const DefaultCoalesce = 100 * time.Millisecond

// DefaultCoalesceMax is the starter's --coalesce-max default.
const DefaultCoalesceMax = time.Second

// Watcher watches the API server and drives the Cluster workflows.
type Watcher struct {
	kube     *kube.Client
	temporal client.Client
	opts     Options
	log      *slog.Logger

	queue workqueue.TypedRateLimitingInterface[string]
	// window is how long a Cluster's first queued event is held (Options.Coalesce and CoalesceMax).
	window *coalesceWindow
	// objects queues registry objects (ClusterClasses, ExtensionConfigs) whose status to refresh.
	objects workqueue.TypedRateLimitingInterface[activities.ObjectRef]
	mu      sync.Mutex
	sources map[string]string // cluster key -> where the last change was seen
	// seen: cluster key -> the objects of its queued events (workflows.ClusterEvent.Seen).
	seen     map[string][]corev1.ObjectReference
	watching map[schema.GroupVersionResource]bool

	clusters cache.SharedIndexInformer
	// classes is the ClusterClass informer (its store tells which classes opted in to revisions).
	classes cache.SharedIndexInformer
	// rollouts queues signals to Rollout workflows (nil: the Rollout CRD is not installed).
	rollouts workqueue.TypedRateLimitingInterface[rolloutSignal]
	owned    dynamicinformer.DynamicSharedInformerFactory
	// templates watches the kinds ClusterClasses reference; templateUsers maps a template
	// ("Kind/namespace/name") to the classes ("namespace/name") that reference it.
	templates     dynamicinformer.DynamicSharedInformerFactory
	templateUsers map[string]map[string]bool
	watchingTmpl  map[schema.GroupVersionResource]bool
	ctx           context.Context
	// ours are topoflow's field managers: an update only they made is an echo (see echo).
	ours map[string]bool
}

// New returns a Watcher.
func New(k *kube.Client, tc client.Client, opts Options, log *slog.Logger) *Watcher {
	if opts.TaskQueue == "" {
		opts.TaskQueue = workflows.DefaultTaskQueue
	}
	if opts.Resync == 0 {
		opts.Resync = 10 * time.Minute
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	return &Watcher{
		kube:     k,
		temporal: tc,
		opts:     opts,
		log:      log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "clusters"}),
		objects: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[activities.ObjectRef](500*time.Millisecond, time.Minute),
			workqueue.TypedRateLimitingQueueConfig[activities.ObjectRef]{Name: "objects"}),
		window:        newCoalesceWindow(opts.Coalesce, opts.CoalesceMax),
		sources:       map[string]string{},
		seen:          map[string][]corev1.ObjectReference{},
		watching:      map[schema.GroupVersionResource]bool{},
		templateUsers: map[string]map[string]bool{},
		watchingTmpl:  map[schema.GroupVersionResource]bool{},
		ours:          ourManagers(),
	}
}

// ourManagers are the managers whose writes are echoes of a Cluster's own workflow.
func ourManagers() map[string]bool {
	out := map[string]bool{}
	for _, m := range activities.PassFieldManagers() {
		out[m] = true
	}
	return out
}

const classIndex = "class"

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	w.ctx = ctx
	defer w.queue.ShutDown()
	defer w.objects.ShutDown()
	ns := w.opts.Namespace
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.kube.Dynamic, w.opts.Resync, ns, nil)
	w.owned = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.kube.Dynamic, 0, ns, func(o *metav1.ListOptions) {
		o.LabelSelector = labels.TopologyOwned
	})
	w.templates = dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.kube.Dynamic, 0, ns, nil)
	if err := w.watchClusters(factory); err != nil {
		return err
	}
	classes, err := w.watchClasses(factory)
	if err != nil {
		return err
	}
	if w.opts.ExtensionConfigs {
		if err := w.watchExtensionConfigs(ctx, classes); err != nil {
			return err
		}
	}
	w.watchOwned(kube.MachineDeployments)
	w.watchOwned(kube.MachinePools)
	w.watchDeletingMachineSets()
	if err := w.watchRollouts(ctx); err != nil {
		return err
	}

	factory.Start(ctx.Done())
	w.owned.Start(ctx.Done())
	w.templates.Start(ctx.Done())
	for gvr, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("watch of %s did not sync", gvr.Resource)
		}
	}
	w.log.Info("watching", "namespace", orAll(ns), "taskQueue", w.opts.TaskQueue)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for w.processObject(ctx) {
		}
	}()
	for range w.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.processNext(ctx) {
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		w.countUpgrades(ctx)
	}()
	<-ctx.Done()
	w.queue.ShutDown()
	w.objects.ShutDown()
	wg.Wait()
	return nil
}

// informer is the informer of gvr, watching the version the API server serves (Wire) and handing
// on objects in gvr's version: the handlers read cluster.x-k8s.io objects in the v1beta2 shape
// (the hub) whichever version the server serves them in, and the watch draws no deprecation
// warning.
func (w *Watcher) informer(f dynamicinformer.DynamicSharedInformerFactory, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	wire := w.kube.Wire(gvr)
	inf := f.ForResource(wire).Informer()
	if wire != gvr {
		_ = inf.SetTransform(w.kube.ModelledTransform(gvr)) // refused only once started: set already
	}
	return inf
}

// watchClusters watches Clusters, indexed by the class they name.
func (w *Watcher) watchClusters(factory dynamicinformer.DynamicSharedInformerFactory) error {
	w.clusters = w.informer(factory, kube.Clusters)
	if err := w.clusters.AddIndexers(cache.Indexers{classIndex: func(obj any) ([]string, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return nil, nil
		}
		return nonEmpty(clusterClassKey(u)), nil
	}}); err != nil {
		return err
	}
	_, err := w.clusters.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onCluster(nil, obj) },
		UpdateFunc: func(old, obj any) { w.onCluster(old, obj) },
		DeleteFunc: func(obj any) { w.onCluster(nil, obj) },
	})
	return err
}

// watchClasses watches ClusterClasses; a change reaches the Clusters of the class.
func (w *Watcher) watchClasses(factory dynamicinformer.DynamicSharedInformerFactory) (cache.SharedIndexInformer, error) {
	classes := w.informer(factory, kube.ClusterClasses)
	w.classes = classes
	_, err := classes.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.onClass(nil, obj) },
		UpdateFunc: w.onClass,
		// A deleted class reaches its Clusters at once: their next pass reports it missing.
		DeleteFunc: func(obj any) {
			if u := asUnstructured(obj); u != nil {
				w.onClassRevisions(nil, u, true)
				w.fanOutClass(u.GetNamespace(), u.GetName(), "ClusterClass "+u.GetName()+" deleted", u)
			}
		},
	})
	return classes, err
}

// watchExtensionConfigs watches ExtensionConfigs: a new generation is discovered again, and the
// classes that use it rediscover their variables.
func (w *Watcher) watchExtensionConfigs(ctx context.Context, classes cache.SharedIndexInformer) error {
	extFactory := dynamicinformer.NewDynamicSharedInformerFactory(w.kube.Dynamic, w.opts.Resync)
	changed := func(oldObj, obj any) {
		u := asUnstructured(obj)
		if o := asUnstructured(oldObj); u == nil || (o != nil && o.GetGeneration() == u.GetGeneration()) {
			return
		}
		w.objects.Add(activities.ObjectRef{Kind: "ExtensionConfig", Name: u.GetName()})
		w.rediscoverClasses(classes.GetStore(), u.GetName())
	}
	if _, err := extFactory.ForResource(extensionConfigs).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { changed(nil, obj) }, UpdateFunc: changed,
	}); err != nil {
		return err
	}
	extFactory.Start(ctx.Done())
	return nil
}

// countUpgrades keeps topoflow_upgrades_in_progress current: the running upgrade workflows of
// the task queue, counted in Temporal's visibility store every 30 s.
func (w *Watcher) countUpgrades(ctx context.Context) {
	query := fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running' AND TaskQueue = '%s'", workflows.ClusterUpgradeWorkflowType, w.opts.TaskQueue)
	for {
		resp, err := w.temporal.CountWorkflow(ctx, &workflowservice.CountWorkflowExecutionsRequest{Query: query})
		if err == nil {
			metrics.UpgradesInProgress.Set(float64(resp.GetCount()))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(30 * time.Second):
		}
	}
}

var extensionConfigs = schema.GroupVersionResource{Group: "runtime.cluster.x-k8s.io", Version: "v1alpha1", Resource: "extensionconfigs"}

// processObject starts the reconcile workflow of one registry object; a newer change replaces a
// run still in progress.
func (w *Watcher) processObject(ctx context.Context) bool {
	ref, quit := w.objects.Get()
	if quit {
		return false
	}
	defer w.objects.Done(ref)
	_, err := w.temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.ObjectWorkflowID(ref),
		TaskQueue:                w.opts.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		StaticSummary:            ref.Kind + " " + strings.TrimPrefix(ref.Namespace+"/"+ref.Name, "/"),
	}, workflows.ReconcileObjectWorkflowType, ref)
	if err != nil {
		w.log.Warn("starting the reconcile of a registry object failed; will retry", "kind", ref.Kind, "name", ref.Name, "error", err)
		w.objects.AddRateLimited(ref)
		return true
	}
	w.objects.Forget(ref)
	return true
}

func orAll(ns string) string {
	if ns == "" {
		return "all"
	}
	return ns
}

func asUnstructured(obj any) *unstructured.Unstructured {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// enqueue queues a signal for a Cluster; obj is the object the event was about (nil: none).
func (w *Watcher) enqueue(ns, name, source string, obj *unstructured.Unstructured) {
	key := ns + "/" + name
	kind, _, _ := strings.Cut(source, " ")
	metrics.EventsReceived.WithLabelValues(kind).Inc()
	w.mu.Lock()
	if _, queued := w.sources[key]; queued {
		metrics.EventsCoalesced.WithLabelValues().Inc()
	}
	w.sources[key] = source
	if obj != nil {
		w.seen[key] = activities.MergeSeen(w.seen[key], activities.SeenObject(obj))
	}
	w.mu.Unlock()
	hold := w.window.hold(key, time.Now())
	metrics.CoalesceHold.Set(hold.Seconds())
	if hold > 0 {
		w.queue.AddAfter(key, hold)
	} else {
		w.queue.Add(key)
	}
	metrics.QueueDepth.Set(float64(w.queue.Len()))
}

// onCluster reacts to spec, metadata and deletion changes (and informer resyncs), not to the
// status writes topoflow itself makes.
func (w *Watcher) onCluster(oldObj, obj any) {
	u := asUnstructured(obj)
	if u == nil {
		return
	}
	// Watch the kinds this Cluster's topology uses, so provider progress wakes its workflow. First:
	// topoflow's own apply sets the references, and that update is an echo.
	for _, field := range []string{"infrastructureRef", "controlPlaneRef"} {
		group, _, _ := unstructured.NestedString(u.Object, "spec", field, "apiGroup")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", field, "kind")
		if group != "" && kind != "" {
			if gvr, err := w.contractResource(group, kind); err == nil {
				w.watchOwned(gvr)
			}
		}
	}
	w.followClusters(oldObj, u)
	w.onClusterRevisions(asUnstructured(oldObj), u)
	if old := asUnstructured(oldObj); old != nil && old.GetResourceVersion() != u.GetResourceVersion() {
		if echo(old, u, w.ours) {
			metrics.EchoesSkipped.WithLabelValues("Cluster").Inc()
			return
		}
		if !clusterChanged(old, u) {
			return
		}
	}
	w.enqueue(u.GetNamespace(), u.GetName(), "Cluster", u)
}

// contractResource is the resource a Cluster's contract reference points at: v1beta2 names only
// the API group and kind, and the object is served in the version the API server prefers for
// them (as the worker reads it: conversion.ToV1Beta1 resolves the same reference so).
func (w *Watcher) contractResource(group, kind string) (schema.GroupVersionResource, error) {
	version, err := w.kube.PreferredVersion(group, kind)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("the served version of %s in %s: %w", kind, group, err)
	}
	return w.kube.ResourceFor(schema.GroupVersion{Group: group, Version: version}.String(), kind)
}

// clusterChanged says whether an update of a Cluster is one its workflow acts on: its spec (the
// generation), labels, annotations (Cluster API's conversion data aside, which follows its
// status: topology.SameAnnotations), finalizers or deletion. A status write is not, whoever made it.
func clusterChanged(old, cur *unstructured.Unstructured) bool {
	return old.GetGeneration() != cur.GetGeneration() ||
		!maps.Equal(old.GetLabels(), cur.GetLabels()) || !topology.SameAnnotations(old.GetAnnotations(), cur.GetAnnotations()) ||
		(old.GetDeletionTimestamp() == nil) != (cur.GetDeletionTimestamp() == nil) ||
		!slices.Equal(old.GetFinalizers(), cur.GetFinalizers())
}

// onClass fans a ClusterClass change out to the Clusters that use it, watches its templates, and
// refreshes its status when its spec changed.
func (w *Watcher) onClass(oldObj, obj any) {
	u := asUnstructured(obj)
	if u == nil {
		return
	}
	if o := asUnstructured(oldObj); o == nil || o.GetGeneration() != u.GetGeneration() {
		w.objects.Add(activities.ObjectRef{Kind: "ClusterClass", Namespace: u.GetNamespace(), Name: u.GetName()})
	}
	w.onClassRevisions(oldObj, u, false)
	w.trackTemplates(u)
	w.fanOutClass(u.GetNamespace(), u.GetName(), "ClusterClass "+u.GetName(), u)
}

// rediscoverClasses refreshes the status of the ClusterClasses whose external patches discover
// variables from an ExtensionConfig that changed.
func (w *Watcher) rediscoverClasses(classes cache.Store, config string) {
	for _, obj := range classes.List() {
		u := asUnstructured(obj)
		if u == nil {
			continue
		}
		patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "patches")
		for _, p := range patches {
			name, _, _ := unstructured.NestedString(asMap(p), "external", "discoverVariablesExtension")
			if _, cfg, ok := strings.Cut(name, "."); ok && cfg == config {
				w.objects.Add(activities.ObjectRef{Kind: "ClusterClass", Namespace: u.GetNamespace(), Name: u.GetName()})
				break
			}
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// fanOutClass enqueues every Cluster of a class; changed is the object whose event it was (the
// class or one of its templates; nil when it is gone).
func (w *Watcher) fanOutClass(ns, name, source string, changed *unstructured.Unstructured) {
	users, err := w.clusters.GetIndexer().ByIndex(classIndex, ns+"/"+name)
	if err != nil {
		return
	}
	for _, c := range users {
		if cu := asUnstructured(c); cu != nil {
			w.enqueue(cu.GetNamespace(), cu.GetName(), source, changed)
		}
	}
}

// trackTemplates records which templates a class references and watches their kinds, so a
// template edit reaches the class's Clusters as an event (not only at the next resync).
func (w *Watcher) trackTemplates(class *unstructured.Unstructured) {
	var cc clusterv1.ClusterClass
	if _, err := decode.Lenient(class, &cc); err != nil {
		return // an invalid class is reported by the Clusters' workflows
	}
	classKey := cc.Namespace + "/" + cc.Name
	refs := desired.TemplateRefs(&cc)
	var gvrs []schema.GroupVersionResource
	w.mu.Lock()
	for key, users := range w.templateUsers {
		delete(users, classKey)
		if len(users) == 0 {
			delete(w.templateUsers, key)
		}
	}
	for _, tr := range refs {
		key := desired.RefKey(tr.Ref)
		if w.templateUsers[key] == nil {
			w.templateUsers[key] = map[string]bool{}
		}
		w.templateUsers[key][classKey] = true
	}
	w.mu.Unlock()
	for _, tr := range refs {
		if gvr, err := w.kube.ResourceFor(tr.Ref.APIVersion, tr.Ref.Kind); err == nil {
			gvrs = append(gvrs, gvr)
		}
	}
	for _, gvr := range gvrs {
		w.watchTemplates(gvr)
	}
}

func (w *Watcher) watchTemplates(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	if w.watchingTmpl[gvr] {
		w.mu.Unlock()
		return
	}
	w.watchingTmpl[gvr] = true
	w.mu.Unlock()
	handler := func(oldObj, obj any) {
		u := asUnstructured(obj)
		if u == nil {
			return
		}
		if o := asUnstructured(oldObj); o != nil && o.GetGeneration() == u.GetGeneration() &&
			maps.Equal(o.GetLabels(), u.GetLabels()) && topology.SameAnnotations(o.GetAnnotations(), u.GetAnnotations()) {
			return
		}
		key := u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
		w.mu.Lock()
		var classes []string
		for c := range w.templateUsers[key] {
			classes = append(classes, c)
		}
		w.mu.Unlock()
		w.onTemplateRevisions(classes)
		for _, c := range classes {
			ns, name := splitKey(c)
			w.fanOutClass(ns, name, u.GetKind()+" "+u.GetName(), u)
		}
	}
	_, _ = w.templates.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { handler(nil, obj) },
		UpdateFunc: handler,
		DeleteFunc: func(obj any) { handler(nil, obj) },
	})
	if w.ctx != nil {
		w.templates.Start(w.ctx.Done())
	}
}

// watchDeletingMachineSets wakes a Cluster's workflow when one of its MachineSets starts being
// deleted or is gone, and for nothing else a MachineSet does (its status moves all through a
// rollout; the MachineDeployment's events carry that): the pass then lets Cluster API's topology
// finalizer go from a deleting one (on Clusters taken over from Cluster API) and deletes the
// templates only it still used.
func (w *Watcher) watchDeletingMachineSets() {
	// Asked as v1beta1 (only metadata is read): the conversion reads a MachineSet that way from a
	// server of either version, and to the hub from neither.
	inf := w.informer(w.owned, kube.V1Beta1MachineSets)
	enqueue := func(obj any) {
		if u := asUnstructured(obj); u != nil && u.GetLabels()[labels.ClusterName] != "" {
			w.enqueue(u.GetNamespace(), u.GetLabels()[labels.ClusterName], u.GetKind()+" "+u.GetName(), u)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, obj any) {
			if o, n := asUnstructured(old), asUnstructured(obj); o != nil && n != nil &&
				o.GetDeletionTimestamp() == nil && n.GetDeletionTimestamp() != nil {
				enqueue(obj)
			}
		},
		DeleteFunc: enqueue,
	})
}

// watchOwned starts (once) a watch of topology-owned objects of one resource. Creates and deletes
// signal their Cluster; an update does unless it is an echo of topoflow's own write or changes
// nothing a pass reads (topology.Unobserved).
func (w *Watcher) watchOwned(gvr schema.GroupVersionResource) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watching[gvr] {
		return
	}
	w.watching[gvr] = true
	inf := w.informer(w.owned, gvr)
	handler := func(obj any) {
		u := asUnstructured(obj)
		if u == nil {
			return
		}
		if cluster := u.GetLabels()[labels.ClusterName]; cluster != "" {
			w.enqueue(u.GetNamespace(), cluster, u.GetKind()+" "+u.GetName(), u)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if u := asUnstructured(obj); ownCreate(u, w.ours) {
				metrics.EchoesSkipped.WithLabelValues(u.GetKind()).Inc()
				return
			}
			handler(obj)
		},
		UpdateFunc: func(old, obj any) {
			o, n := asUnstructured(old), asUnstructured(obj)
			if o != nil && n != nil && o.GetResourceVersion() == n.GetResourceVersion() {
				return
			}
			if echo(o, n, w.ours) {
				metrics.EchoesSkipped.WithLabelValues(n.GetKind()).Inc()
				return
			}
			if topology.Unobserved(o, n) {
				metrics.UnobservedSkipped.WithLabelValues(n.GetKind()).Inc()
				return
			}
			handler(obj)
		},
		DeleteFunc: handler,
	})
	if w.ctx != nil {
		w.owned.Start(w.ctx.Done())
	}
}

func (w *Watcher) processNext(ctx context.Context) bool {
	key, quit := w.queue.Get()
	if quit {
		return false
	}
	defer w.queue.Done(key)
	metrics.QueueDepth.Set(float64(w.queue.Len()))
	if err := w.signal(ctx, key); err != nil {
		metrics.SignalsSent.WithLabelValues("error").Inc()
		w.log.Warn("signalling Cluster workflow failed; will retry", "cluster", key, "error", err)
		w.queue.AddRateLimited(key)
		return true
	}
	metrics.SignalsSent.WithLabelValues("ok").Inc()
	w.queue.Forget(key)
	return true
}

// signal starts the Cluster's workflow if needed and signals it. A Cluster that is gone or not
// managed only gets a signal (if its workflow runs), never a new workflow.
func (w *Watcher) signal(ctx context.Context, key string) (err error) {
	w.mu.Lock()
	source, queued := w.sources[key]
	seen := w.seen[key]
	delete(w.sources, key)
	delete(w.seen, key)
	w.mu.Unlock()
	if !queued {
		// Signalled already: the key came back from the coalescing delay after an earlier pick.
		return nil
	}
	defer func() {
		if err != nil {
			// Keep the event for the retry, merged with any that came since.
			w.mu.Lock()
			if _, newer := w.sources[key]; !newer {
				w.sources[key] = source
			}
			w.seen[key] = activities.MergeSeen(seen, w.seen[key]...)
			w.mu.Unlock()
		}
	}()

	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	ev := workflows.ClusterEvent{Source: source, Seen: seen}
	ref := activities.ClusterRef{Namespace: ns, Name: name}
	id := workflows.WorkflowID(ns, name)
	obj, exists, err := w.clusters.GetIndexer().GetByKey(key)
	if err != nil {
		return err
	}
	managed, upgradingTo := false, ""
	if u := asUnstructured(obj); exists && u != nil {
		_, managed, _ = unstructured.NestedMap(u.Object, "spec", "topology")
		upgradingTo = upgradeTarget(u)
	}
	if upgradingTo != "" {
		// The upgrade's workflow does the passes while it runs: signalled directly, it is not
		// woken through its parent (one workflow task and one signal less per event).
		sent, err := w.signalUpgrade(ctx, ref, upgradingTo, ev)
		if sent || err != nil {
			return err
		}
	}
	if !managed {
		err := w.temporal.SignalWorkflow(ctx, id, "", workflows.SignalClusterEvent, ev)
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	opts := client.StartWorkflowOptions{ID: id, TaskQueue: w.opts.TaskQueue}
	opts.StaticSummary, opts.StaticDetails, opts.TypedSearchAttributes = workflows.ClusterStart(ref)
	in := workflows.ClusterInput{Cluster: ref, Timing: w.opts.Timing}
	_, err = w.temporal.SignalWithStartWorkflow(ctx, id, workflows.SignalClusterEvent, ev, opts, workflows.ClusterWorkflowType, in)
	if err != nil {
		return fmt.Errorf("signal-with-start %s: %w", id, err)
	}
	w.log.Debug("signalled", "workflow", id, "source", source)
	return nil
}

// upgradeTarget is the version a Cluster's upgrade runs to, as its status tells: its topology
// version while TopologyReconciled says ClusterUpgrading, else "". The status may lag the
// workflows, so it is only where an event is tried first (see signalUpgrade). The v1beta1
// condition (status.deprecated.v1beta1.conditions) is read, as the starter always has; the
// v1beta2 one (status.conditions, with the same reason) stands in where there is none.
func upgradeTarget(u *unstructured.Unstructured) string {
	for _, path := range [][]string{{"status", "deprecated", "v1beta1", "conditions"}, {"status", "conditions"}} {
		conds, _, _ := unstructured.NestedSlice(u.Object, path...)
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] != status.TopologyReconciled {
				continue
			}
			if m["reason"] != status.ReasonClusterUpgrading {
				return ""
			}
			version, _, _ := unstructured.NestedString(u.Object, "spec", "topology", "version")
			return version
		}
	}
	return ""
}

// signalUpgrade signals the running upgrade of a Cluster to the version to (sent); an upgrade
// that has ended, or has not started yet, is not signalled, and the Cluster's own workflow gets
// the event instead.
func (w *Watcher) signalUpgrade(ctx context.Context, ref activities.ClusterRef, to string, ev workflows.ClusterEvent) (sent bool, err error) {
	err = w.temporal.SignalWorkflow(ctx, workflows.UpgradeWorkflowID(ref, to), "", workflows.SignalClusterEvent, ev)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("signal upgrade of %s to %s: %w", ref, to, err)
	}
	metrics.SignalsToUpgrades.WithLabelValues().Inc()
	return true, nil
}
