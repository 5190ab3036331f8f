package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
)

// ClusterUpgradeWorkflowType runs one upgrade of a Cluster as a child workflow, so that its
// history (every step, wait and hook call) is one page in the UI.
const ClusterUpgradeWorkflowType = "ClusterUpgrade"

// UpgradeWorkflowID is the readable ID of an upgrade: the Cluster's workflow ID plus from -> to.
func UpgradeWorkflowID(ref activities.ClusterRef, from, to string) string {
	return WorkflowID(ref.Namespace, ref.Name) + "/upgrade/" + from + "-to-" + to
}

// UpgradeInput starts a ClusterUpgrade.
type UpgradeInput struct {
	Cluster activities.ClusterRef `json:"cluster"`
	Timing  Timing                `json:"timing,omitempty"`
	Memory  Memory                `json:"memory"`
	From    string                `json:"from"`
	To      string                `json:"to"`
	// Plan is the control plane's steps as planned when the upgrade began (for the state query).
	Plan []string `json:"plan,omitempty"`
	// Hooks is the hook log, carried across continue-as-new.
	Hooks []HookRecord `json:"hooks,omitempty"`
}

// UpgradeOutput is what the upgrade leaves to the Cluster's workflow.
type UpgradeOutput struct {
	Memory Memory `json:"memory"`
	// Ended says why the upgrade stopped: "completed", "deleting", "gone" or "superseded by ...".
	Ended string `json:"ended"`
	// Hooks is the upgrade's hook log, which the Cluster's workflow adds to its own.
	Hooks []HookRecord `json:"hooks,omitempty"`
}

// ClusterUpgrade runs the Cluster's reconcile passes, with the upgrade hooks, until the upgrade to
// in.To is complete (AfterClusterUpgrade passed), the Cluster is being deleted or gone, or a newer
// upgrade supersedes it. Events reach it from the Cluster's workflow.
func ClusterUpgrade(ctx workflow.Context, in UpgradeInput) (*UpgradeOutput, error) {
	r := &clusterRun{in: ClusterInput{Cluster: in.Cluster, Timing: in.Timing, Memory: in.Memory}, timing: in.Timing.withDefaults(), mem: in.Memory, upgrade: &in}
	r.state = State{Cluster: in.Cluster.String(), Step: "starting upgrade " + in.From + " -> " + in.To, Hooks: in.Hooks,
		Upgrade: &UpgradeState{Workflow: UpgradeWorkflowID(in.Cluster, in.From, in.To), From: in.From, To: in.To, Plan: in.Plan}}
	if err := workflow.SetQueryHandlerWithOptions(ctx, QueryState, func() (State, error) { return r.state, nil },
		workflow.QueryHandlerOptions{Description: "Where the upgrade stands: step and what it waits for"}); err != nil {
		return nil, err
	}
	events := workflow.GetSignalChannel(ctx, SignalClusterEvent)
	r.events = events
	for {
		r.drain(ctx, events)
		outcome := r.pass(ctx)
		r.state.Passes++
		switch {
		case r.mem.UpgradeCompleted == in.To:
			r.syncPendingHooks(ctx)
			r.setStep(ctx, "upgrade completed", "")
			return &UpgradeOutput{Memory: r.mem, Ended: "completed", Hooks: r.state.Hooks}, nil
		case outcome == finished:
			if r.ended == "" {
				r.ended = "gone"
			}
			return &UpgradeOutput{Memory: r.mem, Ended: r.ended, Hooks: r.state.Hooks}, nil
		}
		r.syncPendingHooks(ctx)
		// An upgrade in progress re-checks at the shorter resync even when a pass settled.
		r.waitAfter(ctx, outcome, r.timing.WaitResync)
		// A long upgrade (a hook that blocks for days, slow rollouts) keeps its history small
		// like the Cluster's workflow: the memory, plan and hook log go to the next run, which
		// starts with a pass. Upgrades recorded before this replay without it.
		if workflow.GetVersion(ctx, "upgrade-continue-as-new", workflow.DefaultVersion, 1) == 1 &&
			(r.state.Passes >= r.timing.PassesBeforeContinueAsNew || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			r.drain(ctx, events)
			next := in
			next.Memory, next.Hooks = r.mem, r.state.Hooks
			return nil, workflow.NewContinueAsNewError(ctx, ClusterUpgradeWorkflowType, next)
		}
	}
}

// runUpgrade runs an upgrade as a child workflow and waits for it, forwarding watch events to it.
// Its result carries the hook answers back into this workflow's memory.
func (r *clusterRun) runUpgrade(ctx workflow.Context, u *activities.UpgradeSummary) passOutcome {
	id := UpgradeWorkflowID(r.in.Cluster, u.From, u.Target)
	r.setStep(ctx, "upgrade "+u.From+" -> "+u.Target, "the upgrade workflow "+id)
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    id,
		StaticSummary: fmt.Sprintf("Upgrade of Cluster %s from %s to %s", r.in.Cluster, u.From, u.Target),
	})
	r.state.Upgrade = &UpgradeState{Workflow: id, From: u.From, To: u.Target, Plan: u.Steps}
	defer func() { r.state.Upgrade = nil }()
	fut := workflow.ExecuteChildWorkflow(cctx, ClusterUpgradeWorkflowType, UpgradeInput{
		Cluster: r.in.Cluster, Timing: r.in.Timing, Memory: r.mem, From: u.From, To: u.Target, Plan: u.Steps,
	})
	for done := false; !done; {
		sel := workflow.NewSelector(ctx)
		sel.AddFuture(fut, func(workflow.Future) { done = true })
		sel.AddReceive(r.events, func(c workflow.ReceiveChannel, _ bool) {
			var ev ClusterEvent
			c.Receive(ctx, &ev)
			_ = fut.SignalChildWorkflow(ctx, SignalClusterEvent, ev).Get(ctx, nil)
		})
		sel.Select(ctx)
	}
	var out UpgradeOutput
	if err := fut.Get(ctx, &out); err != nil {
		r.state.LastError = "upgrade workflow " + id + ": " + err.Error()
		return waiting
	}
	r.mem = out.Memory
	r.state.Hooks = appendHooks(r.state.Hooks, out.Hooks...)
	switch out.Ended {
	case "gone":
		return finished
	case "completed":
		r.pendingWritten = r.mem.pendingHooks() // the upgrade wrote the annotation as it finished
	}
	return again
}
