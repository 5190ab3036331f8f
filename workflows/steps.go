package workflows

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities/temporalx"
)

// Steps run inside the workflow task first, as local activities: most read from the worker's
// cache and send little or nothing, take milliseconds, and so cost one marker in the history. A
// step is bounded there (passBudget for the pass, writeBudget for a write of the Cluster,
// stepBudget for the others), and the steps of one workflow task together by taskBudget, under
// the 5 s after which Temporal warns about a workflow task; one that takes longer (the cache
// catching up, a busy API server, an outage) or fails for a reason a retry may fix is run again
// as an activity of its own, which retries for as long as it takes, and one the task has no time
// left for runs so at once. Every step is idempotent, so the repeat is safe.
const (
	passBudget = 2500 * time.Millisecond
	stepBudget = time.Second
	// writeBudget bounds a write of the Cluster (its status, its pending-hooks annotation). Under
	// a fleet's load these are the API server's slowest writes (the fleet bench: 300 ms on
	// average, etcd's update alone 80 ms, and a conflict with the Cluster's other writers read
	// again and retried), and their tail passed a second: each such write then ran again as an
	// activity of its own, seven events more, and another write of the same Cluster.
	writeBudget = 2 * time.Second
	taskBudget  = 4 * time.Second
	// minStep is the least budget worth a try inside the workflow task.
	minStep = 250 * time.Millisecond
)

// taskClock tells how long the current workflow task has run. Inside a task the workflow's clock
// moves only when a local activity completes (its marker records the time, so the reading is the
// same on replay); a reading other than the one the last step ended at is a new task.
type taskClock struct {
	start, last time.Time
}

// left is what remains of budget in the current workflow task, the workflow's clock reading now.
func (c *taskClock) left(now time.Time, budget time.Duration) time.Duration {
	if !now.Equal(c.last) {
		c.start = now
	}
	return budget - now.Sub(c.start)
}

// stepped notes where the clock stands after a step; newTask says the step ended its workflow
// task (it ran as an activity of its own), so the steps after it count from now.
func (c *taskClock) stepped(now time.Time, newTask bool) {
	c.last = now
	if newTask {
		c.start = now
	}
}

// run runs fn(in) into out inside the workflow task as a local activity, within budget and what
// the task has left of taskBudget; a step the task has no time left for, or one that overran or
// failed for a reason a retry may fix, runs as an activity of its own (activity). A non-retryable
// error is returned at once.
func (c *taskClock) run(ctx workflow.Context, summary string, budget time.Duration, fn, in, out any,
	activity func(ctx workflow.Context, summary string, fn, in any) workflow.Future) error {
	budget = min(budget, c.left(workflow.Now(ctx), taskBudget))
	if budget < minStep {
		return c.own(ctx, summary+" (as an activity of its own: the workflow task has run long)", fn, in, out, activity)
	}
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: budget,
		StartToCloseTimeout:    budget,
		Summary:                summary,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	err := workflow.ExecuteLocalActivity(lctx, activityName(fn), in).Get(ctx, out)
	var appErr *temporal.ApplicationError
	if err == nil || (errors.As(err, &appErr) && appErr.NonRetryable()) {
		c.stepped(workflow.Now(ctx), false)
		return err
	}
	return c.own(ctx, summary+" (again, as an activity of its own)", fn, in, out, activity)
}

// own runs fn(in) into out as an activity of its own (activity); the workflow task ends there, so
// the steps after it count from when it completed.
func (c *taskClock) own(ctx workflow.Context, summary string, fn, in, out any,
	activity func(ctx workflow.Context, summary string, fn, in any) workflow.Future) error {
	defer func() { c.stepped(workflow.Now(ctx), true) }()
	return activity(ctx, summary, fn, in).Get(ctx, out)
}

// activityRetry retries a step for as long as it takes: an API server outage pauses the work,
// it does not fail it.
var activityRetry = &temporal.RetryPolicy{
	InitialInterval:    time.Second,
	BackoffCoefficient: 2,
	MaximumInterval:    time.Minute,
}

// heartbeatTimeout notices a worker that died mid-activity (activities heartbeat every
// temporalx.HeartbeatEvery while they run); the activity is then retried on another worker.
const heartbeatTimeout = 4 * temporalx.HeartbeatEvery

// ownActivity starts fn(in) as an activity of its own that retries for as long as it takes (an
// outage pauses the work, it does not fail it), heartbeating so that a dead worker's attempt is
// retried elsewhere.
func ownActivity(ctx workflow.Context, startToClose time.Duration, summary string, fn, in any) workflow.Future {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: startToClose,
		HeartbeatTimeout:    heartbeatTimeout,
		Summary:             summary,
		RetryPolicy:         activityRetry,
	}), fn, in)
}

// activityName is the name a method of activities.Activities is registered under (local
// activities are looked up by name: the workflows hold only a nil *Activities for reference).
func activityName(fn any) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	return name[strings.LastIndex(name, ".")+1:]
}
