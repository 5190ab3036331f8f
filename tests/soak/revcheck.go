package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
)

// Violation kinds of the class-revision rollout phase, in the report's order.
const (
	vRevEarly      = "revision: worker template rotated before the Rollout moved the Cluster"
	vRevOnce       = "revision: Cluster changed other than once (1 -> 2)"
	vRevStageOrder = "revision: Cluster moved before the earlier stage was done"
	vRevPin        = "revision: Cluster pinned to a revision it was not moved to"
	vRevRollout    = "revision: Rollout not completed with every Cluster done"
)

var revViolationKinds = []string{vRevEarly, vRevOnce, vRevStageOrder, vRevPin, vRevRollout}

// revObservation is one poll's view of a revision Cluster: its pin and applied annotations and
// the infrastructure template of each of its MachineDeployments (by topology name). The
// MachineDeployments are listed before the Clusters, and every observation of a round has the
// round's time, so a template seen rotated in a round was rotated before the pin that round shows.
type revObservation struct {
	At           time.Time
	Pin, Applied string
	Templates    map[string]string
}

// revisionRecord is what the soak saw of the class-revision rollout phase.
type revisionRecord struct {
	Class    string   // the class with revisions; its revisions are Class-1 and Class-2
	Clusters []string // the Clusters of the phase
	// Reached is the phase's last step: "", "created" (applied from revision 1), "recorded"
	// (revision 2 recorded), "rolled" (the Rollout completed), "deleted".
	Reached string
	// Before are each Cluster's MachineDeployment infrastructure templates once it was applied
	// from revision 1, before the template edit.
	Before map[string]map[string]string
	// BeforeAt is when each Cluster's Before was seen: its templates are judged from then on.
	BeforeAt map[string]time.Time
	// Observations are each Cluster's polled views, in order, one per change.
	Observations map[string][]revObservation
	// Disk is the edited field (spec.template.spec.disk) of every infrastructure template seen;
	// FromDisk and ToDisk are its value in revision 1 and 2.
	Disk             map[string]string
	FromDisk, ToDisk string
	// Stages are the Rollout's stage names in order; Rollout its last status.
	Stages  []string
	Rollout rolloutv1.RolloutStatus
}

// distinct folds consecutive repeats and drops empty values.
func distinct(values []string) []string {
	var out []string
	for _, v := range values {
		if v != "" && (len(out) == 0 || out[len(out)-1] != v) {
			out = append(out, v)
		}
	}
	return out
}

