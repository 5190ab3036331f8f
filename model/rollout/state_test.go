package rollout

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC) // a Wednesday

func ptr[T any](v T) *T { return &v }

func mins(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Minute} }

// fleet drives a State as the workflow does: observe the Clusters in flight, Advance, write, wait
// for the poll interval or the next due time. A written Cluster settles after settle.
type fleet struct {
	t        *testing.T
	s        *State
	now      time.Time
	settle   time.Duration
	written  map[string]time.Time
	refuse   map[string]bool // admission refuses the write
	never    map[string]bool // never settles
	hand     map[string]bool // another manager changes it after the write
	ann      map[string]string
	started  []string // keys in write order
	starts   map[string]time.Time
	finished map[string]time.Time
	// maxInFlight per stage, from the states after each Advance.
	maxInFlight map[int]int
}

func newFleet(t *testing.T, spec rolloutv1.RolloutSpec, n int, labels func(i int) map[string]string) *fleet {
	var cands []Candidate
	for i := 0; i < n; i++ {
		c := Candidate{Namespace: "fleet", Name: fmt.Sprintf("c%02d", i)}
		if labels != nil {
			c.Labels = labels(i)
		}
		cands = append(cands, c)
	}
	s, err := Freeze(spec, 1, cands)
	if err != nil {
		t.Fatal(err)
	}
	return &fleet{t: t, s: s, now: t0, settle: 5 * time.Minute, written: map[string]time.Time{}, refuse: map[string]bool{},
		never: map[string]bool{}, hand: map[string]bool{}, ann: map[string]string{}, starts: map[string]time.Time{},
		finished: map[string]time.Time{}, maxInFlight: map[int]int{}}
}

// step runs one observe-advance-write round and moves the clock on.
func (f *fleet) step() Actions {
	o := Observation{Now: f.now, Generation: 1, Clusters: map[string]Seen{}, Windows: WindowOpenings(f.s.WindowLists(), f.now)}
	FromAnnotations(&o, f.ann)
	for i := range f.s.Clusters {
		c := &f.s.Clusters[i]
		if !c.InFlight() {
			continue
		}
		w := f.written[c.Key()]
		o.Clusters[c.Key()] = Seen{Holds: !f.hand[c.Key()], Done: !f.never[c.Key()] && !f.now.Before(w.Add(f.settle)), Why: "rolling out"}
	}
	a := f.s.Advance(o)
	for _, k := range a.Write {
		refused := ""
		if f.refuse[k] {
			refused = "admission webhook denied the request: spec.topology.version: Invalid value"
		}
		f.s.Wrote(WriteResult{Key: k, Generation: 2, Refused: refused}, f.now)
		f.written[k] = f.now
		f.started = append(f.started, k)
		f.starts[k] = f.now
	}
	inFlight := map[int]int{}
	for i := range f.s.Clusters {
		c := &f.s.Clusters[i]
		if c.InFlight() {
			inFlight[c.Stage]++
		}
		if c.Terminal() && f.finished[c.Key()].IsZero() {
			f.finished[c.Key()] = f.now
		}
	}
	for st, n := range inFlight {
		f.maxInFlight[st] = max(f.maxInFlight[st], n)
	}
	next := f.now.Add(time.Minute) // the poll interval
	if !a.WakeAt.IsZero() && a.WakeAt.Before(next) && a.WakeAt.After(f.now) {
		next = a.WakeAt
	}
	if !a.InFlight && !a.WakeAt.IsZero() && a.WakeAt.After(next) {
		next = a.WakeAt // nothing to poll: sleep until due
	}
	f.now = next
	return a
}

// run steps until the rollout finishes or stops moving (waits for an operator).
func (f *fleet) run(limit int) Actions {
	var a Actions
	for i := 0; i < limit; i++ {
		a = f.step()
		if a.Finished || (!a.InFlight && a.WakeAt.IsZero() && len(a.Write) == 0) {
			return a
		}
	}
	f.t.Fatalf("the rollout did not finish or stop in %d steps: %s", limit, f.s.Phase())
	return a
}

func version(v string) rolloutv1.Change { return rolloutv1.Change{Version: v} }

