package rollout

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/plan"
)

func TestPlanDue(t *testing.T) {
	waiting := rolloutv1.RolloutStatus{ObservedGeneration: 3, Phase: PhaseWaitingForApproval, Stage: "canary", PendingApproval: "canary@gen-3"}
	with := func(edit func(*rolloutv1.RolloutStatus)) rolloutv1.RolloutStatus {
		s := waiting
		edit(&s)
		return s
	}
	cases := []struct {
		name       string
		st         rolloutv1.RolloutStatus
		generation int64
		want       bool
	}{
		{"waiting before the first stage, no plan", waiting, 3, true},
		{"a plan for this approval", with(func(s *rolloutv1.RolloutStatus) { s.Plan = &rolloutv1.PlanStatus{Approval: "canary@gen-3"} }), 3, false},
		{"a plan for an older generation's approval", with(func(s *rolloutv1.RolloutStatus) { s.Plan = &rolloutv1.PlanStatus{Approval: "canary@gen-2"} }), 3, true},
		{"the spec was edited since (not yet observed)", waiting, 4, false},
		{"an approval after the stage", with(func(s *rolloutv1.RolloutStatus) { s.PendingApproval = "canary/after@gen-3" }), 3, false},
		{"a later stage's approval", with(func(s *rolloutv1.RolloutStatus) { s.Stages = []rolloutv1.StageStatus{{Name: "canary"}} }), 3, false},
		{"progressing", with(func(s *rolloutv1.RolloutStatus) { s.Phase = PhaseProgressing }), 3, false},
		{"pending (not started)", rolloutv1.RolloutStatus{Phase: PhasePending}, 1, false},
	}
	for _, c := range cases {
		if got := PlanDue(c.st, c.generation); got != c.want {
			t.Errorf("%s: PlanDue = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestPlanStatusOf(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 27, 19, 0, 0, 0, time.UTC))
	plans := []plan.ClusterPlan{
		{Cluster: "a/c1", Outcome: plan.OutcomeChanged, RollsWorkers: []plan.PoolRoll{{Kind: "MachineDeployment", Pool: "md-0"}}},
		{Cluster: "a/c2", Outcome: plan.OutcomeChanged, RollsControlPlane: true, RollsWorkers: []plan.PoolRoll{{Kind: "MachineDeployment", Pool: "md-0"}}},
		{Cluster: "a/c3", Outcome: plan.OutcomeUnchanged},
		{Cluster: "a/c4", Outcome: plan.OutcomeRefused, Reason: "spec.topology.version: Invalid value"},
		{Cluster: "a/c5", Outcome: plan.OutcomeChanged},
	}
	got := PlanStatusOf("canary@gen-3", at, plans)
	want := rolloutv1.PlanStatus{Approval: "canary@gen-3", PlannedAt: at, Clusters: 5, RollWorkers: 2, RollControlPlane: 1, InPlace: 1, Unchanged: 1, Refused: 1,
		Summary:  "5 Clusters: 2 roll their workers, 1 roll their control plane, 1 change in place only, 1 unchanged, 1 refused",
		Refusals: []string{"a/c4: spec.topology.version: Invalid value"}}
	if got.Summary != want.Summary || got.Clusters != want.Clusters || got.RollWorkers != want.RollWorkers || got.RollControlPlane != want.RollControlPlane ||
		got.InPlace != want.InPlace || got.Unchanged != want.Unchanged || got.Refused != want.Refused || strings.Join(got.Refusals, "|") != strings.Join(want.Refusals, "|") ||
		got.Approval != want.Approval || !got.PlannedAt.Equal(&want.PlannedAt) {
		t.Errorf("PlanStatusOf =\n%+v\nwant\n%+v", *got, want)
	}
	many := make([]plan.ClusterPlan, 25)
	for i := range many {
		many[i] = plan.ClusterPlan{Cluster: "a/x", Outcome: plan.OutcomeFailed, Reason: "unreadable"}
	}
	if got := PlanStatusOf("s@gen-1", at, many); len(got.Refusals) != maxRefusals || got.Failed != 25 {
		t.Errorf("25 failed: %d refusals named, %d failed counted; want %d, 25", len(got.Refusals), got.Failed, maxRefusals)
	}
}
