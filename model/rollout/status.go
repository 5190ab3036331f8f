package rollout

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// Phases of a Rollout (status.phase).
const (
	PhasePending            = "Pending"
	PhaseProgressing        = "Progressing"
	PhaseWaitingForApproval = "WaitingForApproval"
	PhasePaused             = "Paused"
	PhaseHalted             = "Halted"
	PhaseCompleted          = "Completed"
	PhaseAborted            = "Aborted"
)

// Ended says whether a Rollout's status shows it ended (completed or aborted) at its current
// generation: its workflow has nothing left to do, and a later generation starts it anew.
func Ended(phase string, observedGeneration, generation int64) bool {
	return (phase == PhaseCompleted || phase == PhaseAborted) && observedGeneration >= generation
}

// Phase is the rollout's phase, the most pressing first.
func (s *State) Phase() string {
	switch {
	case s.Aborted != "":
		return PhaseAborted
	case s.Completed:
		return PhaseCompleted
	case s.Halted:
		return PhaseHalted
	case s.Paused || s.AnnotationPaused:
		return PhasePaused
	case s.PendingApproval() != "":
		return PhaseWaitingForApproval
	}
	return PhaseProgressing
}

// Status is the Rollout's status for this state; conditions carry no transition times (the
// writer keeps them from the last status).
func (s *State) Status() rolloutv1.RolloutStatus {
	st := rolloutv1.RolloutStatus{ObservedGeneration: s.Generation, Phase: s.Phase(), PendingApproval: s.PendingApproval(),
		ClassRevision: s.Spec.Change.ClassRevision}
	if s.Stage < len(s.Spec.Stages) && !s.finished() {
		st.Stage = s.Spec.Stages[s.Stage].Name
	}
	var waiting, failed []string
	var opens time.Time
	for i := range s.Clusters {
		c := &s.Clusters[i]
		cs := rolloutv1.ClusterStatus{Namespace: c.Namespace, Name: c.Name, State: string(c.State), Message: c.Message}
		if c.Stage >= 0 {
			cs.Stage = s.Spec.Stages[c.Stage].Name
		}
		if !c.Started.IsZero() {
			cs.StartedAt = statusTime(c.Started)
		}
		if !c.Finished.IsZero() {
			cs.FinishedAt = statusTime(c.Finished)
		}
		st.Clusters = append(st.Clusters, cs)
		st.Counts.Total++
		switch c.State {
		case Pending:
			st.Counts.Pending++
		case Done:
			st.Counts.Done++
		case Failed:
			st.Counts.Failed++
			failed = append(failed, c.Key()+": "+c.Message)
		case Skipped:
			st.Counts.Skipped++
		case WaitingForWindow:
			waiting = append(waiting, c.Key())
			if opens.IsZero() || c.Until.Before(opens) {
				opens = c.Until
			}
			st.Counts.Waiting++
		default: // Progressing, Soaking
			st.Counts.Changing++
		}
	}
	for i, t := range s.StageTimes {
		ss := rolloutv1.StageStatus{Name: s.Spec.Stages[i].Name}
		if !t.Started.IsZero() {
			ss.StartedAt = statusTime(t.Started)
		}
		if !t.Finished.IsZero() {
			ss.FinishedAt = statusTime(t.Finished)
		}
		st.Stages = append(st.Stages, ss)
	}
	st.Conditions = s.conditions(st, waiting, failed, opens)
	return st
}

// statusTime is a time as the status holds it: in whole seconds, as the API server stores it, so a
// status is the same (and so are the stage durations read from it) whether it reached the
// activity through Temporal's serialization or inside the workflow task without one.
func statusTime(t time.Time) *metav1.Time {
	return &metav1.Time{Time: t.Truncate(time.Second)}
}

// MaxLateMatches is how many late matches a status names.
const MaxLateMatches = 50

