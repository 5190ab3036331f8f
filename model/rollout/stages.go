package rollout

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
)

// Candidate is a Cluster the rollout's selector matched when it started.
type Candidate struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	// Windows is the Cluster's own maintenance windows (annotation topoflow.dev/maintenance-windows);
	// nil: the rollout's.
	Windows []string `json:"windows,omitempty"`
	// Holds: its spec.topology already holds the change (see Holds), at Generation: its turn
	// needs no write, and it does not wait for a window.
	Holds      bool  `json:"holds,omitempty"`
	Generation int64 `json:"generation,omitempty"`
}

// Key is "namespace/name".
func (c Candidate) Key() string { return c.Namespace + "/" + c.Name }

// Freeze orders the selection by namespace and name and gives each Cluster its stage: a stage
// with a selector takes the remaining Clusters it matches, count the next ones, percent that
// share of the remaining (rounded up), none all that remain. A Cluster that two stage selectors
// match is an error naming it (the stages overlap); one that no stage takes is reported as
// skipped.
func Freeze(spec rolloutv1.RolloutSpec, generation int64, cands []Candidate) (*State, error) {
	cands = append([]Candidate(nil), cands...)
	sort.Slice(cands, func(i, j int) bool { return cands[i].Key() < cands[j].Key() })
	if err := overlaps(spec.Stages, cands); err != nil {
		return nil, err
	}
	s := &State{Spec: spec, Generation: generation, Step: StepApproveBefore}
	taken := make([]bool, len(cands))
	stageOf := make([]int, len(cands))
	for si, st := range spec.Stages {
		remaining := 0
		for i := range cands {
			if !taken[i] {
				remaining++
			}
		}
		want := remaining
		switch {
		case st.Count != nil:
			want = min(int(*st.Count), remaining)
		case st.Percent != nil:
			want = (remaining*int(*st.Percent) + 99) / 100
		}
		sel := labels.Everything()
		if st.Selector != nil {
			sel, _ = metav1.LabelSelectorAsSelector(st.Selector) // checked by Validate
		}
		for i := range cands {
			if want == 0 {
				break
			}
			if !taken[i] && sel.Matches(labels.Set(cands[i].Labels)) {
				taken[i], stageOf[i] = true, si
				want--
			}
		}
	}
	for i, c := range cands {
		cl := Cluster{Namespace: c.Namespace, Name: c.Name, Windows: c.Windows, Stage: stageOf[i], State: Pending}
		if c.Holds {
			cl.Holds, cl.Generation = true, c.Generation
		}
		if !taken[i] {
			cl.Stage, cl.State, cl.Message = -1, Skipped, "no stage takes it"
		}
		s.Clusters = append(s.Clusters, cl)
	}
	return s, nil
}

// overlaps reports the Clusters that two stage selectors match.
func overlaps(stages []rolloutv1.Stage, cands []Candidate) error {
	var bad []string
	for _, c := range cands {
		var hit []string
		for _, st := range stages {
			if st.Selector == nil {
				continue
			}
			if sel, err := metav1.LabelSelectorAsSelector(st.Selector); err == nil && sel.Matches(labels.Set(c.Labels)) {
				hit = append(hit, st.Name)
			}
		}
		if len(hit) > 1 {
			bad = append(bad, fmt.Sprintf("%s (stages %s)", c.Key(), strings.Join(hit, ", ")))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("stage selectors overlap: %s", ListSome(bad, 10))
	}
	return nil
}

// ListSome joins up to n items and says how many more there are.
func ListSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
