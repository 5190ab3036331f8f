package workflows

import (
	"fmt"
	"sort"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/upgrade"
)

// ClusterUpgradeWorkflowType runs one upgrade of a Cluster as a child workflow, so that its
// history (every step, wait and hook call) is one page in the UI.
const ClusterUpgradeWorkflowType = "ClusterUpgrade"

// UpgradeWorkflowID is the ID of an upgrade: the Cluster's workflow ID plus the version it
// upgrades to. A Cluster runs one upgrade at a time and its target is its spec.topology.version,
// so the starter can name the running upgrade from the Cluster alone and signal it directly
// (see the starter's watcher); where it upgrades from is in the workflow's summary and state.
func UpgradeWorkflowID(ref activities.ClusterRef, to string) string {
	return WorkflowID(ref.Namespace, ref.Name) + upgradeIDInfix + to
}

const upgradeIDInfix = "/upgrade/"

// UpgradeInput starts a ClusterUpgrade.
type UpgradeInput struct {
	Cluster activities.ClusterRef `json:"cluster"`
	Timing  Timing                `json:"timing,omitempty"`
	Ledger  upgrade.Ledger        `json:"ledger"`
	From    string                `json:"from"`
	To      string                `json:"to"`
	// Plan is the control plane's steps as planned when the upgrade began (for the state query),
	// and PlannedBy the GenerateUpgradePlan handler that planned them, if any.
	Plan      []string `json:"plan,omitempty"`
	PlannedBy string   `json:"plannedBy,omitempty"`
	// Hooks is the hook log, carried across continue-as-new.
	Hooks []HookRecord `json:"hooks,omitempty"`
}

// SignalUpgradeEnded carries an upgrade's UpgradeOutput to its Cluster's workflow, whose current
// run may not be the one that started the upgrade (it continues as new during long upgrades).
const SignalUpgradeEnded = "upgrade-ended"

// UpgradeOutput is what the upgrade leaves to the Cluster's workflow.
type UpgradeOutput struct {
	// Workflow is the upgrade's workflow ID.
	Workflow string         `json:"workflow,omitempty"`
	Ledger   upgrade.Ledger `json:"ledger"`
	// Ended says why the upgrade stopped: "completed", "deleting", "gone", "superseded by ..."
	// or "withdrawn: ..." (see withdrawn).
	Ended string `json:"ended"`
	// Hooks is the upgrade's hook log, which the Cluster's workflow adds to its own.
	Hooks []HookRecord `json:"hooks,omitempty"`
}

// ClusterUpgrade runs the Cluster's reconcile passes, with the upgrade hooks, until the upgrade to
// in.To is complete (AfterClusterUpgrade passed), the Cluster is being deleted or gone, or a newer
// upgrade supersedes it. Events reach it from the Cluster's workflow.
func ClusterUpgrade(ctx workflow.Context, in UpgradeInput) (*UpgradeOutput, error) {
	r := newRun(ctx, in.Cluster, in.Timing, in.Ledger)
	r.upgrade = &in
	r.state = State{Cluster: in.Cluster.String(), Step: "starting upgrade " + in.From + " -> " + in.To, Hooks: in.Hooks, Ledger: &r.ledger,
		Upgrade: &UpgradeState{Workflow: UpgradeWorkflowID(in.Cluster, in.To), From: in.From, To: in.To, Plan: in.Plan, PlannedBy: in.PlannedBy}}
	if err := workflow.SetQueryHandlerWithOptions(ctx, QueryState, func() (State, error) { return r.state, nil },
		workflow.QueryHandlerOptions{Description: "Where the upgrade stands: step, what it waits for and the hook ledger"}); err != nil {
		return nil, err
	}
	for {
		r.drain()
		outcome := r.pass(ctx)
		r.state.Passes++
		switch {
		case r.ledger.Completed == in.To:
			r.syncPendingHooks(ctx)
			r.setStep(ctx, "upgrade completed", "")
			return r.endUpgrade(ctx, "completed"), nil
		case outcome == finished:
			if r.ended == "" {
				r.ended = "gone"
			}
			return r.endUpgrade(ctx, r.ended), nil
		}
		r.syncPendingHooks(ctx)
		// An upgrade in progress re-checks at the shorter resync even when a pass settled.
		r.waitAfter(ctx, outcome, r.timing.WaitResync)
		// A long upgrade (a hook that blocks for days, slow rollouts) keeps its history small
		// like the Cluster's workflow: the ledger, plan and hook log go to the next run, which
		// starts with a pass.
		if r.state.Passes >= r.timing.PassesBeforeContinueAsNew || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			r.drain()
			next := in
			next.Ledger, next.Hooks = r.ledger, r.state.Hooks
			return nil, workflow.NewContinueAsNewError(ctx, ClusterUpgradeWorkflowType, next)
		}
	}
}

