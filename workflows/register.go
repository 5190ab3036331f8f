package workflows

import (
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/temporalx"
)

// Registry is the part of a Temporal worker that registration needs.
type Registry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
	RegisterActivity(a interface{})
}

// Register adds topoflow's workflows and activities to a worker.
func Register(r Registry, a *activities.Activities) {
	r.RegisterWorkflowWithOptions(ClusterTopology, workflow.RegisterOptions{Name: ClusterWorkflowType})
	r.RegisterWorkflowWithOptions(ReconcileObject, workflow.RegisterOptions{Name: ReconcileObjectWorkflowType})
	r.RegisterWorkflowWithOptions(ClusterUpgrade, workflow.RegisterOptions{Name: ClusterUpgradeWorkflowType})
	r.RegisterWorkflowWithOptions(Rollout, workflow.RegisterOptions{Name: RolloutWorkflowType})
	r.RegisterActivity(a)
}

// WorkerOptions are the options a topoflow worker runs with: every activity heartbeats while it
// runs (see heartbeatTimeout).
func WorkerOptions() worker.Options {
	return worker.Options{Interceptors: []interceptor.WorkerInterceptor{temporalx.Heartbeats()}}
}

// Concurrency sizes a worker: how many activities, workflow tasks and pass steps (local
// activities) it runs at once (0: the SDK's defaults, 1000 each), and how many polls for each
// kind of task it keeps open (see WorkerOptionsWith).
type Concurrency struct {
	Activities, WorkflowTasks, Steps int
	Pollers                          int
}

// DefaultPollers is the SDK's own default: two polls per kind of task.
const DefaultPollers = 2

// WorkerOptionsWith is WorkerOptions with the concurrency set. Pollers above 0 is a fixed
// maximum of polls per kind of task; 0 lets the SDK scale them with what the server reports
// waiting (1 to 100). Measured on a fleet create of 100 Clusters on 2 cores (bench, back to back
// against the SDK's two): scaling brought no throughput, since the machine is CPU-bound, and
// in one run of two let workflow tasks run past 5 s, so it is not the default.
func WorkerOptionsWith(c Concurrency) worker.Options {
	o := WorkerOptions()
	o.MaxConcurrentActivityExecutionSize = c.Activities
	o.MaxConcurrentWorkflowTaskExecutionSize = c.WorkflowTasks
	o.MaxConcurrentLocalActivityExecutionSize = c.Steps
	if c.Pollers > 0 {
		o.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorSimpleMaximum(worker.PollerBehaviorSimpleMaximumOptions{MaximumNumberOfPollers: c.Pollers})
		o.ActivityTaskPollerBehavior = worker.NewPollerBehaviorSimpleMaximum(worker.PollerBehaviorSimpleMaximumOptions{MaximumNumberOfPollers: c.Pollers})
	} else {
		o.WorkflowTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
		o.ActivityTaskPollerBehavior = worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{})
	}
	return o
}

// DefaultConcurrentSteps bounds the pass steps a worker runs at once. Each holds a Cluster's
// objects while its requests wait for the client's rate limit (--kube-api-qps): a few dozen
// keep that limit busy, while the SDK's default of 1,000 let a fleet create hold hundreds of
// Clusters' objects in memory at once for no gain in speed.
const DefaultConcurrentSteps = 64
