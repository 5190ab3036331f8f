package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// HookCall asks for one lifecycle hook of a Cluster.
type HookCall struct {
	Cluster ClusterRef `json:"cluster"`
	Hook    string     `json:"hook"`
	// Upgrade hooks carry versions: from/to and the planned steps (BeforeClusterUpgrade), or the
	// version reached (AfterControlPlaneUpgrade, AfterClusterUpgrade).
	FromKubernetesVersion string   `json:"fromKubernetesVersion,omitempty"`
	ToKubernetesVersion   string   `json:"toKubernetesVersion,omitempty"`
	KubernetesVersion     string   `json:"kubernetesVersion,omitempty"`
	ControlPlaneUpgrades  []string `json:"controlPlaneUpgrades,omitempty"`
	WorkersUpgrades       []string `json:"workersUpgrades,omitempty"`
}

// HookOutcome is the aggregated answer of every registered handler; the calls are kept in the
// workflow's history, so operators see each request's outcome in the Temporal UI.
type HookOutcome struct {
	runtimeext.Result
	ClusterGone bool `json:"clusterGone,omitempty"`
}

// CallLifecycleHook calls a lifecycle hook (BeforeClusterCreate, AfterControlPlaneInitialized,
// BeforeClusterDelete, ...) with the Cluster in the request, on every Runtime Extension that
// registered a handler for it. Transport errors under failurePolicy Fail come back as Failed;
// the workflow decides what a failure means for its step.
//
// A retry of the activity after the extension answered (its completion was lost, as in a
// Temporal outage) returns that answer without calling again; every call of the activity's
// attempts carries the same Idempotency-Key header (see runtimeext.WithIdempotencyKey).
func (a *Activities) CallLifecycleHook(ctx context.Context, in HookCall) (*HookOutcome, error) {
	key := hookCallKey(ctx)
	if out, ok := a.hookAnswers.earlier(key); ok {
		a.Log.InfoContext(ctx, "hook answer taken from an earlier attempt of the same call, not calling again",
			"cluster", in.Cluster.String(), "hook", in.Hook, "call", key)
		return &out, nil
	}
	ctx = runtimeext.WithIdempotencyKey(ctx, key)
	cluster, err := a.readCluster(ctx, in.Cluster)
	if err != nil {
		if kube.IsNotFound(err) {
			return &HookOutcome{ClusterGone: true}, nil
		}
		return nil, fmt.Errorf("reading Cluster %s: %w", in.Cluster, err)
	}
	cluster.ManagedFields = nil
	req, err := hookRequest(in, cluster)
	if err != nil {
		return nil, err
	}
	rc := &runtimeext.Client{Kube: a.Kube}
	started := time.Now()
	res, err := rc.CallHook(ctx, in.Hook, in.Cluster.Namespace, req)
	if err != nil {
		return nil, err
	}
	metrics.HookDuration.WithLabelValues(in.Hook).Observe(time.Since(started).Seconds())
	outcome := hookOutcome(res)
	metrics.HookCalls.WithLabelValues(in.Hook, outcome).Inc()
	a.hookEvent(cluster, in, outcome, res)
	for _, c := range res.Calls {
		a.Log.InfoContext(ctx, "hook called", "cluster", in.Cluster.String(), "hook", in.Hook, "handler", c.Handler,
			"status", c.Status, "retryAfterSeconds", c.RetryAfterSeconds, "error", c.Error, "ignored", c.Ignored)
	}
	out := HookOutcome{Result: *res}
	if !res.TransportFailed() {
		a.hookAnswers.record(key, out) // a call that failed in transport is worth making again
	}
	return &out, nil
}

// PendingHooksInput is the set of after-hooks a Cluster is still owed.
type PendingHooksInput struct {
	Cluster ClusterRef `json:"cluster"`
	Hooks   []string   `json:"hooks,omitempty"`
}

// pendingHooksFieldManager owns the pending-hooks annotation, so an empty set removes it.
const pendingHooksFieldManager = "topoflow-pending-hooks"

// SetPendingHooks keeps the runtime.cluster.x-k8s.io/pending-hooks annotation (comma separated,
// as Cluster API writes it) equal to the hooks still owed; an empty set removes it.
func (a *Activities) SetPendingHooks(ctx context.Context, in PendingHooksInput) error {
	cluster := &hubv1.Cluster{}
	if err := a.Kube.GetTyped(ctx, kube.Clusters, in.Cluster.Namespace, in.Cluster.Name, cluster); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Cluster %s: %w", in.Cluster, err)
	}
	return a.writePendingHooks(ctx, cluster, in.Hooks)
}

