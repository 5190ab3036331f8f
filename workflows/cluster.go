// Package workflows holds topoflow's durable lifecycle: one long-running workflow per managed
// Cluster, started and signalled from watch events. Workflow code is deterministic: all I/O is in
// activities, all waiting is on signals and Temporal timers.
package workflows

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/temporalx"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/status"
)

// Names shared with the starter (which signals) and the worker (which registers).
const (
	ClusterWorkflowType = "ClusterTopology"
	SignalClusterEvent  = "cluster-event"
	QueryState          = "state"
	DefaultTaskQueue    = "topoflow"
)

// WorkflowID is the stable ID of a Cluster's workflow.
func WorkflowID(namespace, name string) string { return "topology/" + namespace + "/" + name }

// Search attributes kept current on every Cluster workflow (registered by the stack and the worker).
var (
	SAClusterNamespace = temporal.NewSearchAttributeKeyKeyword("TopoflowClusterNamespace")
	SAClusterName      = temporal.NewSearchAttributeKeyKeyword("TopoflowClusterName")
	SAClass            = temporal.NewSearchAttributeKeyKeyword("TopoflowClass")
	SATargetVersion    = temporal.NewSearchAttributeKeyKeyword("TopoflowTargetVersion")
	SAPhase            = temporal.NewSearchAttributeKeyKeyword("TopoflowPhase")
)

// SearchAttributeNames lists the names above, for registration.
var SearchAttributeNames = []string{"TopoflowClusterNamespace", "TopoflowClusterName", "TopoflowClass", "TopoflowTargetVersion", "TopoflowPhase"}

// ClusterEvent tells the workflow something about its Cluster changed. The workflow is
// level-based: it re-reads the API server, so the event only says where the change was seen.
type ClusterEvent struct {
	// Source is "Cluster", "ClusterClass name", "Kind name" of an owned object, or "resync".
	Source string `json:"source"`
	// Seen are the objects the coalesced watch events were about, with the resourceVersions
	// they showed: the next pass reads them no older (the worker's cache may lag the starter's).
	Seen []corev1.ObjectReference `json:"seen,omitempty"`
}

// Timing holds the workflow's waits. Zero values take the defaults.
type Timing struct {
	// Resync is the safety-net re-check of a settled Cluster.
	Resync time.Duration `json:"resync,omitempty"`
	// WaitResync re-checks while waiting on providers or on a missing object, in case an event
	// was missed.
	WaitResync time.Duration `json:"waitResync,omitempty"`
	// PassesBeforeContinueAsNew bounds the history of one run.
	PassesBeforeContinueAsNew int `json:"passesBeforeContinueAsNew,omitempty"`
}

func (t Timing) withDefaults() Timing {
	if t.Resync == 0 {
		t.Resync = 10 * time.Minute
	}
	if t.WaitResync == 0 {
		t.WaitResync = time.Minute
	}
	if t.PassesBeforeContinueAsNew == 0 {
		t.PassesBeforeContinueAsNew = 200
	}
	return t
}

// ClusterInput starts (or continues) a Cluster's workflow.
type ClusterInput struct {
	Cluster activities.ClusterRef `json:"cluster"`
	Timing  Timing                `json:"timing,omitempty"`
	// Memory is what the workflow cannot recompute from the API server; it is carried across
	// continue-as-new.
	Memory Memory `json:"memory,omitempty"`
	// Hooks is the hook log shown by the state query, carried across continue-as-new.
	Hooks []HookRecord `json:"hooks,omitempty"`
	// Upgrade is an upgrade workflow still running when the previous run continued as new: this
	// run waits for it before anything else.
	Upgrade *UpgradeState `json:"upgrade,omitempty"`
}

// Memory holds facts only the workflow knows: which hook answers were already received.
type Memory struct {
	// CreateHookPassed: BeforeClusterCreate let the Cluster be created (or it already existed).
	CreateHookPassed bool `json:"createHookPassed,omitempty"`
	// AfterControlPlaneInitializedPending: topoflow created the Cluster and has not yet told the
	// extensions its control plane is initialized (called once, never again after success).
	AfterControlPlaneInitializedPending bool `json:"afterControlPlaneInitializedPending,omitempty"`
	// DeleteHookPassed: BeforeClusterDelete let the teardown start.
	DeleteHookPassed bool `json:"deleteHookPassed,omitempty"`
	// ApprovedUpgrade is the target version BeforeClusterUpgrade allowed.
	ApprovedUpgrade string `json:"approvedUpgrade,omitempty"`
	// ControlPlaneAcknowledged is the control plane version AfterControlPlaneUpgrade passed for.
	ControlPlaneAcknowledged string `json:"controlPlaneAcknowledged,omitempty"`
	// UpgradeCompleted is the target AfterClusterUpgrade was called for (once per upgrade).
	UpgradeCompleted string `json:"upgradeCompleted,omitempty"`
	// ControlPlaneApproved, WorkersApproved and WorkersAcknowledged are the versions
	// BeforeControlPlaneUpgrade, BeforeWorkersUpgrade and AfterWorkersUpgrade passed for.
	ControlPlaneApproved string `json:"controlPlaneApproved,omitempty"`
	WorkersApproved      string `json:"workersApproved,omitempty"`
	WorkersAcknowledged  string `json:"workersAcknowledged,omitempty"`
}

