package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
)

// drain takes every pending event without blocking.
func (r *clusterRun) drain() {
	for {
		var ev ClusterEvent
		if !r.events.ReceiveAsync(&ev) {
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

// resyncTimer is a resync timer kept across waits: an event-driven pass then costs no timer
// started and canceled in the history.
type resyncTimer struct {
	fired    workflow.Future
	deadline time.Time
	cancel   workflow.CancelFunc
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
// (waiting; a hook's retryAfterSeconds or failure backoff overrides it, exactly), or for an event
// or settledResync (settled). Events that arrived during the pass end the wait at once: the pass
// may have read state older than they are.
func (r *clusterRun) waitAfter(ctx workflow.Context, outcome passOutcome, settledResync time.Duration) {
	if outcome == again {
		return
	}
	d, exact := settledResync, false
	if outcome == waiting {
		d = r.timing.WaitResync
		switch {
		case r.nextWait > 0:
			d, r.nextWait, exact = r.nextWait, 0, true
		case r.hookFailed:
			d, exact = hookRetry(r.hookFailures, d), true
		}
		r.hookFailed = false
	}
	r.drain()
	if len(r.pending) > 0 {
		r.pending = r.pending[:0]
		return
	}
	var fired workflow.Future
	if exact {
		// A hook's wait: a timer of its own, which a kept resync timer must not cut short.
		timerCtx, cancel := workflow.WithCancel(ctx)
		defer cancel()
		fired = workflow.NewTimerWithOptions(timerCtx, d, workflow.TimerOptions{Summary: truncate(fmt.Sprintf("wait: %s (re-check in %s)", r.state.Waiting, d))})
	} else {
		fired = r.resyncTimer(ctx, d).fired
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(r.events, func(c workflow.ReceiveChannel, _ bool) {
		var ev ClusterEvent
		c.Receive(ctx, &ev)
		r.received(ev)
	})
	sel.AddFuture(fired, func(workflow.Future) {
		if !exact {
			r.resync = nil
		}
	})
	sel.Select(ctx)
	r.drain()
	r.pending = r.pending[:0]
}

// resyncTimer returns the kept resync timer, started anew when there is none due between d/2 and
// d from now; it stays for the next wait when an event ends this one. A resync may so come sooner
// than d after the last pass, never later, and not much sooner: a timer started for a shorter wait
// (the wait resync while the providers worked) is replaced once the Cluster has settled, else it
// fires into a pass with nothing to do (bench: one such pass, seven history events, per Cluster
// created in a fleet). Replacing it costs one event (the cancel).
func (r *clusterRun) resyncTimer(ctx workflow.Context, d time.Duration) *resyncTimer {
	now := workflow.Now(ctx)
	if t := r.resync; t != nil && (t.fired.IsReady() || t.deadline.After(now.Add(d)) || t.deadline.Before(now.Add(d/2))) {
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
	return r.resync
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:197] + "..."
	}
	return s
}

func (r *clusterRun) upsertSearchAttributes(ctx workflow.Context, class, version, phase string) error {
	if r.sa == [3]string{class, version, phase} && r.state.Passes > 0 {
		return nil
	}
	updates := []temporal.SearchAttributeUpdate{
		SAClusterNamespace.ValueSet(r.ref.Namespace),
		SAClusterName.ValueSet(r.ref.Name),
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