// AddLateMatches reports the Clusters the selection matches now (keys "namespace/name") that the
// rollout did not select when it started: named (up to MaxLateMatches, sorted), counted, and in
// the condition LateMatches. They are never added to a running rollout.
func AddLateMatches(st *rolloutv1.RolloutStatus, matching []string) {
	selected := map[string]bool{}
	for _, c := range st.Clusters {
		selected[c.Namespace+"/"+c.Name] = true
	}
	var late []string
	for _, k := range matching {
		if !selected[k] {
			late = append(late, k)
		}
	}
	slices.Sort(late)
	st.Counts.LateMatches = int32(len(late))
	st.LateMatches = late[:min(len(late), MaxLateMatches)]
	cond := metav1.Condition{Type: "LateMatches", Status: metav1.ConditionFalse, Reason: "Selection", ObservedGeneration: st.ObservedGeneration}
	if len(late) > 0 {
		cond.Status = metav1.ConditionTrue
		cond.Message = fmt.Sprintf("%d Clusters match the selection but did not when the rollout started; they are not added (a new Rollout moves them): %s",
			len(late), ListSome(late, 5))
	}
	st.Conditions = append(st.Conditions, cond)
}

func (s *State) conditions(st rolloutv1.RolloutStatus, waiting, failed []string, opens time.Time) []metav1.Condition {
	cond := func(t string, ok bool, reason, msg string) metav1.Condition {
		status := metav1.ConditionFalse
		if ok {
			status = metav1.ConditionTrue
		}
		return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: s.Generation}
	}
	counts := fmt.Sprintf("%d of %d Clusters done, %d failed, %d skipped", st.Counts.Done, st.Counts.Total, st.Counts.Failed, st.Counts.Skipped)
	out := []metav1.Condition{
		cond("Progressing", st.Phase == PhaseProgressing, st.Phase, counts),
		cond("Completed", s.Completed, st.Phase, counts),
		cond("WaitingForApproval", st.PendingApproval != "", "Approval", approvalMessage(st.PendingApproval)),
		cond("Halted", s.Halted, "FailureBudget", haltMessage(s.Halted, failed, s.Spec.FailureBudget)),
		cond("OutsideWindow", len(waiting) > 0, "MaintenanceWindow", windowMessage(waiting, opens)),
		cond("SpecChanged", s.LatestGeneration > s.Generation, "Generation", specMessage(s.LatestGeneration, s.Generation)),
	}
	if s.Aborted != "" {
		out[1].Message = s.Aborted + "; " + counts
	}
	return out
}

func approvalMessage(token string) string {
	if token == "" {
		return ""
	}
	return fmt.Sprintf("approve with `starter rollout approve NAME` or the annotation %s=%s", ApproveAnnotation, token)
}

func haltMessage(halted bool, failed []string, budget int32) string {
	if !halted {
		return ""
	}
	return fmt.Sprintf("more Clusters failed than the failure budget (%d) allows: %s; resume, skip the failed Clusters or abort", budget, ListSome(failed, 5))
}

func windowMessage(waiting []string, opens time.Time) string {
	if len(waiting) == 0 {
		return ""
	}
	return fmt.Sprintf("%s outside their maintenance windows; the first opens %s", ListSome(waiting, 5), opens.UTC().Format(time.RFC3339))
}

func specMessage(latest, running int64) string {
	if latest <= running {
		return ""
	}
	return fmt.Sprintf("the spec changed to generation %d; this rollout keeps following generation %d (delete it and create a new one to change course)", latest, running)
}

// NotStarted is the status of a Rollout that cannot start yet, and why (its selection is refused,
// overlaps, is empty, or another Rollout holds its Clusters).
func NotStarted(generation int64, why string) rolloutv1.RolloutStatus {
	return rolloutv1.RolloutStatus{ObservedGeneration: generation, Phase: PhasePending, Conditions: []metav1.Condition{{
		Type: "Progressing", Status: metav1.ConditionFalse, Reason: "NotStarted", Message: why, ObservedGeneration: generation}}}
}

// NotStarting says why a Rollout cannot start; Waiting when only an older Rollout over the same
// Clusters holds it.
type NotStarting struct {
	Why     string
	Waiting bool
}

// Event tells it: a Warning unless the Rollout only waits for an older one.
func (n NotStarting) Event() Event {
	if n.Waiting {
		return Event{Reason: "Waiting", Message: n.Why}
	}
	return Event{Warning: true, Reason: "NotStarted", Message: n.Why}
}