// State is what the "state" query returns: where the Cluster's lifecycle stands.
type State struct {
	Cluster   string `json:"cluster"`
	Class     string `json:"class,omitempty"`
	Version   string `json:"version,omitempty"`
	Phase     string `json:"phase,omitempty"`
	Step      string `json:"step"`
	Waiting   string `json:"waiting,omitempty"`
	LastError string `json:"lastError,omitempty"`
	Passes    int    `json:"passes"`
	// Upgrade is the upgrade in progress, if any: in a Cluster's workflow only its ID, from and to
	// (query that workflow for the rest).
	Upgrade *UpgradeState `json:"upgrade,omitempty"`
	// LastUpgrade is how the latest upgrade ended: "from -> to: completed", "...: withdrawn: ...".
	LastUpgrade string `json:"lastUpgrade,omitempty"`
	// Hooks are the latest lifecycle hook calls, oldest first.
	Hooks []HookRecord `json:"hooks,omitempty"`
}

// passOutcome says what to do after one reconcile pass.
type passOutcome int

const (
	settled  passOutcome = iota // everything applied; re-check at Resync
	waiting                     // waiting on a provider or a missing object; re-check at WaitResync
	finished                    // the Cluster is gone or no longer managed; end the workflow
	again                       // something moved on (a hook passed); pass again at once
	handOver                    // an upgrade runs on; continue as new and wait for it there
)

// ClusterTopology is the entity workflow of one managed Cluster. Each pass re-reads the Cluster
// and its class and moves the topology one step further:
//  1. apply the infrastructure cluster and control plane, point the Cluster at them;
//  2. wait for the infrastructure to be ready and the control plane initialized;
//  3. apply the MachineDeployments;
//
// then it waits for the next event (or a resync) and passes again, so day-2 edits (replicas,
// labels, pools) are applied by the same steps.
func ClusterTopology(ctx workflow.Context, in ClusterInput) error {
	r := &clusterRun{in: in, timing: in.Timing.withDefaults(), mem: in.Memory}
	r.state = State{Cluster: in.Cluster.String(), Step: "starting", Hooks: in.Hooks}
	if err := workflow.SetQueryHandlerWithOptions(ctx, QueryState, func() (State, error) { return r.state, nil },
		workflow.QueryHandlerOptions{Description: "Where the Cluster's lifecycle stands: phase, step and what it waits for"}); err != nil {
		return err
	}
	if err := r.upsertSearchAttributes(ctx, "", "", ""); err != nil {
		return err
	}
	r.baseline = workflow.GetVersion(ctx, baselineChange, workflow.DefaultVersion, 1) == 1
	r.local = r.feature(ctx, "local-activities")
	events := workflow.GetSignalChannel(ctx, SignalClusterEvent)
	r.events = events
	adopt := in.Upgrade
	if adopt == nil && workflow.GetInfo(ctx).ContinuedExecutionRunID == "" {
		adopt = r.runningUpgrade(ctx)
	}
	for ; ; adopt = nil {
		r.drain(ctx, events)
		var outcome passOutcome
		if adopt != nil {
			r.state.Upgrade = adopt
			r.setStep(ctx, "upgrade "+adopt.From+" -> "+adopt.To, "the upgrade workflow "+adopt.Workflow)
			outcome = r.awaitUpgrade(ctx, nil)
		} else {
			outcome = r.pass(ctx)
		}
		r.state.Passes++
		switch outcome {
		case finished:
			r.setStep(ctx, "finished", "")
			return nil
		case handOver:
			// The memory is the upgrade's to return; the pending-hooks annotation is its to write.
			next := in
			next.Memory, next.Hooks, next.Upgrade = r.mem, r.state.Hooks, r.state.Upgrade
			return workflow.NewContinueAsNewError(ctx, ClusterTopology, next)
		}
		r.syncPendingHooks(ctx)
		r.waitAfter(ctx, outcome, r.timing.Resync)
		if r.state.Passes >= r.timing.PassesBeforeContinueAsNew || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			r.drain(ctx, events)
			next := in
			next.Memory, next.Hooks, next.Upgrade = r.mem, r.state.Hooks, nil
			return workflow.NewContinueAsNewError(ctx, ClusterTopology, next)
		}
	}
}

// baselineChange is the one version marker a run records: version 1 turns on every change
// released before it (the ones r.feature names), which older runs still decide one GetVersion at
// a time. Each GetVersion a run records costs two events (a marker and the
// TemporalChangeVersion search attribute); one instead of a dozen keeps histories short. A change
// after it gets a GetVersion of its own, until a baseline 2 takes them in.
const baselineChange = "baseline"

// feature says whether a released change to the workflow applies to this run: always in runs
// that recorded the baseline, else as the run's own GetVersion for it said (DefaultVersion for
// histories recorded before the change).
func (r *clusterRun) feature(ctx workflow.Context, change string) bool {
	return r.baseline || workflow.GetVersion(ctx, change, workflow.DefaultVersion, 1) == 1
}

