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
	r.RegisterActivity(a)
}

// WorkerOptions are the options a topoflow worker runs with: every activity heartbeats while it
// runs (see heartbeatTimeout).
func WorkerOptions() worker.Options {
	return worker.Options{Interceptors: []interceptor.WorkerInterceptor{temporalx.Heartbeats()}}
}

// Concurrency sizes a worker: how many activities and workflow tasks it runs at once (0: the
// SDK's defaults, 1000 each).
type Concurrency struct {
	Activities, WorkflowTasks int
}

// WorkerOptionsWith is WorkerOptions with the concurrency set.
func WorkerOptionsWith(c Concurrency) worker.Options {
	o := WorkerOptions()
	o.MaxConcurrentActivityExecutionSize = c.Activities
	o.MaxConcurrentWorkflowTaskExecutionSize = c.WorkflowTasks
	return o
}
