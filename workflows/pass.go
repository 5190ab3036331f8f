package workflows

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/activities"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/upgrade"
)

// clusterRun is one run of a Cluster's workflow or of an upgrade: the pass runner both share.
type clusterRun struct {
	ref    activities.ClusterRef
	timing Timing
	state  State
	// ledger is what the lifecycle hooks answered (the one record of it; see upgrade.Ledger).
	ledger upgrade.Ledger
	sa     [3]string // class, version, phase last upserted
	events workflow.ReceiveChannel
	// pending are the event sources seen since the last pass; seen the objects those events were
	// about, and passSeen those the current pass reads no older than.
	pending        []string
	seen, passSeen []corev1.ObjectReference
	deleting       bool
	// nextWait overrides the next wait (a hook's retryAfterSeconds).
	nextWait time.Duration
	// hookFailures counts a blocking hook's failures in a row (reset when a hook answers);
	// hookFailed says the pass just ended on one, so the next wait is a short backoff.
	hookFailures int
	hookFailed   bool
	// statusDeferred: the last report left the status to the pass after it (see overtaken).
	statusDeferred bool
	// pendingWritten is the pending-hooks annotation last written in this run (nil: not yet).
	pendingWritten []string
	// upgrade is set in a ClusterUpgrade child: the upgrade it runs, and what ended it.
	upgrade *UpgradeInput
	ended   string
	// observed is what the pass's activity read of the providers, taken by observe; lastStatus
	// the status last written in this run and lastCounters the digest of the replica counters it
	// was written with (not written again while both are equal); resync the timer kept across
	// waits.
	observed     *activities.Provisioning
	lastStatus   *activities.StatusInput
	lastCounters string
	// plan is the upgrade plan of the run's last decision (nil before its first), for the status.
	plan   *status.UpgradePlan
	resync *resyncTimer
	// skipHooks are the lifecycle hooks that pass without a call, as the pass found them.
	skipHooks []string
	// lookedForUpgrade: this run looked for a running upgrade a terminated run left (runningUpgrade).
	lookedForUpgrade bool
	// task is the workflow task the steps run in (see taskBudget).
	task taskClock
}

func newRun(ctx workflow.Context, ref activities.ClusterRef, timing Timing, ledger upgrade.Ledger) *clusterRun {
	return &clusterRun{ref: ref, timing: timing.withDefaults(), ledger: ledger, events: workflow.GetSignalChannel(ctx, SignalClusterEvent)}
}

var acts *activities.Activities

// activity runs a step as an activity of its own: a slow step (see step) and the hook calls (an
// extension's answer is recorded on its own, and its retries keep their own backoff).
func (r *clusterRun) activity(ctx workflow.Context, summary string, fn any, in any) workflow.Future {
	return ownActivity(ctx, 2*time.Minute, summary, fn, in)
}

// step runs fn(in) into out: inside the workflow task within budget, else as an activity of its
// own (taskClock.run). A non-retryable error (a missing class, an invalid topology) is returned at
// once.
func (r *clusterRun) step(ctx workflow.Context, summary string, budget time.Duration, fn, in, out any) error {
	return r.task.run(ctx, summary, budget, fn, in, out, r.activity)
}

// pass runs one reconcile pass, in Cluster API's order:
//  1. read, decide once and apply: one activity writes the control plane part, then the workers
//     part once the providers allow it;
//  2. a pass that applied nothing (Cluster gone, unmanaged, create held, deleting, paused) ends;
//  3. an upgrade that is due runs as a child workflow; in that child, one superseded or
//     withdrawn ends;
//  4. the hook the decision owes is called; once it passed the pass goes again;
//  5. AfterControlPlaneInitialized is called once the control plane is initialized;
//  6. the Cluster's status says where it stands.
func (r *clusterRun) pass(ctx workflow.Context) passOutcome {
	// The events received so far are this pass's: only those that come during it end the wait after it.
	r.passSeen, r.seen, r.pending = r.seen, nil, r.pending[:0]
	r.setStep(ctx, "reconcile topology", "")
	var res activities.ApplyResult
	in := activities.ApplyInput{Cluster: r.ref, Ledger: r.ledger, Seen: r.passSeen}
	if err := r.step(ctx, "reconcile topology", passBudget, acts.ApplyTopology, in, &res); err != nil {
		return r.blocked(ctx, err, false)
	}
	r.observed, r.skipHooks = res.Provisioning, res.SkipHooks
	r.passedWithoutCall(ctx, res.Passed, res.PendingHooks)
	if res.Skip != "" {
		return r.skipped(ctx, &res)
	}
	r.plan = status.PlanOf(res.Upgrade)
	r.state.Class, r.state.Version, r.state.LastError = res.Class, res.Version, ""
	r.ledger.CreatePassed = true // the Cluster exists
	if outcome, ended := r.upgradeFate(ctx, &res); ended {
		return outcome
	}
	if res.Owed != nil {
		return r.owedHook(ctx, *res.Owed, res.Version, res.HasInfrastructure)
	}
	prov, ok := r.observe(ctx, res.HasInfrastructure)
	if !ok {
		return finished
	}
	if prov.Failure != "" {
		r.state.LastError = prov.Failure
	}
	if failed := r.afterControlPlaneInitialized(ctx, prov); failed != nil {
		// Cluster API's reconcile fails on it, so the topology is not reported reconciled; it is
		// called again after the failure backoff.
		r.writeStatus(ctx, 0, prov, *failed)
		r.setStep(ctx, "hook "+hooksv1.AfterControlPlaneInitialized, failed.Message)
		return waiting
	}
	return r.report(ctx, &res, prov)
}

