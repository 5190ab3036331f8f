package rollout

import (
	"strings"
	"testing"
	"time"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// TestStart: what becomes of a Cluster of the running stage that has not started, from what it
// depends on. t0 is a Wednesday noon (UTC).
func TestStart(t *testing.T) {
	open := WindowOpenings([][]string{{"* 00:00-00:00 UTC"}}, t0)[WindowsKey([]string{"* 00:00-00:00 UTC"})]
	saturday := WindowOpenings([][]string{{"Sat 02:00-06:00 UTC"}}, t0)[WindowsKey([]string{"Sat 02:00-06:00 UTC"})]
	never := Openings{} // no opening within the horizon
	broken := Openings{Err: `unknown time zone "Mars/Olympus"`}
	sat := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   StartInput
		want Starting
		// until and why, for a Cluster that waits or fails
		until time.Time
		why   string
	}{
		{"no windows, a place free: written", StartInput{PlaceFree: true}, StartWrite, time.Time{}, ""},
		{"no place free: stays", StartInput{}, StartNone, time.Time{}, ""},
		{"paused: stays", StartInput{Paused: true, PlaceFree: true}, StartNone, time.Time{}, ""},
		{"inside its window: written", StartInput{PlaceFree: true, Windowed: true, WindowsRead: true, Windows: open}, StartWrite, time.Time{}, ""},
		{"outside its window: waits for the opening", StartInput{PlaceFree: true, Windowed: true, WindowsRead: true, Windows: saturday},
			StartWait, sat, "outside its maintenance window; it opens 2026-11-28T02:00:00Z"},
		{"a window that never opens within the horizon: waits a day", StartInput{PlaceFree: true, Windowed: true, WindowsRead: true, Windows: never},
			StartWait, t0.Add(24 * time.Hour), "do not open within"},
		{"windows not read this time: stays", StartInput{PlaceFree: true, Windowed: true}, StartNone, time.Time{}, ""},
		{"windows that cannot be laid out: fails", StartInput{PlaceFree: true, Windowed: true, WindowsRead: true, Windows: broken},
			StartFail, time.Time{}, "Mars/Olympus"},
		{"holds the change, outside its window: followed", StartInput{Holds: true, PlaceFree: true, Windowed: true, WindowsRead: true, Windows: saturday},
			StartFollow, time.Time{}, ""},
		{"holds the change, windows not read: followed", StartInput{Holds: true, Windowed: true}, StartFollow, time.Time{}, ""},
		{"holds the change, no place free: followed (it takes none)", StartInput{Holds: true}, StartFollow, time.Time{}, ""},
		{"holds the change, paused: stays", StartInput{Holds: true, Paused: true}, StartNone, time.Time{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Now = t0
			got := Start(tc.in)
			if got.Do != tc.want || !got.Until.Equal(tc.until) || !strings.Contains(got.Why, tc.why) {
				t.Errorf("Start = %+v, want %s until %s, why containing %q", got, tc.want, tc.until, tc.why)
			}
		})
	}
}

// TestClustersByState: the status counts each Cluster once by its state: a Cluster whose turn has
// come and that waits for its window is waiting, not changing; written and soaking ones are
// changing.
func TestClustersByState(t *testing.T) {
	s := &State{Spec: rolloutv1.RolloutSpec{Stages: []rolloutv1.Stage{{Name: "all"}}}, Generation: 1}
	for i, st := range []ClusterState{Pending, WaitingForWindow, WaitingForWindow, Progressing, Soaking, Done, Failed, Skipped} {
		s.Clusters = append(s.Clusters, Cluster{Namespace: "fleet", Name: string(rune('a' + i)), State: st, Until: t0.Add(time.Hour)})
	}
	got := s.Status().Counts
	want := rolloutv1.Counts{Total: 8, Pending: 1, Waiting: 2, Changing: 2, Done: 1, Failed: 1, Skipped: 1}
	if got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
}

// windowed is a rollout of n Clusters in one stage (at most limit written at once) whose windows
// open on Saturday (t0 is a Wednesday); those listed hold the change already, at generation 7.
func windowed(t *testing.T, n, limit int, holding ...int) *State {
	t.Helper()
	spec := rolloutv1.RolloutSpec{Change: rolloutv1.Change{Class: "gold-v2"}, MaintenanceWindows: []string{"Sat 02:00-06:00 UTC"},
		Stages: []rolloutv1.Stage{{Name: "all", MaxConcurrent: int32(limit)}}}
	var cands []Candidate
	for i := 0; i < n; i++ {
		c := Candidate{Namespace: "fleet", Name: string(rune('a' + i))}
		for _, h := range holding {
			if h == i {
				c.Holds, c.Generation = true, 7
			}
		}
		cands = append(cands, c)
	}
	s, err := Freeze(spec, 1, cands)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func observe(s *State, now time.Time, seen map[string]Seen) Observation {
	return Observation{Now: now, Generation: 1, Clusters: seen, Windows: WindowOpenings(s.WindowLists(), now)}
}

// TestEveryClusterOutsideItsWindowWaits: while every Cluster waits for its window, none is
// written and the status counts them as waiting (the OutsideWindow condition names them); none
// takes a place of the concurrency limit.
func TestEveryClusterOutsideItsWindowWaits(t *testing.T) {
	s := windowed(t, 3, 1)
	a := s.Advance(observe(s, t0, nil))
	if len(a.Write) != 0 {
		t.Fatalf("wrote %v outside the windows", a.Write)
	}
	st := s.Status()
	if want := (rolloutv1.Counts{Total: 3, Waiting: 3}); st.Counts != want {
		t.Errorf("counts %+v, want %+v", st.Counts, want)
	}
	if !condTrue(st.Conditions, "OutsideWindow") {
		t.Errorf("OutsideWindow not True: %+v", st.Conditions)
	}
	if sat := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC); !a.WakeAt.Equal(sat) {
		t.Errorf("wakes at %s, want when the windows open, %s", a.WakeAt, sat)
	}
}

