package rollout

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/plan"
)

// PlanDue says whether a Rollout's status wants a fleet plan now: it waits for the approval before
// its first stage (no stage begun) and holds no plan for that approval yet. The token names the
// generation, so an edit of the spec asks for a new plan.
func PlanDue(st rolloutv1.RolloutStatus, generation int64) bool {
	if st.Phase != PhaseWaitingForApproval || len(st.Stages) > 0 || st.Stage == "" || st.ObservedGeneration != generation {
		return false
	}
	if st.PendingApproval != fmt.Sprintf("%s@gen-%d", st.Stage, generation) {
		return false // an approval after a stage, not before the first
	}
	return st.Plan == nil || st.Plan.Approval != st.PendingApproval
}

// maxRefusals bounds the refused Clusters a plan status names.
const maxRefusals = 10

// PlanStatusOf sums up a fleet plan made for an approval.
func PlanStatusOf(approval string, at metav1.Time, plans []plan.ClusterPlan) *rolloutv1.PlanStatus {
	s := plan.Summarize(plans)
	out := &rolloutv1.PlanStatus{Approval: approval, PlannedAt: at, Summary: s.String(),
		Clusters: int32(s.Clusters), RollWorkers: int32(s.RollWorkers), RollControlPlane: int32(s.RollControlPlane),
		InPlace: int32(s.InPlace), Unchanged: int32(s.Unchanged), Refused: int32(s.Refused), Failed: int32(s.Failed)}
	for _, p := range plans {
		if (p.Outcome == plan.OutcomeRefused || p.Outcome == plan.OutcomeFailed) && len(out.Refusals) < maxRefusals {
			out.Refusals = append(out.Refusals, p.Cluster+": "+p.Reason)
		}
	}
	return out
}