func TestStagesInOrderWithinConcurrency(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{
		{Name: "canary", Count: ptr[int32](2), MaxConcurrent: 1},
		{Name: "half", Percent: ptr[int32](50), MaxConcurrent: 3},
		{Name: "rest", MaxConcurrent: 5},
	}}
	f := newFleet(t, spec, 12, nil)
	a := f.run(500)
	if !a.Finished || f.s.Phase() != PhaseCompleted {
		t.Fatalf("phase %s, want Completed", f.s.Phase())
	}
	// canary 2, half = ceil(10*50%) = 5, rest 5.
	sizes := map[int]int{}
	for _, c := range f.s.Clusters {
		sizes[c.Stage]++
		if c.State != Done {
			t.Errorf("%s: %s, want Done", c.Key(), c.State)
		}
	}
	if sizes[0] != 2 || sizes[1] != 5 || sizes[2] != 5 {
		t.Errorf("stage sizes %v, want 2, 5, 5", sizes)
	}
	for st, limit := range map[int]int{0: 1, 1: 3, 2: 5} {
		if f.maxInFlight[st] != limit {
			t.Errorf("stage %d: at most %d changing at once, want exactly the limit %d", st, f.maxInFlight[st], limit)
		}
	}
	// The story for `kubectl describe`: every Cluster started and done, every stage, the end.
	reasons := map[string]int{}
	for _, e := range f.s.TakeEvents() {
		reasons[e.Reason]++
	}
	if reasons["ClusterStarted"] != 12 || reasons["ClusterDone"] != 12 || reasons["StageStarted"] != 3 || reasons["StageDone"] != 3 || reasons["Completed"] != 1 {
		t.Errorf("events %v", reasons)
	}
	if len(f.s.TakeEvents()) != 0 {
		t.Error("events taken twice")
	}
	// No Cluster of a stage starts before every Cluster of the stage before is through.
	for _, later := range f.s.Clusters {
		for _, earlier := range f.s.Clusters {
			if earlier.Stage < later.Stage && f.starts[later.Key()].Before(f.finished[earlier.Key()]) {
				t.Errorf("%s (stage %d) started at %s before %s (stage %d) finished at %s", later.Key(), later.Stage,
					f.starts[later.Key()], earlier.Key(), earlier.Stage, f.finished[earlier.Key()])
			}
		}
	}
}

func TestSoakAfterClusterAndStage(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{
		{Name: "one", Count: ptr[int32](1), SoakAfterCluster: mins(10), SoakAfterStage: mins(30)},
		{Name: "two"},
	}}
	f := newFleet(t, spec, 2, nil)
	f.run(500)
	first, second := f.s.Clusters[0], f.s.Clusters[1]
	if got := first.Finished.Sub(first.Started); got < f.settle+10*time.Minute {
		t.Errorf("first Cluster done %s after its write, want at least settle + soak (15m)", got)
	}
	if got := second.Started.Sub(first.Finished); got < 30*time.Minute {
		t.Errorf("second stage started %s after the first was done, want at least the stage soak (30m)", got)
	}
	// Each stage ran from its start to the end of its soak, and the status says when.
	st := f.s.Status()
	if len(st.Stages) != 2 || st.Stages[0].Name != "one" || st.Stages[1].Name != "two" {
		t.Fatalf("status stages %+v, want one and two", st.Stages)
	}
	one, two := f.s.StageTimes[0], f.s.StageTimes[1]
	if !one.Started.Equal(first.Started) || one.Finished.Before(first.Finished.Add(30*time.Minute)) {
		t.Errorf("stage one ran %s to %s; want from its Cluster's start to past its 30m soak after %s", one.Started, one.Finished, first.Finished)
	}
	if !two.Started.Equal(one.Finished) || !two.Finished.Equal(second.Finished) || !st.Stages[1].FinishedAt.Time.Equal(two.Finished) {
		t.Errorf("stage two ran %s to %s (status %v); want from stage one's end to its Cluster's end %s", two.Started, two.Finished, st.Stages[1].FinishedAt, second.Finished)
	}
}