// skipped ends a pass that applied nothing.
func (r *clusterRun) skipped(ctx workflow.Context, res *activities.ApplyResult) passOutcome {
	switch res.Skip {
	case activities.SkipCreateHeld:
		return r.beforeCreate(ctx)
	case activities.SkipDeleting:
		if r.upgrade != nil {
			r.ended = "deleting" // the Cluster's workflow tears down
			return finished
		}
		return r.teardown(ctx, res.HasInfrastructure, res.OkToDelete)
	case activities.SkipPaused:
		// Nothing is applied until the pause is lifted (a spec or annotation change: an event).
		prov, ok := r.observe(ctx, res.HasInfrastructure)
		if !ok {
			return finished
		}
		r.writeStatus(ctx, 0, prov, status.Paused())
		r.setStep(ctx, "paused", "the pause to be lifted")
		return settled
	}
	return finished // gone, or no longer managed
}

// upgradeFate starts an upgrade that is due as a child workflow; in that child it ends the upgrade
// when another target superseded it or its version was withdrawn (upgrade.Ended). ended says the
// pass ends with the outcome.
func (r *clusterRun) upgradeFate(ctx workflow.Context, res *activities.ApplyResult) (passOutcome, bool) {
	starts := res.Owed != nil && res.Owed.Hook == hooksv1.BeforeClusterUpgrade
	if r.upgrade == nil {
		if !starts || res.Upgrade == nil {
			return 0, false
		}
		if running := r.runningUpgrade(ctx); running != nil {
			// An upgrade a terminated run of this workflow started runs on: wait for it rather
			// than start another from where the control plane is now (every hook once).
			r.state.Upgrade = running
			r.setStep(ctx, "upgrade "+running.From+" -> "+running.To, "the upgrade workflow "+running.Workflow)
			return r.awaitUpgrade(ctx, nil), true
		}
		return r.runUpgrade(ctx, res.Upgrade), true
	}
	r.state.Upgrade.observe(res.Upgrade)
	switch why := upgrade.Ended(r.upgrade.To, res.Version, res.Upgrade != nil, res.Owed); {
	case strings.HasPrefix(why, "withdrawn"):
		return r.withdraw(ctx, why), true
	case why != "":
		r.ended = why
		return finished, true
	}
	return 0, false
}

// owedHook calls the upgrade hook the decision owes. Once it passed it is recorded in the ledger
// and the pass goes again, so the next decision lets the move it held go on.
func (r *clusterRun) owedHook(ctx workflow.Context, due upgrade.Due, target string, hasInfra bool) passOutcome {
	if outcome, passed := r.runBlockingHook(ctx, r.hookCall(due), status.StageUpgrade, target, hasInfra); !passed {
		return outcome
	}
	r.ledger.Record(due)
	return again
}

// hookCall is the call of a hook the Cluster owes.
func (r *clusterRun) hookCall(due upgrade.Due) activities.HookCall {
	return activities.HookCall{Cluster: r.ref, Hook: due.Hook, FromKubernetesVersion: due.From, ToKubernetesVersion: due.To,
		KubernetesVersion: due.Version, ControlPlaneUpgrades: due.ControlPlaneSteps, WorkersUpgrades: due.WorkerSteps}
}

// beforeCreate asks the extensions whether the Cluster may be created (BeforeClusterCreate).
func (r *clusterRun) beforeCreate(ctx workflow.Context) passOutcome {
	due := upgrade.Due{Hook: hooksv1.BeforeClusterCreate}
	if outcome, passed := r.runBlockingHook(ctx, r.hookCall(due), status.StageCreate, "", false); !passed {
		return outcome
	}
	r.ledger.Record(due)
	return again
}

// passedWithoutCall records the hooks the pass let through without a call (no extension handles
// them: BeforeClusterCreate on a create, an upgrade hook owed on the way), and takes the
// pending-hooks annotation it wrote (nil: none) as written.
func (r *clusterRun) passedWithoutCall(ctx workflow.Context, passed []upgrade.Due, pending []string) {
	for _, due := range passed {
		r.recordHook(ctx, r.hookCall(due), &activities.HookOutcome{}, nil)
		r.ledger.Record(due)
	}
	if pending != nil {
		r.pendingWritten = pending
	}
}

