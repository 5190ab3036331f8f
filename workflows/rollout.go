package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/rollout"
)

// Names of the fleet rollout's workflow, shared with the starter and the CLI.
const (
	RolloutWorkflowType = "FleetRollout"
	// SignalRolloutEvent: the Rollout object changed (annotations, spec, deletion); re-read it.
	SignalRolloutEvent = "rollout-event"
	// UpdateRolloutControl carries an operator's control (rollout.Control), validated before it
	// is accepted; SignalRolloutControl carries the same for clients that cannot send Updates
	// (it is validated alike, and a refused one is logged and dropped).
	UpdateRolloutControl = "control"
	SignalRolloutControl = "rollout-control"
	// QueryRollout returns the Rollout's status as the workflow sees it.
	QueryRollout = "rollout"
)

// RolloutWorkflowID is the stable ID of a Rollout's workflow.
func RolloutWorkflowID(namespace, name string) string { return "rollout/" + namespace + "/" + name }

// RolloutTiming holds the rollout's waits. Zero values take the defaults.
type RolloutTiming struct {
	// Poll re-reads the Clusters in flight (default 15s).
	Poll time.Duration `json:"poll,omitempty"`
	// Idle re-reads the Rollout while nothing is in flight or due (default 10m; its events wake
	// the workflow sooner).
	Idle time.Duration `json:"idle,omitempty"`
	// MaxEvents bounds one run's history, counted from above (default 8,000, under Temporal's
	// 10,240 warning): then the run continues as new.
	MaxEvents int `json:"maxEvents,omitempty"`
}

func (t RolloutTiming) withDefaults() RolloutTiming {
	if t.Poll == 0 {
		t.Poll = 15 * time.Second
	}
	if t.Idle == 0 {
		t.Idle = 10 * time.Minute
	}
	if t.MaxEvents == 0 {
		t.MaxEvents = 8000
	}
	return t
}

// RolloutInput starts (or continues) a Rollout's workflow.
type RolloutInput struct {
	Rollout activities.RolloutRef `json:"rollout"`
	Timing  RolloutTiming         `json:"timing,omitempty"`
	// State is the rollout in progress, carried across continue-as-new (nil: not started).
	State *rollout.State `json:"state,omitempty"`
}

// Rollout is the durable workflow of one Rollout: it freezes the selection, then loops: observe
// the Rollout and the Clusters in flight, let model/rollout decide, write the Clusters it starts,
// report, and wait for the next poll, due time, event or control. Each Cluster's own workflow
// does the work (hooks included); this one only writes specs and follows them.
func Rollout(ctx workflow.Context, in RolloutInput) error {
	r := &rolloutRun{in: in, timing: in.Timing.withDefaults(), state: in.State,
		events: workflow.GetSignalChannel(ctx, SignalRolloutEvent), controls: workflow.GetSignalChannel(ctx, SignalRolloutControl),
		accepted: workflow.NewBufferedChannel(ctx, 64)}
	if err := r.handleControls(ctx); err != nil {
		return err
	}
	// 1. Start: read the Rollout and freeze its selection (waiting while another Rollout holds
	//    its Clusters or admission would refuse the change).
	if r.state == nil {
		if stop, err := r.start(ctx); stop || err != nil {
			return err
		}
	}
	for {
		// 2. Observe the Rollout and the Clusters in flight; 3. decide (model/rollout).
		var obs activities.RolloutObservation
		if err := r.act(ctx, "observe the Rollout and its Clusters in flight", acts.ObserveRollout,
			activities.RolloutObserveInput{Rollout: in.Rollout, Change: r.state.Spec.Change, Clusters: r.inFlight(), Windows: r.state.WindowLists()}, &obs); err != nil {
			return err
		}
		if !obs.Rollout.Exists {
			return nil // deleted and released: nothing is left to report to
		}
		o := rollout.Observation{Now: workflow.Now(ctx), Generation: obs.Rollout.Generation, Deleting: obs.Rollout.Deleting,
			Clusters: obs.Clusters, Windows: obs.Windows}
		rollout.FromAnnotations(&o, obs.Rollout.Annotations)
		a := r.state.Advance(o)
		// 4. Write the Clusters the stage starts.
		if len(a.Write) > 0 {
			var res []rollout.WriteResult
			if err := r.decisive(ctx, "write "+rollout.ListSome(a.Write, 5), acts.WriteRolloutChange,
				activities.WriteInput{Rollout: in.Rollout, Change: r.state.Spec.Change, Clusters: a.Write}, &res); err != nil {
				return err
			}
			for _, w := range res {
				r.state.Wrote(w, workflow.Now(ctx))
			}
		}
		// 5. Report.
		if err := r.report(ctx); err != nil {
			return err
		}
		if a.Finished {
			return r.finish(ctx, obs.Rollout.Deleting)
		}
		// 6. Wait for the next poll, due time, event or control.
		r.wait(ctx, a)
		if r.history >= r.timing.MaxEvents || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
			next := in
			next.State = r.state
			return workflow.NewContinueAsNewError(ctx, Rollout, next)
		}
	}
}