type clusterRun struct {
	// baseline: this run recorded baselineChange (see feature).
	baseline bool
	in       ClusterInput
	timing   Timing
	state    State
	sa       [3]string // class, version, phase last upserted
	pending  []string  // event sources seen since the last pass
	// seen are the objects of the events received since the last pass began (ClusterEvent.Seen);
	// passSeen those the current pass reads no older than.
	seen, passSeen []corev1.ObjectReference
	deleting       bool
	mem            Memory
	// nextWait overrides the next wait (a hook's retryAfterSeconds).
	nextWait time.Duration
	// hookFailures counts a blocking hook's failures in a row (reset when a hook answers);
	// hookFailed says the pass just ended on one, so the next wait is a short backoff.
	hookFailures int
	hookFailed   bool
	// pendingWritten is the pending-hooks annotation last written in this run (nil: not yet).
	pendingWritten []string
	events         workflow.ReceiveChannel
	// upgrade is set in a ClusterUpgrade child: the upgrade it runs, and what ended it.
	upgrade *UpgradeInput
	ended   string
	// local: the pass's steps run as local activities (see exec), the control plane apply also
	// observes the providers (observed, taken by observe), a status equal to the last one written
	// in this run is not written again (lastStatus), and one resync timer serves successive waits
	// (resync).
	local      bool
	observed   *activities.Provisioning
	lastStatus *activities.StatusInput
	resync     *resyncTimer
	// skipHooks are the lifecycle hooks that pass without a call, as the pass's apply found them.
	skipHooks []string
}

var acts *activities.Activities

func (r *clusterRun) activityCtx(ctx workflow.Context, summary string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		HeartbeatTimeout:    heartbeatTimeout,
		Summary:             summary,
		RetryPolicy:         activityRetry,
	})
}

// exec runs one of a pass's steps. In runs that began after "local-activities" it is a local
// activity: the step runs inside the workflow task and leaves one marker in the history, instead
// of three events and a workflow task of its own (the steps are short reads and applies, and
// idempotent, so a workflow task retried on another worker may run one again). Older histories
// replay with regular activities. Hook calls stay regular activities (see callHook): an
// extension's answer is recorded on its own, and its retries keep their own backoff.
func (r *clusterRun) exec(ctx workflow.Context, summary string, fn any, in any) workflow.Future {
	if !r.local {
		return workflow.ExecuteActivity(r.activityCtx(ctx, summary), fn, in)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		Summary:             summary,
		RetryPolicy:         activityRetry,
	})
	return workflow.ExecuteLocalActivity(lctx, activityName(fn), in)
}

// activityRetry retries a step for as long as it takes: an API server outage pauses the work,
// it does not fail it.
var activityRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
}

// activityName is the name a method of activities.Activities is registered under (local
// activities are looked up by name: the workflows hold only a nil *Activities for reference).
func activityName(fn any) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	return name[strings.LastIndex(name, ".")+1:]
}

// heartbeatTimeout notices a worker that died mid-activity (activities heartbeat every
// temporalx.HeartbeatEvery while they run); the activity is then retried on another worker.
const heartbeatTimeout = 4 * temporalx.HeartbeatEvery

