// Package rollout is the pure logic of a fleet rollout: which Clusters each stage takes, when a
// Cluster's change may start (concurrency, maintenance windows, approvals, pause), when it is
// done or failed, and when the rollout halts. The rollout workflow observes, calls Advance, does
// what it returns and waits; every decision is here, so a test can drive it with plain values.
package rollout

import (
	"fmt"
	"maps"
	"slices"
	"time"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// ClusterState is a selected Cluster's place in the rollout.
type ClusterState string

const (
	Pending          ClusterState = "Pending"
	WaitingForWindow ClusterState = "WaitingForWindow"
	Progressing      ClusterState = "Progressing"
	Soaking          ClusterState = "Soaking"
	Done             ClusterState = "Done"
	Failed           ClusterState = "Failed"
	Skipped          ClusterState = "Skipped"
)

// Step is where the current stage is.
type Step string

const (
	StepApproveBefore Step = "ApproveBefore"
	StepRun           Step = "Run"
	StepSoak          Step = "Soak"
	StepApproveAfter  Step = "ApproveAfter"
)

// DefaultProgressDeadline is how long a Cluster may take from its write to done.
const DefaultProgressDeadline = 30 * time.Minute

// Cluster is one selected Cluster.
type Cluster struct {
	Namespace string       `json:"ns"`
	Name      string       `json:"name"`
	Stage     int          `json:"stage"` // -1: no stage takes it
	State     ClusterState `json:"state"`
	Windows   []string     `json:"windows,omitempty"`
	// Generation is the Cluster's generation after the rollout's write.
	Generation int64     `json:"gen,omitempty"`
	Started    time.Time `json:"started,omitzero"`
	Finished   time.Time `json:"finished,omitzero"`
	// Until is when a soak ends (Soaking) or the window opens (WaitingForWindow).
	Until   time.Time `json:"until,omitzero"`
	Message string    `json:"msg,omitempty"`
	// Holds: the Cluster's spec already held the change when the rollout selected it (at
	// Generation). Its turn needs no write: it is followed to done at once, in or out of its
	// windows, without a place of the concurrency limit (see Start). Cleared when it turns out
	// not to hold any more; it is then written in its turn like any other.
	Holds bool `json:"holds,omitempty"`
}

// Key is "namespace/name".
func (c *Cluster) Key() string { return c.Namespace + "/" + c.Name }

// finish ends the rollout's work on a Cluster and notes it for the Events.
func (s *State) finish(c *Cluster, st ClusterState, msg string, now time.Time) {
	c.State, c.Message, c.Finished, c.Until = st, msg, now, time.Time{}
	switch st {
	case Done:
		s.note(false, "ClusterDone", "%s done", c.Key())
	case Failed:
		s.note(true, "ClusterFailed", "%s failed: %s", c.Key(), msg)
	case Skipped:
		s.note(false, "ClusterSkipped", "%s skipped: %s", c.Key(), msg)
	}
}

// Terminal: the rollout is through with the Cluster.
func (c *Cluster) Terminal() bool { return c.State == Done || c.State == Failed || c.State == Skipped }

// InFlight: written (or, when it already held the change, started) and not yet through: what the
// rollout observes.
func (c *Cluster) InFlight() bool { return c.State == Progressing || c.State == Soaking }

// written: in flight with a write of the rollout's (one that already held the change is not):
// what takes a place of the concurrency limit.
func (c *Cluster) written() bool { return c.InFlight() && !c.Holds }

// State is a rollout in progress: the frozen spec and selection, where it is, and what operators
// said. It is the workflow's whole state, carried across continue-as-new.
type State struct {
	Spec       rolloutv1.RolloutSpec `json:"spec"`
	Generation int64                 `json:"generation"`
	Clusters   []Cluster             `json:"clusters"`
	Stage      int                   `json:"stage"`
	Step       Step                  `json:"step,omitempty"`
	// StageSoakUntil is when the stage's soak ends (StepSoak).
	StageSoakUntil time.Time `json:"stageSoakUntil,omitzero"`
	// StageTimes are when each stage begun so far started running and was through.
	StageTimes []StageTime `json:"stageTimes,omitempty"`
	Approved   []string    `json:"approved,omitempty"`
	// Paused by an operator (CLI or UI); AnnotationPaused by the Rollout's annotation.
	Paused           bool `json:"paused,omitempty"`
	AnnotationPaused bool `json:"annotationPaused,omitempty"`
	Halted           bool `json:"halted,omitempty"`
	// Forgiven failures: those before the last resume of a halt.
	Forgiven  int    `json:"forgiven,omitempty"`
	Aborted   string `json:"aborted,omitempty"` // why, when aborted
	Completed bool   `json:"completed,omitempty"`
	// LatestGeneration is the Rollout's generation last seen (a later one is reported, not followed).
	LatestGeneration int64 `json:"latestGeneration,omitempty"`

	events []Event // noted since the last TakeEvents
}

// StageTime is when a stage started running (after its approval before) and was through (every
// Cluster through and the stage's soak over).
type StageTime struct {
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// stageTime is the current stage's entry in StageTimes.
func (s *State) stageTime() *StageTime {
	for len(s.StageTimes) <= s.Stage {
		s.StageTimes = append(s.StageTimes, StageTime{})
	}
	return &s.StageTimes[s.Stage]
}

// Event is something an operator would want in `kubectl describe rollout`.
type Event struct {
	Warning bool   `json:"warning,omitempty"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (s *State) note(warning bool, reason, format string, args ...any) {
	s.events = append(s.events, Event{Warning: warning, Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// TakeEvents returns the Events noted since the last call.
func (s *State) TakeEvents() []Event {
	out := s.events
	s.events = nil
	return out
}

// Observation is what the workflow read before calling Advance.
type Observation struct {
	Now        time.Time
	Generation int64
	Deleting   bool
	// From the Rollout's annotations (see Annotations).
	Paused    bool
	Abort     bool
	Approvals []string
	Skips     []string
	// Clusters in flight, by key; a Cluster missing here was not read this time.
	Clusters map[string]Seen
	// Windows are the openings of the windows State.WindowLists named, by WindowsKey.
	Windows map[string]Openings
}

// Seen is what the rollout read of a Cluster in flight.
type Seen struct {
	Gone  bool   `json:"gone,omitempty"`
	Holds bool   `json:"holds"`
	Done  bool   `json:"done"`
	Why   string `json:"why,omitempty"`
}

// Actions is what the workflow does after Advance.
type Actions struct {
	// Write are the keys of the Clusters to write now.
	Write []string
	// WakeAt is the next time something is due (a soak's end, a deadline, a window); zero: none.
	WakeAt time.Time
	// InFlight: Clusters are changing, observe them again after the poll interval.
	InFlight bool
	// Finished: the rollout completed or was aborted; nothing is left to do.
	Finished bool
}

// StageOf is the stage's spec.
func (s *State) StageOf(i int) rolloutv1.Stage { return s.Spec.Stages[i] }

// ApprovalToken names an approval gate: "<stage>@gen-<n>" before the stage, "<stage>/after@gen-<n>"
// after it, so an approval opens one gate of one generation only.
func (s *State) ApprovalToken(stage int, after bool) string {
	suffix := ""
	if after {
		suffix = "/after"
	}
	return fmt.Sprintf("%s%s@gen-%d", s.Spec.Stages[stage].Name, suffix, s.Generation)
}

// PendingApproval is the token of the gate the rollout waits at ("" when it waits at none).
func (s *State) PendingApproval() string {
	if s.finished() || s.Stage >= len(s.Spec.Stages) {
		return ""
	}
	st := s.StageOf(s.Stage)
	switch {
	case (s.Step == StepApproveBefore || s.Step == "") && st.ApproveBefore && !s.approved(s.ApprovalToken(s.Stage, false)):
		return s.ApprovalToken(s.Stage, false)
	case s.Step == StepApproveAfter && st.ApproveAfter && !s.approved(s.ApprovalToken(s.Stage, true)):
		return s.ApprovalToken(s.Stage, true)
	}
	return ""
}

func (s *State) approved(token string) bool {
	for _, a := range s.Approved {
		if a == token {
			return true
		}
	}
	return false
}

func (s *State) finished() bool { return s.Completed || s.Aborted != "" }

// Failures counts the failed Clusters since the last resume.
func (s *State) Failures() int { return s.count(Failed) - s.Forgiven }

func (s *State) count(st ClusterState) int {
	n := 0
	for i := range s.Clusters {
		if s.Clusters[i].State == st {
			n++
		}
	}
	return n
}

// Advance takes in what was observed and moves the rollout on: Clusters in flight become done or
// failed, the rollout halts past its failure budget, and the current stage starts the Clusters it
// may (concurrency, windows, pause) or passes its soak and approvals.
func (s *State) Advance(o Observation) Actions {
	s.takeControls(o)
	if o.Deleting {
		s.abort("the Rollout is being deleted")
	}
	if s.finished() {
		return Actions{Finished: true}
	}
	s.observe(o)
	if s.Failures() > int(s.Spec.FailureBudget) && !s.Halted {
		s.Halted = true
		s.note(true, "Halted", "%d Clusters failed, more than the failure budget (%d) allows", s.Failures(), s.Spec.FailureBudget)
	}
	var a Actions
	if !s.Halted {
		s.advanceStages(o.Now, o.Windows, &a)
	}
	for i := range s.Clusters {
		a.InFlight = a.InFlight || s.Clusters[i].InFlight()
	}
	a.WakeAt = s.nextDue()
	a.Finished = s.Completed
	return a
}

// takeControls merges the Rollout's annotations: approvals add up, pause follows the annotation,
// skips apply to Clusters not yet through, abort ends the rollout.
func (s *State) takeControls(o Observation) {
	if o.Generation > s.LatestGeneration {
		s.LatestGeneration = o.Generation
	}
	for _, t := range o.Approvals {
		if !s.approved(t) {
			s.Approved = append(s.Approved, t)
			s.note(false, "Approved", "%s approved by annotation", t)
		}
	}
	s.AnnotationPaused = o.Paused
	for _, k := range o.Skips {
		if c := s.cluster(k); c != nil && !c.Terminal() {
			s.finish(c, Skipped, "skipped by annotation", o.Now)
		}
	}
	if o.Abort {
		s.abort("aborted by annotation")
	}
}

func (s *State) abort(why string) {
	if s.Aborted == "" && !s.Completed {
		s.Aborted = why
		s.note(false, "Aborted", "%s", why)
	}
}

func (s *State) cluster(key string) *Cluster {
	for i := range s.Clusters {
		if s.Clusters[i].Key() == key {
			return &s.Clusters[i]
		}
	}
	return nil
}

// observe moves Clusters in flight on from what was read of them.
func (s *State) observe(o Observation) {
	now := o.Now
	for i := range s.Clusters {
		c := &s.Clusters[i]
		seen, ok := o.Clusters[c.Key()]
		if !c.InFlight() || !ok {
			continue
		}
		st := s.StageOf(c.Stage)
		deadline := DefaultProgressDeadline
		if st.ProgressDeadline != nil {
			deadline = st.ProgressDeadline.Duration
		}
		switch {
		case seen.Gone:
			s.finish(c, Skipped, "the Cluster was deleted", now)
		case !seen.Holds && c.Holds:
			// Followed without a write, and the change no longer holds: it waits for its turn.
			c.State, c.Holds, c.Generation, c.Started, c.Until = Pending, false, 0, time.Time{}, time.Time{}
			c.Message = "no longer holds the change it held when the rollout started; it is written in its turn"
		case !seen.Holds:
			s.finish(c, Failed, "another field manager changed what the rollout wrote before the Cluster was done", now)
		case c.State == Progressing && seen.Done && st.SoakAfterCluster.Duration > 0:
			c.State, c.Until, c.Message = Soaking, now.Add(st.SoakAfterCluster.Duration), "settled; soaking"
		case seen.Done && (c.State == Progressing || !now.Before(c.Until)):
			s.finish(c, Done, "", now)
		case c.State == Soaking && !seen.Done:
			c.State, c.Until, c.Message = Progressing, time.Time{}, "unsettled during its soak: "+seen.Why
		case c.State == Progressing && !now.Before(c.Started.Add(deadline)):
			s.finish(c, Failed, fmt.Sprintf("not done within the progress deadline (%s): %s", deadline, seen.Why), now)
		case c.State == Progressing:
			c.Message = seen.Why
		}
	}
}

// advanceStages runs the current stage's steps as far as they go now.
func (s *State) advanceStages(now time.Time, windows map[string]Openings, a *Actions) {
	for s.Stage < len(s.Spec.Stages) {
		st := s.StageOf(s.Stage)
		switch s.Step {
		case StepApproveBefore, "":
			if st.ApproveBefore && !s.approved(s.ApprovalToken(s.Stage, false)) {
				return
			}
			s.Step = StepRun
			s.stageTime().Started = now
			s.note(false, "StageStarted", "stage %s started", st.Name)
		case StepRun:
			if !s.runStage(now, windows, a) {
				return
			}
			s.Step, s.StageSoakUntil = StepSoak, now.Add(st.SoakAfterStage.Duration)
			s.note(false, "StageDone", "stage %s: every Cluster through", st.Name)
		case StepSoak:
			if now.Before(s.StageSoakUntil) {
				return
			}
			s.Step, s.StageSoakUntil = StepApproveAfter, time.Time{}
			s.stageTime().Finished = now
		case StepApproveAfter:
			if st.ApproveAfter && !s.approved(s.ApprovalToken(s.Stage, true)) {
				return
			}
			s.Stage, s.Step = s.Stage+1, StepApproveBefore
		}
	}
	if !s.Completed {
		s.Completed = true
		s.note(false, "Completed", "%d of %d Clusters done, %d failed, %d skipped", s.count(Done), len(s.Clusters), s.count(Failed), s.count(Skipped))
	}
}

// runStage starts the stage's Clusters it may (Start decides each) and says whether all of them
// are through.
func (s *State) runStage(now time.Time, windows map[string]Openings, a *Actions) bool {
	st := s.StageOf(s.Stage)
	limit := max(int(st.MaxConcurrent), 1)
	written, through := 0, true
	for i := range s.Clusters {
		if c := &s.Clusters[i]; c.Stage == s.Stage && c.written() {
			written++
		}
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.Stage != s.Stage || c.Terminal() {
			continue
		}
		through = false
		if c.InFlight() {
			continue
		}
		texts, whose := s.windowsOf(c)
		op, read := windows[WindowsKey(texts)]
		d := Start(StartInput{Holds: c.Holds, Paused: s.Paused || s.AnnotationPaused, PlaceFree: written < limit,
			Windowed: len(texts) > 0, WindowsRead: read, Windows: op, Now: now})
		switch d.Do {
		case StartFollow:
			c.State, c.Started, c.Until, c.Message = Progressing, now, time.Time{}, "already holds the change: not written, followed to done"
			s.note(false, "ClusterStarted", "stage %s: %s already holds the change; following it", st.Name, c.Key())
		case StartWrite:
			c.State, c.Started, c.Until, c.Message = Progressing, now, time.Time{}, "writing the change"
			s.note(false, "ClusterStarted", "stage %s: changing %s", st.Name, c.Key())
			a.Write = append(a.Write, c.Key())
			written++
		case StartWait:
			c.State, c.Until, c.Message = WaitingForWindow, d.Until, d.Why
		case StartFail:
			s.finish(c, Failed, whose+": "+d.Why, now)
		}
	}
	return through
}

// Starting is what becomes now of a Cluster of the running stage that has not started.
type Starting string

const (
	// StartNone: it stays as it is for now (paused, no place free, or its windows not read
	// this time).
	StartNone Starting = ""
	// StartFollow: its spec already holds the change: it is followed to done without a write,
	// in or out of its windows, and takes no place of the concurrency limit.
	StartFollow Starting = "Follow"
	// StartWrite: the change is written now.
	StartWrite Starting = "Write"
	// StartWait: it waits for its maintenance window (until Until), without taking a place.
	StartWait Starting = "Wait"
	// StartFail: its windows cannot be laid out (Why).
	StartFail Starting = "Fail"
)

// StartInput is what the start of one Cluster depends on.
type StartInput struct {
	// Holds: its spec already holds the change (read when the rollout started).
	Holds bool
	// Paused: the rollout is paused (by an operator or the Rollout's annotation).
	Paused bool
	// PlaceFree: the stage's concurrency limit has a place for one more write.
	PlaceFree bool
	// Windowed: the Cluster has maintenance windows (its own or the rollout's); WindowsRead: the
	// observation laid them out (Windows).
	Windowed, WindowsRead bool
	Windows               Openings
	Now                   time.Time
}

// StartDecision is Start's answer: what to do, until when a Cluster waits, and why.
type StartDecision struct {
	Do    Starting
	Until time.Time
	Why   string
}

// Start decides whether a Cluster of the running stage starts now. A paused rollout starts
// nothing. A Cluster whose spec already holds the change needs no write: it is followed to done
// at once, whatever its windows say and whether or not a place is free. Otherwise the change is
// written when a place of the concurrency limit is free and the Cluster is inside one of its
// maintenance windows; outside them it waits, without taking a place.
func Start(in StartInput) StartDecision {
	switch {
	case in.Paused:
		return StartDecision{}
	case in.Holds:
		return StartDecision{Do: StartFollow}
	case !in.PlaceFree:
		return StartDecision{}
	case !in.Windowed:
		return StartDecision{Do: StartWrite}
	case !in.WindowsRead:
		return StartDecision{} // not read this time (the workflow asks for every list WindowLists names)
	case in.Windows.Err != "":
		return StartDecision{Do: StartFail, Why: in.Windows.Err}
	}
	switch next := in.Windows.NextOpen(in.Now); {
	case next.IsZero():
		return StartDecision{Do: StartWait, Until: in.Now.Add(24 * time.Hour), Why: "its maintenance windows do not open within " + OpeningHorizon.String()}
	case next.After(in.Now):
		return StartDecision{Do: StartWait, Until: next, Why: "outside its maintenance window; it opens " + next.UTC().Format(time.RFC3339)}
	}
	return StartDecision{Do: StartWrite}
}

// windowsOf are a Cluster's windows (its own, else the rollout's) and whose they are.
func (s *State) windowsOf(c *Cluster) ([]string, string) {
	if c.Windows != nil {
		return c.Windows, "the Cluster's annotation " + WindowsAnnotation
	}
	return s.Spec.MaintenanceWindows, "spec.maintenanceWindows"
}

// WindowLists are the lists of windows of the Clusters not yet started (and of those followed
// because they held the change, which wait for them if they stop holding it), each once, in
// WindowsKey order: what the next Observation's Windows must hold.
func (s *State) WindowLists() [][]string {
	byKey := map[string][]string{}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		if c.State != Pending && c.State != WaitingForWindow && !(c.Holds && c.InFlight()) {
			continue // one followed because it held the change needs them if it stops holding it
		}
		if texts, _ := s.windowsOf(c); len(texts) > 0 {
			byKey[WindowsKey(texts)] = texts
		}
	}
	keys := slices.Sorted(maps.Keys(byKey))
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// nextDue is the earliest time a timed step is due: a soak's end, a progress deadline, a window
// opening (not while paused or halted), the stage's soak.
func (s *State) nextDue() time.Time {
	var due time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (due.IsZero() || t.Before(due)) {
			due = t
		}
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		switch c.State {
		case Soaking:
			earliest(c.Until)
		case Progressing:
			d := DefaultProgressDeadline
			if pd := s.StageOf(c.Stage).ProgressDeadline; pd != nil {
				d = pd.Duration
			}
			earliest(c.Started.Add(d))
		case WaitingForWindow:
			if !s.Halted && !s.Paused && !s.AnnotationPaused {
				earliest(c.Until)
			}
		}
	}
	if s.Step == StepSoak && !s.Halted {
		earliest(s.StageSoakUntil)
	}
	return due
}

// WriteResult is what writing a Cluster came to.
type WriteResult struct {
	Key string `json:"key"`
	// Generation is the Cluster's generation after the write (or before it, when the change
	// already held and nothing was written).
	Generation int64 `json:"generation,omitempty"`
	// Refused says why admission (or a webhook beside it) refused the change.
	Refused string `json:"refused,omitempty"`
	// Gone: the Cluster no longer exists.
	Gone bool `json:"gone,omitempty"`
}

// Wrote records a write's result: a refused change fails the Cluster, a deleted Cluster is
// skipped, otherwise the rollout follows the generation written.
func (s *State) Wrote(r WriteResult, now time.Time) {
	c := s.cluster(r.Key)
	if c == nil || c.State != Progressing {
		return
	}
	switch {
	case r.Gone:
		s.finish(c, Skipped, "the Cluster was deleted", now)
	case r.Refused != "":
		s.finish(c, Failed, "the change was refused: "+r.Refused, now)
	default:
		c.Generation, c.Message = r.Generation, "written"
	}
}