// endUpgrade is the upgrade's result. It is also signalled to the Cluster's workflow, whose
// current run may have continued as new since it started the upgrade.
func (r *clusterRun) endUpgrade(ctx workflow.Context, ended string) *UpgradeOutput {
	out := &UpgradeOutput{Workflow: r.state.Upgrade.Workflow, Ledger: r.ledger, Ended: ended, Hooks: r.state.Hooks}
	if parent := workflow.GetInfo(ctx).ParentWorkflowExecution; parent != nil {
		err := workflow.SignalExternalWorkflow(ctx, parent.ID, "", SignalUpgradeEnded, out).Get(ctx, nil)
		if err != nil && ended != "gone" {
			r.restartCluster(ctx, out)
		}
	}
	return out
}

// restartCluster starts the Cluster's workflow again, with the upgrade's answers, when no run of
// it is there to take them (an operator terminated it mid-upgrade): the starter sends watch
// events to the running upgrade, so none started it meanwhile. One started by an event since
// gets the answer as a signal, as a run that adopted the upgrade would.
func (r *clusterRun) restartCluster(ctx workflow.Context, out *UpgradeOutput) {
	id := WorkflowID(r.ref.Namespace, r.ref.Name)
	opts := workflow.ChildWorkflowOptions{WorkflowID: id, ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON}
	opts.StaticSummary, opts.StaticDetails, opts.TypedSearchAttributes = ClusterStart(r.ref)
	fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), ClusterWorkflowType,
		ClusterInput{Cluster: r.ref, Timing: r.timing, Ledger: out.Ledger, Hooks: out.Hooks})
	if err := fut.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		_ = workflow.SignalExternalWorkflow(ctx, id, "", SignalUpgradeEnded, out).Get(ctx, nil)
	}
}

// runUpgrade runs an upgrade as a child workflow and waits for it, forwarding watch events to it.
// Its result carries the hook answers back into this workflow's memory.
func (r *clusterRun) runUpgrade(ctx workflow.Context, u *upgrade.Summary) passOutcome {
	id := UpgradeWorkflowID(r.ref, u.Target)
	r.setStep(ctx, "upgrade "+u.From+" -> "+u.Target, "the upgrade workflow "+id)
	// The upgrade may outlive this run: this run may continue as new while it waits, so a long
	// upgrade cannot grow its history without bound.
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:        id,
		StaticSummary:     fmt.Sprintf("Upgrade of Cluster %s from %s to %s", r.ref, u.From, u.Target),
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
	}
	r.state.Upgrade = &UpgradeState{Workflow: id, From: u.From, To: u.Target, Plan: u.Steps, PlannedBy: u.PlannedBy}
	fut := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(ctx, opts), ClusterUpgradeWorkflowType, UpgradeInput{
		Cluster: r.ref, Timing: r.timing, Ledger: r.ledger, From: u.From, To: u.Target, Plan: u.Steps, PlannedBy: u.PlannedBy,
	})
	if err := fut.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		if !temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			return r.upgradeEnded(nil, fmt.Errorf("starting the upgrade workflow %s: %w", id, err))
		}
		// Started by an earlier run of this workflow (one that was terminated and started
		// again): wait for it the same way as after continue-as-new.
		fut = nil
	}
	return r.awaitUpgrade(ctx, fut)
}

// runningUpgrade finds an upgrade of this Cluster that is still running although no run of this
// workflow waits for it: an operator terminated the Cluster's workflow mid-upgrade, and a watch
// event started this one. It is asked once per workflow, in its first run, when a pass is about to
// start an upgrade (so a create costs no lookup).
func (r *clusterRun) runningUpgrade(ctx workflow.Context) *UpgradeState {
	if r.lookedForUpgrade || workflow.GetInfo(ctx).ContinuedExecutionRunID != "" {
		return nil
	}
	r.lookedForUpgrade = true
	prefix := WorkflowID(r.ref.Namespace, r.ref.Name) + upgradeIDInfix
	var ids []string
	err := r.step(ctx, "look for a running upgrade of this Cluster", stepBudget, acts.RunningWorkflows,
		activities.RunningWorkflowsInput{Type: ClusterUpgradeWorkflowType, IDPrefix: prefix}, &ids)
	if err != nil || len(ids) == 0 {
		return nil
	}
	// Several are not expected; whichever is taken, one that is not the Cluster's current
	// target ends as superseded, and starting the current one finds it running and waits for it.
	sort.Strings(ids)
	id := ids[len(ids)-1]
	// Where it upgrades from is its own to know (its state query); this run shows only the target.
	return &UpgradeState{Workflow: id, From: "?", To: strings.TrimPrefix(id, prefix)}
}