// pass runs one reconcile pass.
func (r *clusterRun) pass(ctx workflow.Context) passOutcome {
	ref := r.in.Cluster
	r.passSeen, r.seen = r.seen, nil
	// Runtime Extension hooks came after the first release; histories recorded before them
	// replay without.
	hooks := r.feature(ctx, "runtime-hooks")
	r.setStep(ctx, "apply infrastructure cluster and control plane", "")
	var applied activities.ApplyResult
	err := r.exec(ctx, "apply infrastructure cluster and control plane",
		acts.ApplyTopology, activities.ApplyInput{Cluster: ref, Scope: activities.ScopeControlPlane, HoldCreate: hooks && !r.mem.CreateHookPassed,
			Gate: r.gate(hooks), Seen: r.passSeen, Observe: r.local}).Get(ctx, &applied)
	if err != nil {
		return r.blocked(ctx, err, applied.HasInfrastructure)
	}
	r.observed = applied.Provisioning
	r.skipHooks = applied.SkipHooks
	switch {
	case applied.ClusterGone, applied.NoTopology:
		return finished
	case applied.CreateHeld:
		return r.beforeCreate(ctx)
	case applied.Deleting && r.upgrade != nil:
		r.ended = "deleting" // the Cluster's workflow tears down
		return finished
	case applied.Deleting:
		return r.teardown(ctx, applied.HasInfrastructure, hooks, applied.OkToDelete)
	case applied.Paused:
		// Nothing is applied until the pause is lifted (a spec or annotation change: an event).
		prov, ok := r.observe(ctx, applied.HasInfrastructure)
		if !ok {
			return finished
		}
		msg := "Cluster is paused (spec.paused or annotation cluster.x-k8s.io/paused); topology changes are held"
		r.writeStatus(ctx, 0, prov, status.False(status.TopologyReconciled, status.ReasonPaused, clusterv1.ConditionSeverityInfo, msg))
		r.setStep(ctx, "paused", "the pause to be lifted")
		return settled
	}
	r.state.Class, r.state.Version = applied.Class, applied.Version
	r.mem.CreateHookPassed = true // the Cluster exists
	if r.upgrade != nil {
		r.state.Upgrade.observe(applied.Upgrade)
	}
	if hooks && r.upgrade == nil && applied.Upgrade != nil && applied.Upgrade.HeldBy == hooksv1.BeforeClusterUpgrade &&
		r.feature(ctx, "upgrade-child-workflow") {
		return r.runUpgrade(ctx, applied.Upgrade)
	}
	if hooks && r.upgrade != nil && applied.Upgrade != nil && applied.Upgrade.HeldBy == hooksv1.BeforeClusterUpgrade && applied.Upgrade.Target != r.upgrade.To {
		r.ended = "superseded by an upgrade to " + applied.Upgrade.Target
		return finished
	}
	if hooks && r.upgrade != nil && withdrawn(r.upgrade.To, &applied) &&
		r.feature(ctx, "upgrade-withdrawn") {
		return r.withdraw(ctx, applied.Version)
	}
	if hooks {
		if outcome, ok := r.upgradeHooks(ctx, &applied); ok {
			return outcome
		}
	}

	prov, ok := r.observe(ctx, applied.HasInfrastructure)
	if !ok {
		return finished
	}
	if prov.Failure != "" {
		r.state.LastError = prov.Failure
	}
	if hooks && r.mem.AfterControlPlaneInitializedPending && prov.ControlPlaneInitialized {
		// Not blocking: on failure the workers go ahead and the hook is called again next pass.
		out, err := r.callHook(ctx, hooksv1.AfterControlPlaneInitialized)
		switch {
		case err != nil:
			r.state.LastError = err.Error()
		case len(out.Failed) > 0:
			r.state.LastError = "hook AfterControlPlaneInitialized failed: " + out.Message
		default:
			r.mem.AfterControlPlaneInitializedPending = false
		}
	}
	if !prov.InfrastructureReady || !prov.ControlPlaneInitialized {
		waitingFor := "infrastructure to be ready"
		reason := status.ReasonWaitingForInfrastructure
		if prov.InfrastructureReady {
			waitingFor, reason = "control plane to be initialized", status.ReasonWaitingForControlPlane
		}
		if len(applied.MachineDeployments) > 0 {
			reason = status.ReasonMachineDeploymentsCreatePending
		}
		msg := "Waiting for " + waitingFor
		if len(applied.MachineDeployments) > 0 {
			msg = fmt.Sprintf("MachineDeployment(s) %s creation pending: waiting for %s", strings.Join(applied.MachineDeployments, ", "), waitingFor)
		}
		r.writeStatus(ctx, applied.Generation, prov, status.False(status.TopologyReconciled, reason, clusterv1.ConditionSeverityInfo, msg))
		r.setStep(ctx, "wait for providers", msg)
		return waiting
	}

	r.setStep(ctx, "apply MachineDeployments", "")
	var workers activities.ApplyResult
	err = r.exec(ctx, fmt.Sprintf("apply %d MachineDeployment(s)", len(applied.MachineDeployments)),
		acts.ApplyTopology, activities.ApplyInput{Cluster: ref, Scope: activities.ScopeWorkers, Gate: r.gate(hooks), Seen: r.passSeen}).Get(ctx, &workers)
	if err != nil {
		return r.blocked(ctx, err, applied.HasInfrastructure)
	}
	// The Cluster may have changed between the two applies.
	switch {
	case workers.ClusterGone, workers.NoTopology:
		return finished
	case workers.Deleting && r.upgrade != nil:
		r.ended = "deleting"
		return finished
	case workers.Deleting:
		return r.teardown(ctx, applied.HasInfrastructure, hooks, workers.OkToDelete)
	case workers.Paused:
		return waiting // the next pass reports the pause
	}
	r.state.LastError = ""
	if r.upgrade != nil {
		r.state.Upgrade.observe(workers.Upgrade)
	}
	if u := workers.Upgrade; u != nil {
		msg := UpgradeMessage(u)
		r.writeStatus(ctx, applied.Generation, prov, status.False(status.TopologyReconciled, status.ReasonClusterUpgrading, clusterv1.ConditionSeverityInfo, msg))
		r.setStep(ctx, "upgrade to "+u.Target, strings.ReplaceAll(msg, "\n  * ", "; "))
		return waiting
	}
	r.writeStatus(ctx, applied.Generation, prov, status.True(status.TopologyReconciled))
	r.setStep(ctx, "settled", "")
	return settled
}

// UpgradeMessage describes an upgrade in progress, one line per part, as Cluster API's
// ClusterUpgrading message does.
func UpgradeMessage(u *activities.UpgradeSummary) string {
	lines := []string{"Cluster is upgrading to " + u.Target}
	if len(u.Steps) > 0 {
		lines = append(lines, "  * Control plane upgrade plan: "+strings.Join(u.Steps, " -> "))
	}
	if u.Waiting != "" {
		lines = append(lines, "  * Control plane waits for "+u.Waiting)
	}
	for _, g := range []struct {
		what  string
		names []string
	}{
		{"upgrading", u.Upgrading}, {"pending upgrade", u.Pending}, {"upgrade deferred", u.Deferred}, {"upgrade held", u.Held},
	} {
		if len(g.names) > 0 {
			lines = append(lines, "  * Worker pools "+g.what+": "+strings.Join(g.names, ", "))
		}
	}
	return strings.Join(lines, "\n")
}