// checkRevisions compares the phase's record with its invariants: kind -> details.
func checkRevisions(r revisionRecord) map[string][]string {
	out := map[string][]string{}
	add := func(kind, format string, args ...any) { out[kind] = append(out[kind], fmt.Sprintf(format, args...)) }
	rev1, rev2 := revision.Name(r.Class, 1), revision.Name(r.Class, 2)
	finished := r.Reached == "rolled" || r.Reached == "deleted"

	pinAt := map[string]time.Time{}  // first seen pinned to revision 2
	doneAt := map[string]time.Time{} // first seen applied from revision 2
	for _, c := range r.Clusters {
		obs := r.Observations[c]
		var pins, applied []string
		templates := map[string][]string{}
		for md, t := range r.Before[c] {
			templates[md] = []string{t}
		}
		for _, o := range obs {
			pins, applied = append(pins, o.Pin), append(applied, o.Applied)
			if o.Pin != rev1 && o.Pin != rev2 {
				add(vRevPin, "%s: pinned to %q", c, o.Pin)
			}
			if o.Applied != "" && o.Applied != rev1 && o.Applied != rev2 {
				add(vRevPin, "%s: applied from %q", c, o.Applied)
			}
			if o.Pin == rev2 {
				if _, ok := pinAt[c]; !ok {
					pinAt[c] = o.At
				}
			}
			if o.Applied == rev2 {
				if _, ok := doneAt[c]; !ok {
					doneAt[c] = o.At
				}
			}
			for md, t := range o.Templates {
				if o.At.Before(r.BeforeAt[c]) {
					break // before the edit: the Cluster was being created
				}
				if _, ok := r.Before[c][md]; !ok {
					continue // not there before the edit: judged by the MachineDeployments that were
				}
				if o.Pin != rev2 && t != r.Before[c][md] {
					add(vRevEarly, "%s %s: on %s at %s, pinned to %q", c, md, t, o.At.Format("15:04:05"), o.Pin)
				}
				templates[md] = append(templates[md], t)
			}
		}
		if !finished {
			continue
		}
		if p := distinct(pins); !slices.Equal(p, []string{rev1, rev2}) {
			add(vRevOnce, "%s: pins %s, want %s -> %s", c, strings.Join(p, " -> "), rev1, rev2)
		}
		if a := distinct(applied); !slices.Equal(a, []string{rev1, rev2}) {
			add(vRevOnce, "%s: applied %s, want %s -> %s", c, strings.Join(a, " -> "), rev1, rev2)
		}
		if len(obs) == 0 || obs[len(obs)-1].Pin != rev2 || obs[len(obs)-1].Applied != rev2 {
			last := revObservation{}
			if len(obs) > 0 {
				last = obs[len(obs)-1]
			}
			add(vRevPin, "%s: ends pinned to %q, applied %q, want %s", c, last.Pin, last.Applied, rev2)
		}
		if len(r.Before[c]) == 0 {
			add(vRevOnce, "%s: no MachineDeployment seen before the Rollout", c)
		}
		mds := make([]string, 0, len(templates))
		for md := range templates {
			mds = append(mds, md)
		}
		sort.Strings(mds)
		for _, md := range mds {
			seq := distinct(templates[md])
			switch {
			case len(seq) != 2:
				add(vRevOnce, "%s %s: templates %s, want one rotation", c, md, strings.Join(seq, " -> "))
			case r.Disk[seq[0]] != r.FromDisk || r.Disk[seq[1]] != r.ToDisk:
				add(vRevOnce, "%s %s: rotated from disk %q to %q, want %q to %q", c, md, r.Disk[seq[0]], r.Disk[seq[1]], r.FromDisk, r.ToDisk)
			}
		}
	}

	// Stage order, as seen (pins against the applied annotations of the earlier stages) and as
	// the Rollout reports it (stages and Clusters started and finished).
	stageOf := map[string]int{}
	for _, cs := range r.Rollout.Clusters {
		stageOf[cs.Name] = slices.Index(r.Stages, cs.Stage)
	}
	for _, c := range r.Clusters {
		at, ok := pinAt[c]
		if !ok {
			continue
		}
		for _, d := range r.Clusters {
			if stageOf[d] >= stageOf[c] {
				continue
			}
			if done, ok := doneAt[d]; !ok || at.Before(done) {
				add(vRevStageOrder, "%s (stage %d) pinned at %s, %s (stage %d) not done then", c, stageOf[c], at.Format("15:04:05"), d, stageOf[d])
			}
		}
	}
	for i := 1; i < len(r.Rollout.Stages); i++ {
		prev, st := r.Rollout.Stages[i-1], r.Rollout.Stages[i]
		if st.StartedAt != nil && (prev.FinishedAt == nil || st.StartedAt.Before(prev.FinishedAt)) {
			add(vRevStageOrder, "stage %s started before stage %s finished", st.Name, prev.Name)
		}
	}
	for _, cs := range r.Rollout.Clusters {
		for _, earlier := range r.Rollout.Clusters {
			if slices.Index(r.Stages, earlier.Stage) >= slices.Index(r.Stages, cs.Stage) || cs.StartedAt == nil {
				continue
			}
			if earlier.FinishedAt == nil || cs.StartedAt.Before(earlier.FinishedAt) {
				add(vRevStageOrder, "%s (stage %s) started before %s (stage %s) finished", cs.Name, cs.Stage, earlier.Name, earlier.Stage)
			}
		}
	}

	if finished || r.Reached == "recorded" {
		st, n := r.Rollout, int32(len(r.Clusters))
		if st.Phase != rollout.PhaseCompleted || st.Counts.Total != n || st.Counts.Done != n || len(st.Stages) != len(r.Stages) {
			add(vRevRollout, "phase %q, %d/%d done of %d, %d of %d stages", st.Phase, st.Counts.Done, st.Counts.Total, n, len(st.Stages), len(r.Stages))
		}
	}
	return out
}