// awaitUpgrade waits for the upgrade in r.state.Upgrade to end, forwarding watch events to it
// (those that queued up during a forward ride along with the next). fut is the child's future
// when this run started it; nil when an earlier run did, in which case a forward that fails
// means the upgrade is gone (terminated by an operator, say), and a slow resync re-checks.
// When the history has grown large it returns handOver: the caller continues as new and the
// next run waits on.
func (r *clusterRun) awaitUpgrade(ctx workflow.Context, fut workflow.ChildWorkflowFuture) passOutcome {
	id := r.state.Upgrade.Workflow
	ended := workflow.GetSignalChannel(ctx, SignalUpgradeEnded)
	var out *UpgradeOutput
	var failure error
	// takeEnded takes the upgrade's answer from the channel; answers of other (earlier) upgrades
	// are dropped.
	takeEnded := func() {
		for out == nil {
			var o UpgradeOutput
			if !ended.ReceiveAsync(&o) {
				return
			}
			if o.Workflow == id {
				out = &o
			}
		}
	}
	forward, source, forwards := fut == nil, "resync", 0
	for out == nil && failure == nil {
		if forward {
			r.drain()
			r.pending = r.pending[:0]
			err := workflow.SignalExternalWorkflow(ctx, id, "", SignalClusterEvent, ClusterEvent{Source: source, Seen: r.seen}).Get(ctx, nil)
			r.seen = nil
			forward, forwards = false, forwards+1
			if err != nil && fut == nil {
				// Closed: it has either answered already, or it was ended without an answer.
				if takeEnded(); out == nil {
					failure = fmt.Errorf("ended without a result (%w)", err)
				}
				break
			}
		}
		if r.state.Passes+forwards >= r.timing.PassesBeforeContinueAsNew || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if takeEnded(); out != nil {
				break
			}
			return handOver
		}
		sel := workflow.NewSelector(ctx)
		if fut != nil {
			sel.AddFuture(fut, func(f workflow.Future) {
				var o UpgradeOutput
				if failure = f.Get(ctx, &o); failure == nil {
					out = &o
				}
			})
		}
		sel.AddReceive(ended, func(workflow.ReceiveChannel, bool) { takeEnded() })
		sel.AddReceive(r.events, func(c workflow.ReceiveChannel, _ bool) {
			var ev ClusterEvent
			c.Receive(ctx, &ev)
			forward, source = true, ev.Source
			r.seen = activities.MergeSeen(r.seen, ev.Seen...)
		})
		cancelTimer := func() {}
		if fut == nil {
			var timerCtx workflow.Context
			timerCtx, cancelTimer = workflow.WithCancel(ctx)
			sel.AddFuture(workflow.NewTimerWithOptions(timerCtx, r.timing.Resync,
				workflow.TimerOptions{Summary: "check that the upgrade workflow " + id + " still runs"}),
				func(workflow.Future) { forward, source = true, "resync" })
		}
		sel.Select(ctx)
		cancelTimer()
	}
	return r.upgradeEnded(out, failure)
}

// upgradeEnded takes an upgrade's result (its ledger and hook log) into this workflow.
func (r *clusterRun) upgradeEnded(out *UpgradeOutput, err error) passOutcome {
	id, from, to := r.state.Upgrade.Workflow, r.state.Upgrade.From, r.state.Upgrade.To
	r.state.Upgrade = nil
	if err != nil {
		r.state.LastError = "upgrade workflow " + id + ": " + err.Error()
		return waiting
	}
	r.ledger = out.Ledger
	r.state.LastUpgrade = from + " -> " + to + ": " + out.Ended
	r.state.Hooks = appendHooks(r.state.Hooks, out.Hooks...)
	switch out.Ended {
	case "gone":
		return finished
	case "completed":
		r.pendingWritten = r.ledger.PendingHooks() // the upgrade wrote the annotation as it finished
	}
	return again
}

// withdraw ends a withdrawn upgrade (why is upgrade.Ended's): no hook is called for it any more,
// and what the hooks let it do is forgotten, so the after-hooks are not owed (the pending-hooks
// annotation drops them) and asking for the same version again starts over with
// BeforeClusterUpgrade.
func (r *clusterRun) withdraw(ctx workflow.Context, why string) passOutcome {
	r.ledger.Withdraw()
	r.ended = why
	r.syncPendingHooks(ctx)
	r.setStep(ctx, "upgrade withdrawn", "")
	return finished
}