func TestAddLateMatches(t *testing.T) {
	st := rolloutv1.RolloutStatus{ObservedGeneration: 3, Clusters: []rolloutv1.ClusterStatus{{Namespace: "a", Name: "x"}, {Namespace: "a", Name: "y"}}}
	AddLateMatches(&st, []string{"a/y", "b/z", "a/x", "a/w"})
	if fmt.Sprint(st.LateMatches) != "[a/w b/z]" || st.Counts.LateMatches != 2 {
		t.Errorf("late matches %v (%d), want [a/w b/z] (2)", st.LateMatches, st.Counts.LateMatches)
	}
	c := st.Conditions[len(st.Conditions)-1]
	if c.Type != "LateMatches" || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "a/w, b/z") || c.ObservedGeneration != 3 {
		t.Errorf("condition %+v", c)
	}
	var many []string
	for i := range 60 {
		many = append(many, fmt.Sprintf("n/c%02d", i))
	}
	st = rolloutv1.RolloutStatus{}
	AddLateMatches(&st, many)
	if len(st.LateMatches) != MaxLateMatches || st.Counts.LateMatches != 60 {
		t.Errorf("%d named, %d counted; want %d named and 60 counted", len(st.LateMatches), st.Counts.LateMatches, MaxLateMatches)
	}
	st = rolloutv1.RolloutStatus{Clusters: []rolloutv1.ClusterStatus{{Namespace: "a", Name: "x"}}}
	AddLateMatches(&st, []string{"a/x"})
	if len(st.LateMatches) != 0 || st.Conditions[0].Status != metav1.ConditionFalse {
		t.Errorf("none late: %v %+v", st.LateMatches, st.Conditions)
	}
}

func TestUnsettledDuringSoakStartsOver(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{{Name: "all", SoakAfterCluster: mins(10)}}}
	s, _ := Freeze(spec, 1, []Candidate{{Namespace: "a", Name: "x"}})
	s.Advance(Observation{Now: t0})
	s.Wrote(WriteResult{Key: "a/x", Generation: 2}, t0)
	s.Advance(Observation{Now: t0.Add(time.Minute), Clusters: map[string]Seen{"a/x": {Holds: true, Done: true}}})
	if s.Clusters[0].State != Soaking {
		t.Fatalf("state %s, want Soaking", s.Clusters[0].State)
	}
	s.Advance(Observation{Now: t0.Add(5 * time.Minute), Clusters: map[string]Seen{"a/x": {Holds: true, Why: "pool md-0 rolling out"}}})
	if c := s.Clusters[0]; c.State != Progressing || !strings.Contains(c.Message, "md-0") {
		t.Fatalf("state %s (%s), want Progressing again", c.State, c.Message)
	}
	s.Advance(Observation{Now: t0.Add(6 * time.Minute), Clusters: map[string]Seen{"a/x": {Holds: true, Done: true}}})
	a := s.Advance(Observation{Now: t0.Add(11 * time.Minute), Clusters: map[string]Seen{"a/x": {Holds: true, Done: true}}})
	if s.Clusters[0].State != Soaking || !a.WakeAt.Equal(t0.Add(16*time.Minute)) {
		t.Fatalf("state %s wake %s, want Soaking until the soak restarted at 6m ends (16m)", s.Clusters[0].State, a.WakeAt)
	}
}

func TestApprovalGates(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{
		{Name: "canary", Count: ptr[int32](1), ApproveAfter: true},
		{Name: "prod", ApproveBefore: true},
	}}
	f := newFleet(t, spec, 3, nil)
	f.run(100)
	if got := f.s.PendingApproval(); got != "canary/after@gen-1" {
		t.Fatalf("pending approval %q, want canary/after@gen-1", got)
	}
	if f.s.Phase() != PhaseWaitingForApproval || len(f.started) != 1 {
		t.Fatalf("phase %s, %d started; want WaitingForApproval after the canary", f.s.Phase(), len(f.started))
	}
	// A token of another generation or gate opens nothing.
	f.ann[ApproveAnnotation] = "canary/after@gen-2, prod@gen-1x"
	f.run(100)
	if f.s.PendingApproval() != "canary/after@gen-1" {
		t.Fatalf("an approval for another generation opened the gate")
	}
	if err := f.s.Validate(Control{Action: "approve", Token: "prod@gen-1"}); err == nil {
		t.Error("approving a later gate than the one waited at was accepted")
	}
	f.ann[ApproveAnnotation] = "canary/after@gen-1"
	f.run(100)
	// The annotation does not approve the next gate: prod waits for its own.
	if got := f.s.PendingApproval(); got != "prod@gen-1" {
		t.Fatalf("pending approval %q, want prod@gen-1", got)
	}
	if err := f.s.Validate(Control{Action: "approve"}); err != nil {
		t.Fatal(err)
	}
	f.s.Apply(Control{Action: "approve", By: "alice"}, f.now)
	if a := f.run(200); !a.Finished {
		t.Fatalf("phase %s after both approvals, want Completed", f.s.Phase())
	}
	if err := f.s.Validate(Control{Action: "approve"}); err == nil {
		t.Error("an approval after the end was accepted")
	}
}