// teardown deletes the topology in order: workers, control plane, infrastructure cluster,
// templates; each step waits until its objects are gone (providers may hold them with finalizers),
// then the Cluster's finalizer is released. The steps are level-based: after an outage the
// teardown resumes at the first step with objects left.
func (r *clusterRun) teardown(ctx workflow.Context, hasInfra, hooks, okToDelete bool) passOutcome {
	r.deleting = true
	if okToDelete {
		// The hook passed before (the annotation outlives this run: Cluster API's own finalizer
		// may keep the Cluster, and its events start a new run after this one released it).
		// Cluster API's topology controller skips the hook then too (hooks.IsOkToDelete).
		r.mem.DeleteHookPassed = true
	}
	if hooks && !r.mem.DeleteHookPassed {
		call := activities.HookCall{Cluster: r.in.Cluster, Hook: hooksv1.BeforeClusterDelete}
		if outcome, passed := r.runBlockingHook(ctx, call, status.ReasonDeleting, "", hasInfra); !passed {
			return outcome
		}
		r.mem.DeleteHookPassed = true
	}
	for _, step := range activities.DeleteSteps {
		r.setStep(ctx, "delete "+strings.ToLower(string(step)), "")
		var res activities.DeleteResult
		err := r.exec(ctx, "delete "+strings.ToLower(string(step)),
			acts.DeleteTopologyStep, activities.DeleteInput{Cluster: r.in.Cluster, Step: step}).Get(ctx, &res)
		if err != nil {
			r.state.LastError = err.Error()
			return waiting
		}
		if res.ClusterGone {
			return finished
		}
		if len(res.Remaining) > 0 {
			waitingFor := "deletion of " + strings.Join(res.Remaining, ", ")
			if prov, ok := r.observe(ctx, hasInfra); ok {
				r.writeStatus(ctx, 0, prov, status.False(status.TopologyReconciled, status.ReasonDeleting, clusterv1.ConditionSeverityInfo,
					fmt.Sprintf("Deleting the topology, step %s: waiting for %s", step, waitingFor)))
			}
			r.setStep(ctx, "delete "+strings.ToLower(string(step)), waitingFor)
			return waiting
		}
	}
	r.setStep(ctx, "release the Cluster", "")
	if err := r.exec(ctx, "remove the topology finalizer from the Cluster",
		acts.RemoveFinalizer, r.in.Cluster).Get(ctx, nil); err != nil {
		r.state.LastError = err.Error()
		return waiting
	}
	return finished
}

// pendingHooks are the after-hooks the Cluster is still owed, in Cluster API's order.
func (m Memory) pendingHooks() []string {
	out := []string{}
	if m.AfterControlPlaneInitializedPending {
		out = append(out, hooksv1.AfterControlPlaneInitialized)
	}
	if m.ApprovedUpgrade != "" && m.ControlPlaneAcknowledged != m.ApprovedUpgrade {
		out = append(out, hooksv1.AfterControlPlaneUpgrade)
	}
	if m.ApprovedUpgrade != "" && m.UpgradeCompleted != m.ApprovedUpgrade {
		out = append(out, hooksv1.AfterClusterUpgrade)
	}
	return out
}

// syncPendingHooks keeps the runtime.cluster.x-k8s.io/pending-hooks annotation equal to the hooks
// still owed, writing only when the set changes (added after the hooks; histories recorded before
// replay without it).
func (r *clusterRun) syncPendingHooks(ctx workflow.Context) {
	if !r.feature(ctx, "pending-hooks-annotation") {
		return
	}
	want := r.mem.pendingHooks()
	if r.pendingWritten != nil && strings.Join(want, ",") == strings.Join(r.pendingWritten, ",") {
		return
	}
	err := r.exec(ctx, "pending hooks: "+orDash(strings.Join(want, ", ")), acts.SetPendingHooks,
		activities.PendingHooksInput{Cluster: r.in.Cluster, Hooks: want}).Get(ctx, nil)
	if err != nil {
		r.state.LastError = err.Error()
		return
	}
	r.pendingWritten = want
}

// gate is what the upgrade hooks allowed so far (nil: hooks not in use for this execution).
func (r *clusterRun) gate(hooks bool) *activities.UpgradeGate {
	if !hooks {
		return nil
	}
	return &activities.UpgradeGate{
		ApprovedTarget: r.mem.ApprovedUpgrade, ControlPlaneAcknowledged: r.mem.ControlPlaneAcknowledged,
		ControlPlaneApproved: r.mem.ControlPlaneApproved, WorkersApproved: r.mem.WorkersApproved, WorkersAcknowledged: r.mem.WorkersAcknowledged,
	}
}

