package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
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
