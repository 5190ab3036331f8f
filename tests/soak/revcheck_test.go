package main

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
)

// revisionRun builds a clean record: three Clusters applied from revision 1, then r1 (stage
// "first") pinned to 2, rotated and applied, then r2 and r3 (stage "rest") the same.
func revisionRun() revisionRecord {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	mt := func(s int) *metav1.Time { t := metav1.NewTime(at(s)); return &t }
	r := revisionRecord{Class: "q", Clusters: []string{"r1", "r2", "r3"}, Reached: "deleted", FromDisk: "hdd", ToDisk: "ssd",
		Stages: revisionStages, Before: map[string]map[string]string{}, BeforeAt: map[string]time.Time{},
		Observations: map[string][]revObservation{}, Disk: map[string]string{}}
	tmpl := func(c, md string, n int) string {
		name := c + "-" + md + "-" + string(rune('a'+n))
		r.Disk[name] = []string{"hdd", "ssd"}[n]
		return name
	}
	r.Rollout = rolloutv1.RolloutStatus{Phase: rollout.PhaseCompleted, Counts: rolloutv1.Counts{Total: 3, Done: 3},
		Stages: []rolloutv1.StageStatus{{Name: "first", StartedAt: mt(10), FinishedAt: mt(14)}, {Name: "rest", StartedAt: mt(15), FinishedAt: mt(20)}}}
	for i, c := range r.Clusters {
		old := map[string]string{"md-0": tmpl(c, "md-0", 0), "md-1": tmpl(c, "md-1", 0)}
		moved := map[string]string{"md-0": tmpl(c, "md-0", 1), "md-1": tmpl(c, "md-1", 1)}
		r.Before[c], r.BeforeAt[c] = old, at(5)
		start := 10 // r1 in the first stage, r2 and r3 after it
		stage := "first"
		if i > 0 {
			start, stage = 15, "rest"
		}
		r.Observations[c] = []revObservation{
			{At: at(1), Pin: "q-1"},
			{At: at(3), Pin: "q-1", Applied: "q-1", Templates: old},
			{At: at(start + 1), Pin: "q-2", Applied: "q-1", Templates: old},
			{At: at(start + 2), Pin: "q-2", Applied: "q-1", Templates: moved},
			{At: at(start + 3), Pin: "q-2", Applied: "q-2", Templates: moved},
		}
		r.Rollout.Clusters = append(r.Rollout.Clusters, rolloutv1.ClusterStatus{Name: c, Stage: stage, State: string(rollout.Done),
			StartedAt: mt(start + 1), FinishedAt: mt(start + 3)})
	}
	return r
}

// TestCheckRevisions: a clean phase has no violation; each broken invariant is reported under its kind.
func TestCheckRevisions(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*revisionRecord)
		kinds []string
	}{
		{name: "clean", edit: func(*revisionRecord) {}},
		{name: "templates changing while the Cluster was created are not judged", edit: func(r *revisionRecord) {
			r.Observations["r1"][1].Templates = map[string]string{"md-0": "r1-md-0-z", "md-1": "r1-md-1-z"}
		}},
		{name: "the edit rotated a worker template", kinds: []string{vRevEarly, vRevOnce}, edit: func(r *revisionRecord) {
			o := r.Observations["r2"]
			early := revObservation{At: o[1].At.Add(4 * time.Second), Pin: "q-1", Applied: "q-1", Templates: o[3].Templates}
			r.Observations["r2"] = append([]revObservation{o[0], o[1], early}, o[2:]...)
		}},
		{name: "rotated before the pin moved (same round)", kinds: []string{vRevEarly}, edit: func(r *revisionRecord) {
			r.Observations["r3"][2].Pin = "q-1"
			r.Observations["r3"][2].Templates = r.Observations["r3"][3].Templates
		}},
		{name: "a MachineDeployment rotated twice", kinds: []string{vRevOnce}, edit: func(r *revisionRecord) {
			o := r.Observations["r1"]
			again := o[4]
			again.At = again.At.Add(time.Second)
			again.Templates = map[string]string{"md-0": "r1-md-0-x", "md-1": o[4].Templates["md-1"]}
			r.Disk["r1-md-0-x"] = "ssd"
			r.Observations["r1"] = append(o, again)
		}},
		{name: "rotated to a template of the wrong content", kinds: []string{vRevOnce}, edit: func(r *revisionRecord) {
			r.Disk[r.Observations["r2"][4].Templates["md-1"]] = "hdd"
		}},
		{name: "never rotated", kinds: []string{vRevOnce}, edit: func(r *revisionRecord) {
			for i := range r.Observations["r3"] {
				if r.Observations["r3"][i].Templates != nil {
					r.Observations["r3"][i].Templates = r.Before["r3"]
				}
			}
		}},
		{name: "pin moved back and forth", kinds: []string{vRevOnce}, edit: func(r *revisionRecord) {
			o := r.Observations["r1"]
			back := o[2]
			back.Pin = "q-1"
			r.Observations["r1"] = append([]revObservation{o[0], o[1], o[2], back}, o[3:]...)
		}},
		{name: "a later stage pinned before the first was done", kinds: []string{vRevStageOrder}, edit: func(r *revisionRecord) {
			r.Observations["r2"][2].At = r.Observations["r1"][3].At
		}},
		{name: "the Rollout's stages overlap", kinds: []string{vRevStageOrder}, edit: func(r *revisionRecord) {
			r.Rollout.Stages[1].StartedAt = r.Rollout.Stages[0].StartedAt
		}},
		{name: "a Cluster of the later stage started before the first finished", kinds: []string{vRevStageOrder}, edit: func(r *revisionRecord) {
			r.Rollout.Clusters[2].StartedAt = r.Rollout.Clusters[0].StartedAt
		}},
		{name: "pinned to a revision never asked for", kinds: []string{vRevPin, vRevOnce}, edit: func(r *revisionRecord) {
			r.Observations["r3"][2].Pin = "q-3"
		}},
		{name: "ends applied from revision 1", kinds: []string{vRevOnce, vRevPin}, edit: func(r *revisionRecord) {
			r.Observations["r2"] = r.Observations["r2"][:4]
		}},
		{name: "the Rollout did not complete", kinds: []string{vRevRollout}, edit: func(r *revisionRecord) {
			r.Rollout.Phase, r.Rollout.Counts.Done = rollout.PhaseProgressing, 2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := revisionRun()
			tt.edit(&r)
			v := checkRevisions(r)
			kinds := []string{}
			for k := range v {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			want := append([]string{}, tt.kinds...)
			sort.Strings(want)
			assert.Equal(t, want, kinds, "%v", v)
		})
	}
}

// TestCheckRevisionsUnfinished: a phase that stopped before the Rollout is judged on what it did.
func TestCheckRevisionsUnfinished(t *testing.T) {
	r := revisionRun()
	r.Reached = "created"
	r.Rollout = rolloutv1.RolloutStatus{}
	for c, o := range r.Observations {
		r.Observations[c] = o[:2]
	}
	assert.Empty(t, checkRevisions(r))
}