// upgradeHooks runs the upgrade lifecycle hooks the apply reported as holding the upgrade, in
// Cluster API's order: BeforeClusterUpgrade before anything moves to a new target; per control
// plane step BeforeControlPlaneUpgrade and AfterControlPlaneUpgrade; when the workers move
// BeforeWorkersUpgrade and AfterWorkersUpgrade; AfterClusterUpgrade once when all is at the target
// and settled. ok is false when no hook needed the pass.
func (r *clusterRun) upgradeHooks(ctx workflow.Context, applied *activities.ApplyResult) (passOutcome, bool) {
	u, target, hasInfra := applied.Upgrade, applied.Version, applied.HasInfrastructure
	// Complete means every part at the target and no pool still rolling out.
	complete := u == nil && len(applied.RollingOut) == 0
	call := activities.HookCall{Cluster: r.in.Cluster}
	ours := r.mem.ApprovedUpgrade == target && r.mem.ApprovedUpgrade != ""
	switch {
	case u != nil && u.HeldBy == hooksv1.BeforeClusterUpgrade:
		call.Hook, call.FromKubernetesVersion, call.ToKubernetesVersion = hooksv1.BeforeClusterUpgrade, u.From, u.Target
		call.ControlPlaneUpgrades, call.WorkersUpgrades = u.Steps, u.WorkerSteps
	case u != nil && u.HeldBy == hooksv1.BeforeControlPlaneUpgrade:
		call.Hook, call.FromKubernetesVersion, call.ToKubernetesVersion = hooksv1.BeforeControlPlaneUpgrade, u.From, u.HeldVersion
	case u != nil && u.HeldBy == hooksv1.AfterControlPlaneUpgrade:
		call.Hook, call.KubernetesVersion = hooksv1.AfterControlPlaneUpgrade, u.HeldVersion
	case u != nil && u.HeldBy == hooksv1.BeforeWorkersUpgrade:
		call.Hook, call.ToKubernetesVersion = hooksv1.BeforeWorkersUpgrade, u.HeldVersion
	case u != nil && u.HeldBy == hooksv1.AfterWorkersUpgrade:
		call.Hook, call.KubernetesVersion = hooksv1.AfterWorkersUpgrade, u.HeldVersion
	case u == nil && ours && r.mem.ControlPlaneAcknowledged != target:
		// The last control plane step finished with nothing left to hold.
		call.Hook, call.KubernetesVersion = hooksv1.AfterControlPlaneUpgrade, target
	case complete && ours && r.mem.WorkersApproved != "" && r.mem.WorkersApproved != r.mem.WorkersAcknowledged:
		call.Hook, call.KubernetesVersion = hooksv1.AfterWorkersUpgrade, r.mem.WorkersApproved
	case complete && r.mem.ApprovedUpgrade == target && r.mem.UpgradeCompleted != target && r.mem.ApprovedUpgrade != "":
		call.Hook, call.KubernetesVersion = hooksv1.AfterClusterUpgrade, target
	default:
		return 0, false
	}
	if outcome, passed := r.runBlockingHook(ctx, call, status.ReasonClusterUpgrading, "Cluster is upgrading to "+target+"\n  * ", hasInfra); !passed {
		return outcome, true
	}
	switch call.Hook {
	case hooksv1.BeforeClusterUpgrade:
		r.mem.ApprovedUpgrade, r.mem.ControlPlaneAcknowledged, r.mem.UpgradeCompleted = u.Target, u.Reached, ""
		r.mem.ControlPlaneApproved, r.mem.WorkersApproved, r.mem.WorkersAcknowledged = "", "", ""
	case hooksv1.BeforeControlPlaneUpgrade:
		r.mem.ControlPlaneApproved = call.ToKubernetesVersion
	case hooksv1.AfterControlPlaneUpgrade:
		r.mem.ControlPlaneAcknowledged = call.KubernetesVersion
	case hooksv1.BeforeWorkersUpgrade:
		r.mem.WorkersApproved = call.ToKubernetesVersion
	case hooksv1.AfterWorkersUpgrade:
		r.mem.WorkersAcknowledged = call.KubernetesVersion
	case hooksv1.AfterClusterUpgrade:
		r.mem.UpgradeCompleted = target
	}
	return again, true
}

// beforeCreate asks the extensions whether the Cluster may be created (BeforeClusterCreate).
func (r *clusterRun) beforeCreate(ctx workflow.Context) passOutcome {
	call := activities.HookCall{Cluster: r.in.Cluster, Hook: hooksv1.BeforeClusterCreate}
	if outcome, passed := r.runBlockingHook(ctx, call, status.ReasonClusterCreating, "", false); !passed {
		return outcome
	}
	r.mem.CreateHookPassed = true
	r.mem.AfterControlPlaneInitializedPending = true
	return again
}

// runBlockingHook calls a blocking lifecycle hook. When the hook does not let the step go on, the
// Cluster's TopologyReconciled condition says why (with the given reason and message prefix) and
// the returned outcome is what the pass should end with.
func (r *clusterRun) runBlockingHook(ctx workflow.Context, call activities.HookCall, reason, prefix string, hasInfra bool) (passOutcome, bool) {
	out, err := r.hook(ctx, call)
	if err != nil {
		r.state.LastError = err.Error()
		return waiting, false
	}
	if out.ClusterGone {
		return finished, false
	}
	msg, blocked := r.blocking(call.Hook, out)
	if !blocked {
		return again, true
	}
	prov, ok := r.observe(ctx, hasInfra)
	if !ok {
		return finished, false
	}
	r.writeStatus(ctx, 0, prov, status.False(status.TopologyReconciled, reason, clusterv1.ConditionSeverityInfo, prefix+msg))
	r.setStep(ctx, "hook "+call.Hook, msg)
	return waiting, false
}

// callHook runs a lifecycle hook; its request outcome is in the activity's result (history).
func (r *clusterRun) callHook(ctx workflow.Context, hook string) (*activities.HookOutcome, error) {
	return r.hook(ctx, activities.HookCall{Cluster: r.in.Cluster, Hook: hook})
}

// hook calls a lifecycle hook as an activity of its own and logs the answer. A hook that no
// extension handles, with nothing else to do (the pass's apply said so: ApplyResult.SkipHooks),
// passes without one, as Cluster API's call of no handlers does: no request, and no history for
// a step that does nothing (added after the hooks; histories recorded before replay with the
// activity).
func (r *clusterRun) hook(ctx workflow.Context, call activities.HookCall) (*activities.HookOutcome, error) {
	r.setStep(ctx, "hook "+call.Hook, "")
	var out activities.HookOutcome
	var err error
	if !slices.Contains(r.skipHooks, call.Hook) || !r.feature(ctx, "skip-unhandled-hooks") {
		err = workflow.ExecuteActivity(r.activityCtx(ctx, "call hook "+call.Hook), acts.CallLifecycleHook, call).Get(ctx, &out)
	}
	r.recordHook(ctx, call, &out, err)
	return &out, err
}