// rolloutRun is one run of a Rollout's workflow.
type rolloutRun struct {
	in       RolloutInput
	timing   RolloutTiming
	state    *rollout.State
	events   workflow.ReceiveChannel
	controls workflow.ReceiveChannel
	// accepted wakes the loop after an Update was applied.
	accepted workflow.Channel
	// reported is the last status written (JSON), to write only changes, and reportedAt when.
	reported   string
	reportedAt time.Time
	// history counts this run's events from above: Temporal's own count is not available in
	// the test environment, and an upper bound is what the limit needs.
	history int
	// task is the workflow task the steps run in (see taskClock).
	task taskClock
}

// act runs a step that reads or reports (read the Rollout, observe, write its status): inside the
// workflow task first, as the Cluster's steps do (taskClock.run), else as an activity of its own
// that retries for as long as it takes (an outage pauses the rollout, it does not fail it).
func (r *rolloutRun) act(ctx workflow.Context, summary string, fn, in, out any) error {
	r.history += 6 // at most: scheduled, started, completed, and the workflow task around them
	return r.task.run(ctx, summary, rolloutStepBudget, fn, in, out, r.activity)
}

// rolloutStepBudget bounds a step inside the workflow task.
const rolloutStepBudget = 2 * time.Second

// decisive runs a step the rollout acts on for good, always as an activity of its own: freezing
// the selection and writing the Clusters a stage starts. The decision is then recorded in the
// history before the step runs, and its result before anything else is decided. Inside the
// workflow task, a worker that crashed after the writes would lose the decision with the task,
// and the next one, from fresher reads (a pause since, say), could leave a written Cluster
// unfollowed.
func (r *rolloutRun) decisive(ctx workflow.Context, summary string, fn, in, out any) error {
	r.history += 6
	return r.task.own(ctx, summary, fn, in, out, r.activity)
}

// activity runs a step as an activity of its own.
func (r *rolloutRun) activity(ctx workflow.Context, summary string, fn, in any) workflow.Future {
	return ownActivity(ctx, 5*time.Minute, summary, fn, in)
}

// start reads the Rollout and freezes its selection; stop: the workflow has nothing to do. While
// it cannot start, the status says why, and an Event does each time the reason changes.
func (r *rolloutRun) start(ctx workflow.Context) (bool, error) {
	var last rollout.NotStarting
	for {
		var ro activities.RolloutRead
		if err := r.act(ctx, "read the Rollout", acts.ReadRollout, r.in.Rollout, &ro); err != nil {
			return true, err
		}
		switch {
		case !ro.Exists:
			return true, nil
		case ro.Deleting:
			return true, r.finish(ctx, true)
		case ro.Ended:
			return true, nil
		}
		st, blocked, err := r.selectClusters(ctx, ro)
		if err != nil {
			return true, err
		}
		if st != nil {
			r.state = st
			workflow.GetLogger(ctx).Info("rollout started", "clusters", len(st.Clusters), "stages", len(st.Spec.Stages))
			return false, nil
		}
		var events []rollout.Event
		if blocked != last {
			events, last = []rollout.Event{blocked.Event()}, blocked
		}
		if err := r.act(ctx, "report why the rollout cannot start", acts.SetRolloutStatus,
			activities.RolloutStatusInput{Rollout: r.in.Rollout, Status: rollout.NotStarted(ro.Generation, blocked.Why), Events: events}, nil); err != nil {
			return true, err
		}
		// Re-check when the Rollout changes, or after a while (the other Rollout may end).
		r.wait(ctx, rollout.Actions{WakeAt: workflow.Now(ctx).Add(time.Minute)})
	}
}

// selectClusters freezes the selection, or says why the rollout cannot start: the spec is
// invalid (admission was bypassed), the stages overlap, the selector matches nothing, admission
// would refuse the change for some Clusters, or an older Rollout holds some of them.
func (r *rolloutRun) selectClusters(ctx workflow.Context, ro activities.RolloutRead) (*rollout.State, rollout.NotStarting, error) {
	var sel activities.SelectResult
	if err := r.decisive(ctx, "select the Clusters", acts.SelectClusters,
		activities.SelectInput{Rollout: r.in.Rollout, Spec: ro.Spec}, &sel); err != nil {
		return nil, rollout.NotStarting{}, err
	}
	if sel.Invalid != "" {
		return nil, rollout.NotStarting{Why: sel.Invalid}, nil
	}
	st, err := rollout.Freeze(sel.Spec, ro.Generation, sel.Candidates)
	switch {
	case err != nil:
		return nil, rollout.NotStarting{Why: err.Error()}, nil
	case sel.BlockedBy != "":
		return nil, rollout.NotStarting{Why: "waiting for " + sel.BlockedBy + " to end", Waiting: true}, nil
	case len(sel.Refused) > 0:
		return nil, rollout.NotStarting{Why: "admission would refuse the change for " + strings.Join(sel.Refused, "; ")}, nil
	case len(sel.Candidates) == 0:
		return nil, rollout.NotStarting{Why: "the selector matches no Cluster"}, nil
	}
	return st, rollout.NotStarting{}, nil
}