func TestWindowHoldsOnlyItsCluster(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{{Name: "all", MaxConcurrent: 1}},
		MaintenanceWindows: []string{"* 00:00-00:00 UTC"}}
	f := newFleet(t, spec, 3, nil)
	f.s.Clusters[0].Windows = []string{"Sat 02:00-06:00 UTC"} // its own window: Saturday only
	f.run(1000)
	first := f.s.Clusters[0]
	if first.State != Done || f.started[len(f.started)-1] != first.Key() {
		t.Fatalf("the Cluster with a Saturday window: %s, started order %v; want it last and Done", first.State, f.started)
	}
	if want := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC); !first.Started.Equal(want) {
		t.Errorf("started %s, want when its window opens, %s", first.Started, want)
	}
	for _, c := range f.s.Clusters[1:] {
		if !c.Started.Before(t0.Add(time.Hour)) {
			t.Errorf("%s started %s: held by another Cluster's window", c.Key(), c.Started)
		}
	}
}

// TestWindowsComeFromTheObservation: the state reads no time zone itself; a Cluster whose windows
// the observation does not carry waits, and one whose annotation cannot be read fails naming it.
func TestWindowsComeFromTheObservation(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{{Name: "all", MaxConcurrent: 2}},
		MaintenanceWindows: []string{"* 00:00-00:00 UTC"}}
	f := newFleet(t, spec, 2, nil)
	f.s.Clusters[1].Windows = []string{"Sat 02:00-06:00 Mars/Olympus"}
	if got, want := f.s.WindowLists(), [][]string{{"* 00:00-00:00 UTC"}, {"Sat 02:00-06:00 Mars/Olympus"}}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("WindowLists = %q, want %q", got, want)
	}
	a := f.s.Advance(Observation{Now: t0, Generation: 1})
	if len(a.Write) != 0 || f.s.Clusters[0].State != Pending {
		t.Fatalf("without the windows' openings: wrote %v, first Cluster %s; want nothing written", a.Write, f.s.Clusters[0].State)
	}
	a = f.s.Advance(Observation{Now: t0, Generation: 1, Windows: WindowOpenings(f.s.WindowLists(), t0)})
	if fmt.Sprint(a.Write) != "[fleet/c00]" {
		t.Errorf("wrote %v, want the Cluster whose window is open", a.Write)
	}
	if c := f.s.Clusters[1]; c.State != Failed || !strings.Contains(c.Message, WindowsAnnotation) || !strings.Contains(c.Message, "Mars/Olympus") {
		t.Errorf("the Cluster with an unreadable window: %s %q, want Failed naming its annotation", c.State, c.Message)
	}
	if got := f.s.WindowLists(); len(got) != 0 {
		t.Errorf("WindowLists after both left Pending = %q, want none", got)
	}
}

