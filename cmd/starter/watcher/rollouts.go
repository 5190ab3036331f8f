package watcher

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/workflows"
)

// watchRollouts drives the Rollouts' workflows: a new Rollout, a spec or annotation change and a
// deletion each start the workflow if needed and signal it (it re-reads the Rollout). Status
// writes (the workflow's own) signal nothing, and a Rollout that has ended is left alone. Off,
// with a log line, where the Rollout CRD is not installed.
func (w *Watcher) watchRollouts(ctx context.Context) error {
	if _, err := w.kube.ResourceFor(kube.Rollouts.GroupVersion().String(), "Rollout"); err != nil {
		w.log.Info("fleet rollouts off: the Rollout CRD (topoflow.dev) is not installed", "error", err)
		return nil
	}
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[rolloutSignal](),
		workqueue.TypedRateLimitingQueueConfig[rolloutSignal]{Name: "rollouts"})
	w.rollouts = queue
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.kube.Dynamic, w.opts.Resync, w.opts.Namespace, nil)
	inf := factory.ForResource(kube.Rollouts).Informer()
	changed := func(oldObj, obj any) {
		u := asUnstructured(obj)
		if u == nil {
			return
		}
		if planDue(u) {
			w.objects.Add(activities.ObjectRef{Kind: workflows.RolloutPlanKind, Namespace: u.GetNamespace(), Name: u.GetName()})
		}
		if o := asUnstructured(oldObj); o != nil && o.GetGeneration() == u.GetGeneration() &&
			reflect.DeepEqual(o.GetAnnotations(), u.GetAnnotations()) && o.GetDeletionTimestamp().Equal(u.GetDeletionTimestamp()) &&
			o.GetResourceVersion() != u.GetResourceVersion() {
			return // a status or finalizer write
		}
		phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
		observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if rollout.Ended(phase, observed, u.GetGeneration()) && u.GetDeletionTimestamp() == nil {
			return
		}
		queue.Add(rolloutSignal{Key: u.GetNamespace() + "/" + u.GetName()})
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { changed(nil, obj) }, UpdateFunc: changed,
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	go func() {
		for {
			item, quit := queue.Get()
			if quit {
				return
			}
			signal := w.signalRollout
			if item.Wake {
				signal = w.wakeRollout
			}
			if err := signal(ctx, item.Key); err != nil {
				w.log.Warn("signalling Rollout workflow failed; will retry", "rollout", item.Key, "wake", item.Wake, "error", err)
				queue.AddRateLimited(item)
			} else {
				queue.Forget(item)
			}
			queue.Done(item)
		}
	}()
	return nil
}

// rolloutSignal is a queued signal to a Rollout's workflow (Key "namespace/name"): a start and
// signal when the Rollout changed, or only a wake of a running workflow (wakeRollout) when one of
// its Clusters did.
type rolloutSignal struct {
	Key  string
	Wake bool
}

// followClusters wakes the Rollout that claims a Cluster when an update first reports the
// Cluster's topology reconciled for its generation (rollout.NewlyReconciled): the Rollout then
// looks at once whether the Cluster is done, rather than at its next poll.
func (w *Watcher) followClusters(oldObj any, u *unstructured.Unstructured) {
	claim := u.GetAnnotations()[rollout.ClaimAnnotation]
	o := asUnstructured(oldObj)
	if w.rollouts == nil || claim == "" || (o != nil && o.GetResourceVersion() == u.GetResourceVersion()) {
		return // not claimed, or a resync: nothing new
	}
	cur, err := progressOf(u)
	if err != nil {
		return
	}
	var old *clusterv1.Cluster
	if o != nil {
		if old, err = progressOf(o); err != nil {
			old = nil
		}
	}
	if rollout.NewlyReconciled(old, cur) {
		w.rollouts.Add(rolloutSignal{Key: claim, Wake: true})
	}
}

// progressOf reads what rollout.NewlyReconciled reads of a Cluster of the watch (v1beta2, the
// hub): its metadata and status, leniently (a status field a newer Cluster API adds is no reason
// not to wake a Rollout). The spec is left out: nothing there is read.
func progressOf(u *unstructured.Unstructured) (*clusterv1.Cluster, error) {
	part := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	for _, f := range []string{"metadata", "status"} {
		if v, ok := u.Object[f]; ok {
			part.Object[f] = v
		}
	}
	var c clusterv1.Cluster
	if _, err := decode.Lenient(part, &c); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &c, nil
}

// wakeRollout signals a running Rollout workflow to look at its Clusters; one that has ended (or
// never started) is left alone.
func (w *Watcher) wakeRollout(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	err = w.temporal.SignalWorkflow(ctx, workflows.RolloutWorkflowID(ns, name), "", workflows.SignalRolloutEvent, nil)
	var notFound *serviceerror.NotFound
	if errors.As(err, &notFound) {
		return nil
	}
	return err
}

// signalRollout starts the Rollout's workflow if needed and signals it.
func (w *Watcher) signalRollout(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	id := workflows.RolloutWorkflowID(ns, name)
	opts := client.StartWorkflowOptions{
		ID: id, TaskQueue: w.opts.TaskQueue,
		StaticSummary: "Rollout " + key,
		StaticDetails: "Fleet rollout **" + key + "**: its stages, soaks, approvals and windows, Cluster by Cluster.",
	}
	in := workflows.RolloutInput{Rollout: activities.RolloutRef{Namespace: ns, Name: name}, Timing: w.opts.RolloutTiming}
	if _, err := w.temporal.SignalWithStartWorkflow(ctx, id, workflows.SignalRolloutEvent, nil, opts, workflows.RolloutWorkflowType, in); err != nil {
		return fmt.Errorf("signal-with-start %s: %w", id, err)
	}
	return nil
}

// planDue says whether a Rollout waits for its first approval without a plan for it in its status
// (rollout.PlanDue): its plan is then written by a ReconcileObject workflow.
func planDue(u *unstructured.Unstructured) bool {
	var r rolloutv1.Rollout
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		return false
	}
	return rollout.PlanDue(r.Status, r.Generation)
}
