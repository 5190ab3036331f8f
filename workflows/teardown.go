package workflows

import (
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/upgrade"
)

// teardown deletes the topology in order: workers, control plane, infrastructure cluster,
// templates; each step waits until its objects are gone (providers may hold them with finalizers),
// then the Cluster's finalizer is released. The steps are level-based: after an outage the
// teardown resumes at the first step with objects left.
func (r *clusterRun) teardown(ctx workflow.Context, hasInfra, okToDelete bool) passOutcome {
	r.deleting = true
	if okToDelete {
		// The hook passed before (the annotation outlives this run: Cluster API's own finalizer
		// may keep the Cluster, and its events start a new run after this one released it).
		// Cluster API's topology controller skips the hook then too (hooks.IsOkToDelete).
		r.ledger.DeletePassed = true
	}
	if !r.ledger.DeletePassed {
		call := activities.HookCall{Cluster: r.ref, Hook: hooksv1.BeforeClusterDelete}
		if outcome, passed := r.runBlockingHook(ctx, call, status.StageDelete, "", hasInfra); !passed {
			return outcome
		}
		r.ledger.Record(upgrade.Due{Hook: hooksv1.BeforeClusterDelete})
	}
	for _, step := range activities.DeleteSteps {
		name := "delete " + strings.ToLower(string(step))
		r.setStep(ctx, name, "")
		var res activities.DeleteResult
		err := r.step(ctx, name, stepBudget, acts.DeleteTopologyStep, activities.DeleteInput{Cluster: r.ref, Step: step}, &res)
		if err != nil {
			r.state.LastError = err.Error()
			return waiting
		}
		if res.ClusterGone {
			return finished
		}
		if len(res.Remaining) > 0 {
			if prov, ok := r.observe(ctx, hasInfra); ok {
				r.writeStatus(ctx, 0, prov, status.TearingDown(string(step), res.Remaining))
			}
			r.setStep(ctx, name, "deletion of "+strings.Join(res.Remaining, ", "))
			return waiting
		}
	}
	r.setStep(ctx, "release the Cluster", "")
	if err := r.step(ctx, "remove the topology finalizer from the Cluster", stepBudget, acts.RemoveFinalizer, r.ref, nil); err != nil {
		r.state.LastError = err.Error()
		return waiting
	}
	return finished
}