func TestFailureBudgetHaltsAndResumeForgives(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), FailureBudget: 1,
		Stages: []rolloutv1.Stage{{Name: "all", MaxConcurrent: 1, ProgressDeadline: &metav1.Duration{Duration: 20 * time.Minute}}}}
	f := newFleet(t, spec, 5, nil)
	f.refuse["fleet/c00"] = true
	f.never["fleet/c01"] = true
	f.run(500)
	if f.s.Phase() != PhaseHalted {
		t.Fatalf("phase %s, want Halted after two failures with a budget of one", f.s.Phase())
	}
	if len(f.started) != 2 {
		t.Fatalf("%d Clusters written, want 2: nothing starts past the budget", len(f.started))
	}
	if c := f.s.Clusters[1]; !strings.Contains(c.Message, "progress deadline (20m0s)") {
		t.Errorf("c01 message %q, want the deadline named", c.Message)
	}
	reasons := map[string]int{}
	for _, e := range f.s.TakeEvents() {
		if e.Warning {
			reasons[e.Reason]++
		}
	}
	if reasons["ClusterFailed"] != 2 || reasons["Halted"] != 1 {
		t.Errorf("warning events %v, want two ClusterFailed and one Halted", reasons)
	}
	st := f.s.Status()
	if st.Counts.Failed != 2 || !condTrue(st.Conditions, "Halted") {
		t.Errorf("status counts %+v, Halted %v", st.Counts, condTrue(st.Conditions, "Halted"))
	}
	if err := f.s.Validate(Control{Action: "resume"}); err != nil {
		t.Fatal(err)
	}
	f.s.Apply(Control{Action: "resume"}, f.now)
	if a := f.run(500); !a.Finished || f.s.Failures() != 0 {
		t.Fatalf("after resume: phase %s, failures %d; want Completed with the old failures forgiven", f.s.Phase(), f.s.Failures())
	}
}

func TestHandChangeFails(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), FailureBudget: 5, Stages: []rolloutv1.Stage{{Name: "all"}}}
	f := newFleet(t, spec, 2, nil)
	f.hand["fleet/c00"] = true
	f.run(100)
	if c := f.s.Clusters[0]; c.State != Failed || !strings.Contains(c.Message, "another field manager") {
		t.Errorf("c00: %s %q, want Failed by a hand change", c.State, c.Message)
	}
	if f.s.Clusters[1].State != Done {
		t.Errorf("c01: %s, want Done", f.s.Clusters[1].State)
	}
}

func TestPauseSkipAbort(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{{Name: "all", MaxConcurrent: 1}}}
	f := newFleet(t, spec, 4, nil)
	f.step() // c00 written
	f.s.Apply(Control{Action: "pause"}, f.now)
	f.run(100)
	if len(f.started) != 1 || f.s.Clusters[0].State != Done || f.s.Phase() != PhasePaused {
		t.Fatalf("paused: %d started, c00 %s, phase %s; want the running change finished and nothing new", len(f.started), f.s.Clusters[0].State, f.s.Phase())
	}
	if err := f.s.Validate(Control{Action: "skip", Cluster: "fleet/c01"}); err != nil {
		t.Fatal(err)
	}
	f.s.Apply(Control{Action: "skip", Cluster: "fleet/c01", By: "bob"}, f.now)
	if err := f.s.Validate(Control{Action: "skip", Cluster: "fleet/c00"}); err == nil {
		t.Error("skipping a Cluster already done was accepted")
	}
	if err := f.s.Validate(Control{Action: "skip", Cluster: "other/x"}); err == nil {
		t.Error("skipping a Cluster the rollout did not select was accepted")
	}
	// The annotation pauses too; resume by command does not lift it.
	f.s.Apply(Control{Action: "resume"}, f.now)
	f.ann[PausedAnnotation] = "true"
	f.run(10)
	if err := f.s.Validate(Control{Action: "resume"}); err == nil || !strings.Contains(err.Error(), PausedAnnotation) {
		t.Errorf("resume while paused by annotation: %v, want the annotation named", err)
	}
	delete(f.ann, PausedAnnotation)
	f.step() // c02 written
	f.ann[AbortAnnotation] = "true"
	if a := f.step(); !a.Finished || f.s.Phase() != PhaseAborted {
		t.Fatalf("phase %s, want Aborted", f.s.Phase())
	}
	if got := []ClusterState{f.s.Clusters[1].State, f.s.Clusters[2].State, f.s.Clusters[3].State}; got[0] != Skipped || got[1] != Progressing || got[2] != Pending {
		t.Errorf("after abort: %v, want c01 skipped, c02 left as it was, c03 never touched", got)
	}
	if len(f.started) != 2 {
		t.Errorf("%d written, want 2", len(f.started))
	}
}