// blocking says whether a blocking hook's answer holds the step, and why. A retryAfterSeconds
// answer becomes the next wait (an event may end it sooner); a failure is retried after a short
// backoff (see hookRetry).
func (r *clusterRun) blocking(hook string, out *activities.HookOutcome) (string, bool) {
	if len(out.Failed) == 0 {
		r.hookFailures = 0
	}
	switch {
	case len(out.Failed) > 0:
		r.hookFailures++
		r.hookFailed = true
		return fmt.Sprintf("hook %s failed (%s): %s", hook, strings.Join(out.Failed, ", "), out.Message), true
	case out.RetryAfterSeconds > 0:
		r.nextWait = time.Duration(out.RetryAfterSeconds) * time.Second
		msg := fmt.Sprintf("hook %s asked to retry in %ds", hook, out.RetryAfterSeconds)
		if out.Message != "" {
			msg += ": " + out.Message
		}
		return msg, true
	}
	return "", false
}

func (r *clusterRun) observe(ctx workflow.Context, hasInfra bool) (*activities.Provisioning, bool) {
	r.setStep(ctx, "observe providers", "")
	if prov := r.observed; prov != nil {
		// The pass's apply already read it.
		r.observed = nil
		return prov, !prov.ClusterGone
	}
	var prov activities.Provisioning
	err := r.exec(ctx, "read infrastructure cluster and control plane status",
		acts.ObserveProvisioning, activities.ObserveInput{Cluster: r.in.Cluster, HasInfrastructure: hasInfra, Seen: r.passSeen}).Get(ctx, &prov)
	if err != nil {
		// Only non-retryable errors reach here (a provider object breaking its contract).
		r.state.LastError = err.Error()
		return &prov, true
	}
	return &prov, !prov.ClusterGone
}

// blocked handles an activity error that retrying cannot fix: a missing ClusterClass or template,
// or a topology that cannot be computed. It is shown on the Cluster; the workflow waits.
func (r *clusterRun) blocked(ctx workflow.Context, err error, hasInfra bool) passOutcome {
	msg := err.Error()
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		msg = appErr.Message()
	}
	r.state.LastError = msg
	workflow.GetLogger(ctx).Warn("topology blocked", "cluster", r.in.Cluster.String(), "error", msg)
	prov, ok := r.observe(ctx, hasInfra)
	if !ok {
		return finished
	}
	r.writeStatus(ctx, 0, prov, status.False(status.TopologyReconciled, status.ReasonReconcileFailed, clusterv1.ConditionSeverityError, msg))
	r.setStep(ctx, "blocked", msg)
	return waiting
}

func (r *clusterRun) writeStatus(ctx workflow.Context, generation int64, prov *activities.Provisioning, topology status.Condition) {
	phase := status.Phase(status.Facts{
		Deleting:            r.deleting,
		RefsSet:             prov.RefsSet,
		InfrastructureReady: prov.InfrastructureReady,
		EndpointValid:       prov.Endpoint != nil || prov.ClusterEndpointSet,
	})
	conds := []status.Condition{topology}
	if prov.InfrastructureReady {
		conds = append(conds, status.True(status.InfrastructureReady))
	} else {
		conds = append(conds, status.False(status.InfrastructureReady, "WaitingForInfrastructure", clusterv1.ConditionSeverityInfo, ""))
	}
	if prov.ControlPlaneInitialized {
		conds = append(conds, status.True(status.ControlPlaneInitialized))
	} else {
		conds = append(conds, status.False(status.ControlPlaneInitialized, "WaitingForControlPlaneProviderInitialized", clusterv1.ConditionSeverityInfo, ""))
	}
	if prov.ControlPlaneReady {
		conds = append(conds, status.True(status.ControlPlaneReady))
	} else {
		conds = append(conds, status.False(status.ControlPlaneReady, "WaitingForControlPlane", clusterv1.ConditionSeverityInfo, ""))
	}
	in := activities.StatusInput{
		Cluster:             r.in.Cluster,
		ObservedGeneration:  generation,
		Phase:               phase,
		InfrastructureReady: prov.InfrastructureReady,
		ControlPlaneReady:   prov.ControlPlaneReady,
		Conditions:          conds,
	}
	if !prov.ClusterEndpointSet {
		in.Endpoint = prov.Endpoint
	}
	r.state.Phase = phase
	if r.local && r.lastStatus != nil && reflect.DeepEqual(*r.lastStatus, in) {
		// Written already in this run; nothing else writes these fields.
		_ = r.upsertSearchAttributes(ctx, r.state.Class, r.state.Version, phase)
		return
	}
	err := r.exec(ctx, "write Cluster status: "+phase, acts.SetClusterStatus, in).Get(ctx, nil)
	if err != nil {
		r.state.LastError = err.Error()
	} else {
		r.lastStatus = &in
	}
	_ = r.upsertSearchAttributes(ctx, r.state.Class, r.state.Version, phase)
}

func (r *clusterRun) upsertSearchAttributes(ctx workflow.Context, class, version, phase string) error {
	if r.sa == [3]string{class, version, phase} && r.state.Passes > 0 {
		return nil
	}
	updates := []temporal.SearchAttributeUpdate{
		SAClusterNamespace.ValueSet(r.in.Cluster.Namespace),
		SAClusterName.ValueSet(r.in.Cluster.Name),
	}
	if class != "" {
		updates = append(updates, SAClass.ValueSet(class))
	}
	if version != "" {
		updates = append(updates, SATargetVersion.ValueSet(version))
	}
	if phase != "" {
		updates = append(updates, SAPhase.ValueSet(phase))
	}
	r.sa = [3]string{class, version, phase}
	return workflow.UpsertTypedSearchAttributes(ctx, updates...)
}