// writePendingHooks sets the pending-hooks annotation of a Cluster read before to hooks (none:
// removed), with its own field manager; a Cluster gone meanwhile is not an error.
func (a *Activities) writePendingHooks(ctx context.Context, cluster *hubv1.Cluster, hooks []string) error {
	ctx = kube.Report(ctx)       // one write, not queued behind the fleet's applies
	obj := clusterShell(cluster) // with its uid: a Cluster deleted meanwhile is not created again
	if len(hooks) > 0 {
		obj.SetAnnotations(map[string]string{runtimev1.PendingHooksAnnotation: strings.Join(hooks, ",")})
	}
	if _, err := a.Kube.Apply(ctx, obj, pendingHooksFieldManager); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return err
	}
	return nil
}

// hookRequest is the typed request of a lifecycle hook (model/api/hooks/v1alpha1) as the map the
// runtime client completes for each handler (apiVersion and kind, settings, the Cluster in the
// version the handler reads).
func hookRequest(in HookCall, cluster *hubv1.Cluster) (map[string]any, error) {
	steps := func(versions []string) []hooksv1.UpgradeStepInfo {
		var out []hooksv1.UpgradeStepInfo
		for _, v := range versions {
			out = append(out, hooksv1.UpgradeStepInfo{Version: v})
		}
		return out
	}
	var req any
	switch in.Hook {
	case hooksv1.BeforeClusterCreate, hooksv1.AfterControlPlaneInitialized, hooksv1.BeforeClusterDelete:
		req = hooksv1.ClusterRequest{Cluster: *cluster}
	case hooksv1.BeforeClusterUpgrade:
		req = hooksv1.BeforeClusterUpgradeRequest{Cluster: *cluster, FromKubernetesVersion: in.FromKubernetesVersion,
			ToKubernetesVersion: in.ToKubernetesVersion, ControlPlaneUpgrades: steps(in.ControlPlaneUpgrades), WorkersUpgrades: steps(in.WorkersUpgrades)}
	default: // the per-step upgrade hooks and AfterClusterUpgrade
		req = hooksv1.UpgradeStepRequest{Cluster: *cluster, FromKubernetesVersion: in.FromKubernetesVersion,
			ToKubernetesVersion: in.ToKubernetesVersion, KubernetesVersion: in.KubernetesVersion,
			ControlPlaneUpgrades: steps(in.ControlPlaneUpgrades), WorkersUpgrades: steps(in.WorkersUpgrades)}
	}
	js, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(js, &out)
}

// hookOutcome names a hook call's result for topoflow_hook_calls_total.
func hookOutcome(res *runtimeext.Result) string {
	switch {
	case len(res.Calls) == 0:
		return "no-handler"
	case len(res.Failed) > 0:
		return "failed"
	case res.RetryAfterSeconds > 0:
		return "blocked"
	}
	return "passed"
}

// announces says whether a hook's call records an Event on the Cluster even when it passes (the
// upgrade's start and end, the teardown's start): such a call is made with or without handlers.
func announces(hook string) bool {
	switch hook {
	case hooksv1.BeforeClusterUpgrade, hooksv1.AfterClusterUpgrade, hooksv1.BeforeClusterDelete:
		return true
	}
	return false
}

// hookEvent tells, on the Cluster, what a hook's answer means for it: blocking (with the
// extensions' message), failing, or an upgrade started or completed.
func (a *Activities) hookEvent(c *hubv1.Cluster, in HookCall, outcome string, res *runtimeext.Result) {
	switch {
	case outcome != "blocked" && outcome != "failed" && !announces(in.Hook):
	case outcome == "blocked":
		a.event(c, corev1.EventTypeNormal, "HookBlocking", "%s asked to wait %ds: %s", in.Hook, res.RetryAfterSeconds, res.Message)
	case outcome == "failed":
		a.event(c, corev1.EventTypeWarning, "HookFailed", "%s failed: %s", in.Hook, res.Message)
	case in.Hook == hooksv1.BeforeClusterUpgrade:
		a.event(c, corev1.EventTypeNormal, "UpgradeStarted", "Upgrade %s -> %s started (control plane steps %s)",
			in.FromKubernetesVersion, in.ToKubernetesVersion, strings.Join(in.ControlPlaneUpgrades, ", "))
	case in.Hook == hooksv1.AfterClusterUpgrade:
		a.event(c, corev1.EventTypeNormal, "UpgradeCompleted", "Upgrade to %s completed", in.KubernetesVersion)
	case in.Hook == hooksv1.BeforeClusterDelete:
		a.event(c, corev1.EventTypeNormal, "DeleteStarted", "Deleting the topology: workers, control plane, infrastructure, templates")
	}
}