// handleControls accepts operator controls: Updates (validated before they are accepted) and the
// same controls as Signals.
func (r *rolloutRun) handleControls(ctx workflow.Context) error {
	validate := func(c rollout.Control) error {
		if r.state == nil {
			return fmt.Errorf("the rollout has not started")
		}
		return r.state.Validate(c)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateRolloutControl,
		func(ctx workflow.Context, c rollout.Control) (string, error) {
			r.state.Apply(c, workflow.Now(ctx))
			r.accepted.SendAsync(c)
			return r.state.Phase(), nil
		}, workflow.UpdateHandlerOptions{Validator: validate,
			Description: "An operator's control: approve [token], pause, resume, abort, skip <namespace/name>"}); err != nil {
		return err
	}
	return workflow.SetQueryHandlerWithOptions(ctx, QueryRollout, func() (any, error) {
		if r.state == nil {
			return map[string]string{"phase": rollout.PhasePending}, nil
		}
		return r.state.Status(), nil
	}, workflow.QueryHandlerOptions{Description: "The Rollout's status as the workflow sees it: stage, per-Cluster state, counts, conditions"})
}

// wait sleeps until the next poll (Clusters in flight), the next due time, or the idle re-check,
// whichever is first, or until the Rollout changes or an operator sends a control.
func (r *rolloutRun) wait(ctx workflow.Context, a rollout.Actions) {
	now := workflow.Now(ctx)
	d := r.timing.Idle
	if a.InFlight {
		d = r.timing.Poll
	}
	if !a.WakeAt.IsZero() && a.WakeAt.Sub(now) < d {
		d = max(a.WakeAt.Sub(now), time.Second)
	}
	tctx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	r.history += 5 // timer started, fired or cancelled, and a workflow task
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(tctx, d), func(workflow.Future) {})
	sel.AddReceive(r.events, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); r.history++ })
	sel.AddReceive(r.controls, func(c workflow.ReceiveChannel, _ bool) {
		var ctl rollout.Control
		c.Receive(ctx, &ctl)
		r.history++
		if r.state == nil {
			return
		}
		if err := r.state.Validate(ctl); err != nil {
			workflow.GetLogger(ctx).Warn("control refused", "action", ctl.Action, "error", err)
			return
		}
		r.state.Apply(ctl, workflow.Now(ctx))
	})
	sel.AddReceive(r.accepted, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.Select(ctx)
	// Take whatever else arrived meanwhile: one observation covers them all.
	for r.events.ReceiveAsync(nil) {
		r.history++
	}
	for r.accepted.ReceiveAsync(nil) {
	}
}

// inFlight are the Clusters the rollout follows now, with the generations written.
func (r *rolloutRun) inFlight() map[string]int64 {
	out := map[string]int64{}
	for i := range r.state.Clusters {
		if c := &r.state.Clusters[i]; c.InFlight() {
			out[c.Key()] = c.Generation
		}
	}
	return out
}

// report writes the Rollout's status when it changed, with the Events noted since the last, and
// at least every Idle: the write also reports the Clusters that match the selection since the
// start (late matches), which the workflow does not see change.
func (r *rolloutRun) report(ctx workflow.Context) error {
	st := r.state.Status()
	b, _ := json.Marshal(st)
	events := r.state.TakeEvents()
	now := workflow.Now(ctx)
	if string(b) == r.reported && len(events) == 0 && now.Sub(r.reportedAt) < r.timing.Idle {
		return nil
	}
	if err := r.act(ctx, "write the status: "+st.Phase, acts.SetRolloutStatus,
		activities.RolloutStatusInput{Rollout: r.in.Rollout, Status: st, Events: events, Selection: &r.state.Spec.Clusters}, nil); err != nil {
		return err
	}
	r.reported, r.reportedAt = string(b), now
	return nil
}

// finish ends the workflow: a deleted Rollout gets its finalizer removed.
func (r *rolloutRun) finish(ctx workflow.Context, deleting bool) error {
	if r.state != nil {
		workflow.GetLogger(ctx).Info("rollout ended", "phase", r.state.Phase())
	}
	if !deleting {
		return nil
	}
	return r.act(ctx, "release the deleted Rollout", acts.ReleaseRollout, r.in.Rollout, nil)
}