func condTrue(cs []metav1.Condition, t string) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

func TestFreeze(t *testing.T) {
	env := func(i int) map[string]string {
		return map[string]string{"env": []string{"dev", "staging", "prod"}[i%3]}
	}
	sel := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"env": v}}
	}
	tests := []struct {
		name    string
		stages  []rolloutv1.Stage
		want    string // stage index per Cluster c00..c08, "-" for none
		wantErr string
	}{
		{"selectors", []rolloutv1.Stage{{Name: "dev", Selector: sel("dev")}, {Name: "prod", Selector: sel("prod")}}, "0-10-10-1", ""},
		{"count then rest", []rolloutv1.Stage{{Name: "a", Count: ptr[int32](2)}, {Name: "b"}}, "001111111", ""},
		{"percent of the remaining, rounded up", []rolloutv1.Stage{{Name: "a", Percent: ptr[int32](10)}, {Name: "b", Percent: ptr[int32](50)}, {Name: "c"}}, "011112222", ""},
		{"selector then rest", []rolloutv1.Stage{{Name: "dev", Selector: sel("dev")}, {Name: "rest"}}, "011011011", ""},
		{"overlap", []rolloutv1.Stage{{Name: "dev", Selector: sel("dev")}, {Name: "any", Selector: &metav1.LabelSelector{}}}, "", "fleet/c00 (stages dev, any)"},
	}
	for _, tt := range tests {
		var cands []Candidate
		for i := 8; i >= 0; i-- { // out of order: Freeze orders them
			cands = append(cands, Candidate{Namespace: "fleet", Name: fmt.Sprintf("c%02d", i), Labels: env(i)})
		}
		s, err := Freeze(rolloutv1.RolloutSpec{Stages: tt.stages}, 1, cands)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := ""
		for i, c := range s.Clusters {
			if c.Name != fmt.Sprintf("c%02d", i) {
				t.Fatalf("%s: order %v", tt.name, s.Clusters)
			}
			if c.Stage < 0 {
				got += "-"
				if c.State != Skipped {
					t.Errorf("%s: %s in no stage is %s, want Skipped", tt.name, c.Key(), c.State)
				}
			} else {
				got += fmt.Sprint(c.Stage)
			}
		}
		if got != tt.want {
			t.Errorf("%s: stages %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestApprovalBeforeTheFirstStage: a gate before the first stage holds from the start, shows as
// pending, and nothing is written until it is approved.
func TestApprovalBeforeTheFirstStage(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: version("v1.35.0"), Stages: []rolloutv1.Stage{{Name: "all", ApproveBefore: true}}}
	f := newFleet(t, spec, 2, nil)
	f.run(10)
	if got := f.s.PendingApproval(); got != "all@gen-1" || f.s.Phase() != PhaseWaitingForApproval || len(f.started) != 0 {
		t.Fatalf("pending %q, phase %s, %d written; want all@gen-1, WaitingForApproval, none", got, f.s.Phase(), len(f.started))
	}
	if st := f.s.Status(); st.PendingApproval != "all@gen-1" || !condTrue(st.Conditions, "WaitingForApproval") {
		t.Errorf("status %+v", st)
	}
	f.s.Apply(Control{Action: "approve"}, f.now)
	if a := f.run(100); !a.Finished || len(f.started) != 2 {
		t.Fatalf("after the approval: phase %s, %d written", f.s.Phase(), len(f.started))
	}
}

// TestNotStartedEvent: waiting for an older Rollout is told as Normal, any other reason not to
// start as a Warning.
func TestNotStartedEvent(t *testing.T) {
	if e := (NotStarting{Why: "waiting for Rollout a/older to end", Waiting: true}).Event(); e.Warning || e.Reason != "Waiting" {
		t.Errorf("waiting: %+v", e)
	}
	if e := (NotStarting{Why: "admission would refuse the change for a/x: no"}).Event(); !e.Warning || e.Reason != "NotStarted" {
		t.Errorf("refused: %+v", e)
	}
}
