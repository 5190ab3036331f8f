package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// TestWriteRollout: the text view shows the summary, the approval to give and how, the
// conditions that hold, and the Clusters that have started (the pending ones only counted).
func TestWriteRollout(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(90 * time.Second))
	r := &rolloutv1.Rollout{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: "edge", Generation: 2},
		Status: rolloutv1.RolloutStatus{ObservedGeneration: 2, Phase: "WaitingForApproval", Stage: "canary", PendingApproval: "canary/after@gen-2",
			Counts: rolloutv1.Counts{Total: 4, Done: 1, Waiting: 1, Pending: 2},
			Stages: []rolloutv1.StageStatus{{Name: "canary", StartedAt: &at, FinishedAt: &later}, {Name: "rest", StartedAt: &later}},
			Conditions: []metav1.Condition{
				{Type: "WaitingForApproval", Status: metav1.ConditionTrue, Message: "approve it"},
				{Type: "Halted", Status: metav1.ConditionFalse, Message: "not shown"},
			},
			Clusters: []rolloutv1.ClusterStatus{
				{Namespace: "fleet", Name: "edge-01", Stage: "canary", State: "Done", StartedAt: &at},
				{Namespace: "fleet", Name: "edge-02", Stage: "rest", State: "Pending"},
			}}}
	var out bytes.Buffer
	if err := writeRollout(&out, r); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"Rollout fleet/edge (generation 2, following 2)",
		"phase:    WaitingForApproval",
		"approval: canary/after@gen-2 (starter rollout approve fleet/edge)",
		"clusters: 4 total, 1 done, 0 changing, 1 waiting for a window, 2 pending, 0 failed, 0 skipped",
		"stages:   canary 1m30s, rest running since 2026-11-25T12:01:30Z",
		"WaitingForApproval: approve it",
		"fleet/edge-01  canary  Done",
		"2026-11-25T12:00:00Z",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	for _, not := range []string{"not shown", "edge-02"} {
		if strings.Contains(got, not) {
			t.Errorf("%q shown in:\n%s", not, got)
		}
	}
}