func (r *clusterRun) setStep(ctx workflow.Context, step, waiting string) {
	r.state.Step, r.state.Waiting = step, waiting
	details := fmt.Sprintf("**Cluster** %s  \n**Phase** %s  \n**Step** %s", r.state.Cluster, orDash(r.state.Phase), step)
	if waiting != "" {
		details += "  \n**Waiting** " + waiting
	}
	if r.state.LastError != "" {
		details += "  \n**Last error** " + r.state.LastError
	}
	workflow.SetCurrentDetails(ctx, details)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// drain takes every pending event without blocking.
func (r *clusterRun) drain(ctx workflow.Context, events workflow.ReceiveChannel) {
	for {
		var ev ClusterEvent
		if !events.ReceiveAsync(&ev) {
			return
		}
		r.received(ev)
	}
}

// received notes an event for the next pass.
func (r *clusterRun) received(ev ClusterEvent) {
	r.pending = append(r.pending, ev.Source)
	r.seen = activities.MergeSeen(r.seen, ev.Seen...)
}

// wait blocks until an event arrives or d passes. Events that arrived during the pass end the
// wait at once: the pass may have read state older than they are.
func (r *clusterRun) wait(ctx workflow.Context, events workflow.ReceiveChannel, d time.Duration) {
	r.waitFor(ctx, events, d, false)
}

// resyncTimer is a resync timer kept across waits: an event-driven pass then costs no timer
// started and canceled in the history.
type resyncTimer struct {
	fired    workflow.Future
	deadline time.Time
	cancel   workflow.CancelFunc
}

// waitFor is wait; exact says d is a hook's (retryAfterSeconds or a failure backoff), which a
// kept resync timer must not cut short.
func (r *clusterRun) waitFor(ctx workflow.Context, events workflow.ReceiveChannel, d time.Duration, exact bool) {
	r.drain(ctx, events)
	if len(r.pending) > 0 {
		r.pending = r.pending[:0]
		return
	}
	if r.local && !exact {
		r.waitKeepingTimer(ctx, events, d)
		return
	}
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	summary := fmt.Sprintf("resync in %s unless a watch event arrives", d)
	if r.state.Waiting != "" {
		summary = fmt.Sprintf("wait: %s (re-check in %s)", r.state.Waiting, d)
	}
	if len(summary) > 200 {
		summary = summary[:197] + "..."
	}
	timer := workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: summary})
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(events, func(c workflow.ReceiveChannel, _ bool) {
		var ev ClusterEvent
		c.Receive(ctx, &ev)
		r.received(ev)
	})
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	r.drain(ctx, events)
	r.pending = r.pending[:0]
}

// waitKeepingTimer waits for an event or the resync timer, which it starts only when there is none
// due within d (one due later is replaced); the timer stays for the next wait when an event ends
// this one. A resync may so come sooner than d after the last pass, never later.
func (r *clusterRun) waitKeepingTimer(ctx workflow.Context, events workflow.ReceiveChannel, d time.Duration) {
	now := workflow.Now(ctx)
	if t := r.resync; t != nil && (t.fired.IsReady() || t.deadline.After(now.Add(d))) {
		t.cancel()
		r.resync = nil
	}
	if r.resync == nil {
		timerCtx, cancel := workflow.WithCancel(ctx)
		summary := fmt.Sprintf("resync by %s unless a watch event comes first", now.Add(d).UTC().Format(time.TimeOnly))
		r.resync = &resyncTimer{
			fired:    workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: summary}),
			deadline: now.Add(d),
			cancel:   cancel,
		}
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(events, func(c workflow.ReceiveChannel, _ bool) {
		var ev ClusterEvent
		c.Receive(ctx, &ev)
		r.received(ev)
	})
	sel.AddFuture(r.resync.fired, func(workflow.Future) { r.resync = nil })
	sel.Select(ctx)
	r.drain(ctx, events)
	r.pending = r.pending[:0]
}

// hookRetry is the wait before calling a hook again after its n-th failure in a row: 2s, doubling
// up to 30s and never past the wait resync. Cluster API requeues a failed hook with its
// controller's backoff; an extension that is down is not flooded, one that comes back is called
// again within seconds, not at the next resync.
func hookRetry(n int, ceiling time.Duration) time.Duration {
	d := 2 * time.Second
	for i := 1; i < n && d < 30*time.Second; i++ {
		d *= 2
	}
	return min(d, 30*time.Second, ceiling)
}

// waitAfter waits as a pass's outcome asks: not at all (again), for an event or the wait resync
// (waiting; a hook's retryAfterSeconds overrides it), or for an event or settledResync (settled).
func (r *clusterRun) waitAfter(ctx workflow.Context, outcome passOutcome, settledResync time.Duration) {
	switch outcome {
	case again:
	case waiting:
		d, exact := r.timing.WaitResync, false
		switch {
		case r.nextWait > 0:
			d, r.nextWait, exact = r.nextWait, 0, true
		case r.hookFailed && r.feature(ctx, "hook-failure-backoff"):
			d, exact = hookRetry(r.hookFailures, d), true
		}
		r.hookFailed = false
		r.waitFor(ctx, r.events, d, exact)
	default:
		r.wait(ctx, r.events, settledResync)
	}
}