// afterControlPlaneInitialized tells the extensions, once, that the control plane of a Cluster
// topoflow created is initialized. It does not hold the topology (it is called after the apply);
// when it fails, the returned condition says so and the pass calls it again next time.
func (r *clusterRun) afterControlPlaneInitialized(ctx workflow.Context, prov *activities.Provisioning) *status.Condition {
	if !r.ledger.InitializedOwed || !prov.ControlPlaneInitialized {
		return nil
	}
	out, err := r.hook(ctx, activities.HookCall{Cluster: r.ref, Hook: hooksv1.AfterControlPlaneInitialized})
	if err != nil {
		r.state.LastError = err.Error()
		return nil
	}
	// Counted as a blocking hook's failures are, so it is called again after the same backoff.
	if why := r.blocking(hooksv1.AfterControlPlaneInitialized, out); len(out.Failed) > 0 {
		r.state.LastError = why
		failed := status.HookFailed(hooksv1.AfterControlPlaneInitialized, cmp.Or(out.Failure, why))
		return &failed
	}
	r.ledger.Record(upgrade.Due{Hook: hooksv1.AfterControlPlaneInitialized})
	return nil
}

// report writes the status of a pass that applied what it could: waiting for the providers,
// upgrading, or settled.
func (r *clusterRun) report(ctx workflow.Context, res *activities.ApplyResult, prov *activities.Provisioning) passOutcome {
	write := r.writeStatus
	if r.overtaken() {
		write = func(workflow.Context, int64, *activities.Provisioning, status.Condition) {}
	}
	switch {
	case res.Upgrade != nil:
		cond := status.Upgrading(res.Upgrade)
		write(ctx, res.Generation, prov, cond)
		r.setStep(ctx, "upgrade to "+res.Upgrade.Target, strings.ReplaceAll(cond.Message, "\n  * ", "; "))
		return waiting
	case len(res.PendingCreate) > 0:
		cond := status.CreatePending(res.PendingCreate)
		write(ctx, res.Generation, prov, cond)
		r.setStep(ctx, "wait for the control plane", cond.Message)
		return waiting
	}
	write(ctx, res.Generation, prov, status.Reconciled())
	if wait := status.ProvidersWait(res.HasInfrastructure, prov.InfrastructureReady, prov.ControlPlaneInitialized); wait != "" {
		r.setStep(ctx, "wait for providers", wait)
		return waiting
	}
	r.setStep(ctx, "settled", "")
	return settled
}

// overtaken tells that events came during the pass: it goes again at once (waitAfter), and that
// pass writes the status from fresher reads, so this one's would be overwritten a moment later
// (in the fleet bench, one write in most creates: the first pass runs long, as an activity of its
// own, while the providers answer). Never twice in a row, so a Cluster whose events never stop
// still has its status written.
func (r *clusterRun) overtaken() bool {
	r.drain()
	r.statusDeferred = len(r.pending) > 0 && !r.statusDeferred
	return r.statusDeferred
}

// runBlockingHook calls a blocking lifecycle hook. When the hook does not let the step go on, the
// Cluster's TopologyReconciled condition says why (status.HookBlocks; status.HookFailed when it
// failed) and the returned outcome is what the pass should end with.
func (r *clusterRun) runBlockingHook(ctx workflow.Context, call activities.HookCall, stage status.HookStage, target string, hasInfra bool) (passOutcome, bool) {
	out, err := r.hook(ctx, call)
	if err != nil {
		r.state.LastError = err.Error()
		return waiting, false
	}
	if out.ClusterGone {
		return finished, false
	}
	why := r.blocking(call.Hook, out)
	if why == "" {
		return again, true
	}
	prov, ok := r.observe(ctx, hasInfra)
	if !ok {
		return finished, false
	}
	cond := status.HookBlocks(stage, why, target)
	if len(out.Failed) > 0 {
		cond = status.HookFailed(call.Hook, cmp.Or(out.Failure, why))
	}
	r.writeStatus(ctx, 0, prov, cond)
	r.setStep(ctx, "hook "+call.Hook, why)
	return waiting, false
}