// TestHoldingClusterIsDoneWithoutItsWindow: a Cluster whose spec already holds the change when the
// rollout starts is not written and waits for no window: it is followed at once and done when it
// is settled, while the others wait for their window. It takes no place of the concurrency limit.
func TestHoldingClusterIsDoneWithoutItsWindow(t *testing.T) {
	s := windowed(t, 3, 1, 1)
	a := s.Advance(observe(s, t0, nil))
	if len(a.Write) != 0 {
		t.Fatalf("wrote %v: nothing is written outside the windows, and the holding Cluster needs no write", a.Write)
	}
	held := s.Clusters[1]
	if held.State != Progressing || held.Generation != 7 || !held.Started.Equal(t0) {
		t.Fatalf("the holding Cluster: %s at generation %d started %s; want followed (Progressing) at generation 7 from now", held.State, held.Generation, held.Started)
	}
	if s.Clusters[0].State != WaitingForWindow || s.Clusters[2].State != WaitingForWindow {
		t.Errorf("the others: %s, %s; want both waiting for their window (the holding Cluster takes no place)", s.Clusters[0].State, s.Clusters[2].State)
	}
	if !a.InFlight {
		t.Error("the holding Cluster is not observed")
	}
	if want := (rolloutv1.Counts{Total: 3, Waiting: 2, Changing: 1}); s.Status().Counts != want {
		t.Errorf("counts %+v, want %+v", s.Status().Counts, want)
	}

	s.Advance(observe(s, t0.Add(time.Minute), map[string]Seen{"fleet/b": {Holds: true, Done: true}}))
	if c := s.Clusters[1]; c.State != Done {
		t.Fatalf("the holding Cluster settled: %s (%s), want Done", c.State, c.Message)
	}
	if want := (rolloutv1.Counts{Total: 3, Waiting: 2, Done: 1}); s.Status().Counts != want {
		t.Errorf("counts %+v, want %+v", s.Status().Counts, want)
	}
	var started string
	for _, e := range s.TakeEvents() {
		if e.Reason == "ClusterStarted" {
			started += e.Message + ";"
		}
	}
	if started != "stage all: fleet/b already holds the change; following it;" {
		t.Errorf("ClusterStarted events %q, want one for the holding Cluster", started)
	}
}

// TestHoldingClusterThatNoLongerHolds: a Cluster followed because it held the change, found not
// to hold it any more, is not failed (the rollout wrote nothing): it is written in its turn, in
// its window.
func TestHoldingClusterThatNoLongerHolds(t *testing.T) {
	s := windowed(t, 1, 1, 0)
	s.Advance(observe(s, t0, nil))
	if s.Clusters[0].State != Progressing {
		t.Fatalf("the holding Cluster: %s, want followed", s.Clusters[0].State)
	}
	s.Advance(observe(s, t0.Add(time.Minute), map[string]Seen{"fleet/a": {Holds: false}}))
	c := s.Clusters[0]
	if c.State != WaitingForWindow || c.Holds || s.Failures() != 0 {
		t.Fatalf("%s (holds %v, failures %d): want waiting for its window, to be written then", c.State, c.Holds, s.Failures())
	}
	sat := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	a := s.Advance(observe(s, sat, nil))
	if len(a.Write) != 1 || a.Write[0] != "fleet/a" {
		t.Errorf("at the window's opening wrote %v, want fleet/a", a.Write)
	}
}

// TestStatusShowsTheClassRevisionFixedAtTheStart: the status names the revision number the
// frozen spec carries (SelectClusters resolved "latest" into it), not the Rollout's "latest".
func TestStatusShowsTheClassRevisionFixedAtTheStart(t *testing.T) {
	spec := rolloutv1.RolloutSpec{Change: rolloutv1.Change{ClassRevision: "3"}, Stages: []rolloutv1.Stage{{Name: "all"}}}
	st, err := Freeze(spec, 1, []Candidate{{Namespace: "ns", Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Status().ClassRevision; got != "3" {
		t.Errorf("status.classRevision = %q, want 3", got)
	}
}
