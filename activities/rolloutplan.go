package activities

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/rollout"
)

// PlanStatusFieldManager writes a Rollout's status.plan. It is not the manager of the rest of the status
// (StatusFieldManager): the Rollout's workflow applies its status without the plan, and server-side
// apply leaves alone the fields another manager owns.
const PlanStatusFieldManager = "topoflow-rollout-plan"

// WriteRolloutPlanStatus writes the fleet plan of a Rollout that waits for the approval before its
// first stage (rollout.PlanDue) into its status.plan: the plan `starter rollout plan` prints
// (readRolloutPlanOf the Rollout it read, plan.CategorizeAll), summed up. Upgrade hooks are planned without the Clusters'
// workflow ledgers (as owed): the counts do not depend on them. Anything else: nothing to do.
func (a *Activities) WriteRolloutPlanStatus(ctx context.Context, ref RolloutRef) error {
	r := &rolloutv1.Rollout{}
	if err := a.Kube.GetTyped(ctx, kube.Rollouts, ref.Namespace, ref.Name, r); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading Rollout %s: %w", ref, err)
	}
	if !rollout.PlanDue(r.Status, r.Generation) {
		return nil
	}
	approval, at := r.Status.PendingApproval, metav1.NewTime(time.Now().Truncate(time.Second))
	read, err := a.readRolloutPlanOf(ctx, ref, r)
	if err != nil {
		return fmt.Errorf("planning Rollout %s: %w", ref, err)
	}
	var st *rolloutv1.PlanStatus
	if read.Invalid != "" {
		st = &rolloutv1.PlanStatus{Approval: approval, PlannedAt: at, Summary: "not plannable: " + read.Invalid}
	} else {
		st = rollout.PlanStatusOf(approval, at, plan.CategorizeAll(read.Clusters))
	}
	body, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": rolloutv1.GroupVersion.String(), "kind": "Rollout",
		"metadata": map[string]any{"name": r.Name, "namespace": r.Namespace}, "status": map[string]any{"plan": body}}}
	if _, err := a.Kube.ApplyStatus(ctx, obj, PlanStatusFieldManager); err != nil {
		return fmt.Errorf("writing the plan of Rollout %s: %w", ref, err)
	}
	a.Log.InfoContext(ctx, "rollout plan written", "rollout", ref.String(), "approval", approval, "summary", st.Summary)
	return nil
}