// hook calls a lifecycle hook as an activity of its own and logs the answer: the answer is
// recorded in the history before the workflow acts on it, so a worker that crashes afterwards
// never has a hook called again (inside the workflow task, a crash would lose every step of the
// task, and the calls with it). A hook that no extension handles, with nothing else to do (the
// pass said so: ApplyResult.SkipHooks), passes without one, as Cluster API's call of no handlers
// does: no request, and no history for a step that does nothing.
func (r *clusterRun) hook(ctx workflow.Context, call activities.HookCall) (*activities.HookOutcome, error) {
	r.setStep(ctx, "hook "+call.Hook, "")
	var out activities.HookOutcome
	var err error
	if !slices.Contains(r.skipHooks, call.Hook) {
		err = r.activity(ctx, "call hook "+call.Hook, acts.CallLifecycleHook, call).Get(ctx, &out)
	}
	r.recordHook(ctx, call, &out, err)
	return &out, err
}

// blocking says why a blocking hook's answer holds the step ("" when it does not). A
// retryAfterSeconds answer becomes the next wait (an event may end it sooner); a failure is
// retried after a short backoff (see hookRetry).
func (r *clusterRun) blocking(hook string, out *activities.HookOutcome) string {
	if len(out.Failed) == 0 {
		r.hookFailures = 0
	} else {
		r.hookFailures++
		r.hookFailed = true
	}
	if len(out.Failed) == 0 && out.RetryAfterSeconds > 0 {
		r.nextWait = time.Duration(out.RetryAfterSeconds) * time.Second
	}
	return status.HookAnswer(hook, out.Failed, out.RetryAfterSeconds, out.Message)
}

// observe returns what the providers report: what the pass's activity read, else a read of its own.
func (r *clusterRun) observe(ctx workflow.Context, hasInfra bool) (*activities.Provisioning, bool) {
	if prov := r.observed; prov != nil {
		r.observed = nil
		return prov, !prov.ClusterGone
	}
	r.setStep(ctx, "observe providers", "")
	var prov activities.Provisioning
	err := r.step(ctx, "read infrastructure cluster and control plane status", stepBudget,
		acts.ObserveProvisioning, activities.ObserveInput{Cluster: r.ref, HasInfrastructure: hasInfra, Seen: r.passSeen}, &prov)
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
	workflow.GetLogger(ctx).Warn("topology blocked", "cluster", r.ref.String(), "error", msg)
	prov, ok := r.observe(ctx, hasInfra)
	if !ok {
		return finished
	}
	r.writeStatus(ctx, 0, prov, status.Failed(msg))
	r.setStep(ctx, "blocked", msg)
	return waiting
}

// writeStatus writes the phase and conditions model/status derives from what was observed and the
// pass's topology condition; a status equal to the last one written in this run, from the same
// replica counters (Provisioning.Counters: the activity computes the v1beta2 counters from its own
// reads, so they are not in its input), is not written again (nothing else writes these fields).
// Histories recorded before the digest existed carry none, so they replay the same writes.
func (r *clusterRun) writeStatus(ctx workflow.Context, generation int64, prov *activities.Provisioning, topologyCond status.Condition) {
	phase, conds := status.Cluster(status.Observed{
		Deleting:                r.deleting,
		RefsSet:                 prov.RefsSet,
		InfrastructureReady:     prov.InfrastructureReady,
		EndpointValid:           prov.Endpoint != nil || prov.ClusterEndpointSet,
		ControlPlaneInitialized: prov.ControlPlaneInitialized,
		ControlPlaneReady:       prov.ControlPlaneReady,
	}, topologyCond)
	in := activities.StatusInput{
		Cluster:             r.ref,
		ObservedGeneration:  generation,
		Phase:               phase,
		InfrastructureReady: prov.InfrastructureReady,
		ControlPlaneReady:   prov.ControlPlaneReady,
		Conditions:          conds,
		UpgradePlan:         r.plan,
	}
	if !prov.ClusterEndpointSet {
		in.Endpoint = prov.Endpoint
	}
	r.state.Phase = phase
	if r.lastStatus == nil || !reflect.DeepEqual(*r.lastStatus, in) || r.lastCounters != prov.Counters {
		if err := r.step(ctx, "write Cluster status: "+phase, writeBudget, acts.SetClusterStatus, in, nil); err != nil {
			r.state.LastError = err.Error()
		} else {
			r.lastStatus, r.lastCounters = &in, prov.Counters
		}
	}
	_ = r.upsertSearchAttributes(ctx, r.state.Class, r.state.Version, phase)
}

// syncPendingHooks keeps the runtime.cluster.x-k8s.io/pending-hooks annotation equal to the hooks
// the ledger still owes, writing only when the set changes.
func (r *clusterRun) syncPendingHooks(ctx workflow.Context) {
	want := r.ledger.PendingHooks()
	if r.pendingWritten != nil && slices.Equal(want, r.pendingWritten) {
		return
	}
	err := r.step(ctx, "pending hooks: "+orDash(strings.Join(want, ", ")), writeBudget, acts.SetPendingHooks,
		activities.PendingHooksInput{Cluster: r.ref, Hooks: want}, nil)
	if err != nil {
		r.state.LastError = err.Error()
		return
	}
	r.pendingWritten = want
}
