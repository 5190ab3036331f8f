package main

import (
	"context"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/workflows"
)

// rolloutTo is the version the fleet rollout moves to (a patch above upgradeTo).
const rolloutTo = "v1.32.1"

// benchStage is one stage of the bench's Rollout.
type benchStage struct {
	name          string
	percent       int32 // 0: the first takes one Cluster, the last the rest
	maxConcurrent int32
}

var benchStages = []benchStage{{"canary", 0, 1}, {"early", 10, 5}, {"main", 50, 20}, {"rest", 0, 50}}

// benchSoak is each stage's soak.
const benchSoak = 10 * time.Second

type rolloutResult struct {
	Stages int
	Took   time.Duration
	// Single is the canary's upgrade, one Cluster alone: from the bench seeing the rollout's
	// write to the Cluster's topology reported reconciled for it.
	Single time.Duration
	// Bound is the least the rollout can take: per stage, its batches (Clusters over the
	// concurrency limit, rounded up) times Single, plus the soaks.
	Bound             time.Duration
	History           int64
	RequestsPerSecond float64
	// Writes are the worker's writes per Cluster of the fleet, by verb and resource.
	Writes map[string]float64
	// CPU is where the CPU time of the rollout went (see cpuShare); CPUPerCluster is all of it
	// (the stack, the bench and its simulated providers; soaks included) over the Clusters moved.
	CPU           string
	CPUPerCluster float64
	// PerStage is each stage's time against its bound.
	PerStage []stageResult
}

// clusters is how many Clusters the rollout moved, over its stages.
func (r rolloutResult) clusters() int {
	n := 0
	for _, s := range r.PerStage {
		n += s.Clusters
	}
	return n
}

// stageResult is one stage of the rollout: its Clusters, its time (second-granular, as the
// Rollout's status records it) and its bound (batches times Single, plus the soak).
type stageResult struct {
	Name              string
	Clusters, Batches int
	Took, Bound       time.Duration
	// Upgrades are its Clusters' upgrade times (as Single, each among the others of its batch).
	Upgrades latencies
	// Busy is the stage's upgrades from end to end: from the first Cluster written to the last
	// one done. The rest of Took is the soak and the rollout's own time (Own): reading, deciding
	// and writing before the first Cluster, seeing the last one done, starting the soak.
	Busy time.Duration
	// InFlight is the mean number of the stage's Clusters upgrading at once while it was busy,
	// against the stage's limit (Limit): how full the rollout kept its slots.
	InFlight float64
	Limit    int32
}

// Own is the part of the stage that is neither its upgrades nor its soak.
func (s stageResult) Own() time.Duration { return s.Took - s.Busy - benchSoak }

// PerSecond is the stage's upgrades per second while it was busy.
func (s stageResult) PerSecond() float64 {
	return float64(len(s.Upgrades)) / max(s.Busy.Seconds(), 1e-9)
}

// busySpan is one stage's upgrades seen from outside: the first write, the last done.
type busySpan struct{ first, last time.Time }

func (b *busySpan) add(r *rolledTimes) {
	if b.first.IsZero() || r.written.Before(b.first) {
		b.first = r.written
	}
	if r.reconciled.After(b.last) {
		b.last = r.reconciled
	}
}

// rolloutAll moves the fleet to rolloutTo with a Rollout of four stages and short soaks.
func (f *fleet) rolloutAll(ctx context.Context) (rolloutResult, error) {
	before, err := scrapeRequests(f.metrics)
	if err != nil {
		return rolloutResult{}, err
	}
	writes, err := scrapeWrites(f.metrics)
	if err != nil {
		return rolloutResult{}, err
	}
	var stages []any
	for i, s := range benchStages {
		st := map[string]any{"name": s.name, "maxConcurrent": int64(s.maxConcurrent), "soakAfterStage": benchSoak.String()}
		switch {
		case i == 0:
			st["count"] = int64(1)
		case s.percent > 0:
			st["percent"] = int64(s.percent)
		}
		stages = append(stages, st)
	}
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "bench", "namespace": f.ns},
		"spec": map[string]any{"clusters": map[string]any{"selector": map[string]any{}},
			"change": map[string]any{"version": rolloutTo}, "stages": stages},
	}}
	start := time.Now()
	cpu := f.cpuSeconds()
	if _, err := f.kc.Dynamic.Resource(kube.Rollouts).Namespace(f.ns).Create(ctx, r, metav1.CreateOptions{}); err != nil {
		return rolloutResult{}, err
	}
	ro := &rolloutv1.Rollout{}
	deadline := time.Now().Add(f.o.timeout)
	for ro.Status.Phase != rollout.PhaseCompleted {
		if time.Now().After(deadline) {
			return rolloutResult{}, fmt.Errorf("rollout not completed after %s: %s %+v", f.o.timeout, ro.Status.Phase, ro.Status.Counts)
		}
		select {
		case <-ctx.Done():
			return rolloutResult{}, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if err := f.kc.GetTyped(ctx, kube.Rollouts, f.ns, "bench", ro); err != nil {
			return rolloutResult{}, err
		}
	}
	res := rolloutResult{Stages: len(benchStages), Took: time.Since(start)}
	cpuAfter := f.cpuSeconds()
	res.CPU = cpuShare(cpu, cpuAfter, res.Took)
	for name, v := range cpuAfter {
		res.CPUPerCluster += (v - cpu[name]) / float64(max(1, len(ro.Status.Clusters)))
	}
	after, err := scrapeRequests(f.metrics)
	if err != nil {
		return res, err
	}
	for verb, v := range after {
		if verb != "watch" {
			res.RequestsPerSecond += (v - before[verb]) / res.Took.Seconds()
		}
	}
	if after, err := scrapeWrites(f.metrics); err == nil {
		res.Writes = perCluster(writes, after, len(ro.Status.Clusters))
	}
	perStage := map[string]int{}
	upgrades := map[string]latencies{}
	busy := map[string]*busySpan{}
	f.mu.Lock()
	for _, c := range ro.Status.Clusters {
		perStage[c.Stage]++
		if r := f.rolled[c.Name]; r != nil && !r.reconciled.IsZero() {
			upgrades[c.Stage] = append(upgrades[c.Stage], r.reconciled.Sub(r.written))
			if busy[c.Stage] == nil {
				busy[c.Stage] = &busySpan{}
			}
			busy[c.Stage].add(r)
		}
	}
	f.mu.Unlock()
	if canary := upgrades[benchStages[0].name]; len(canary) == 1 {
		res.Single = canary[0]
	} else {
		return res, fmt.Errorf("the canary's upgrade was not seen (%d)", len(canary))
	}
	took := map[string]time.Duration{}
	for _, s := range ro.Status.Stages {
		if s.StartedAt != nil && s.FinishedAt != nil {
			took[s.Name] = s.FinishedAt.Sub(s.StartedAt.Time)
		}
	}
	for _, s := range benchStages {
		batches := int(math.Ceil(float64(perStage[s.name]) / float64(s.maxConcurrent)))
		bound := time.Duration(batches)*res.Single + benchSoak
		res.Bound += bound
		st := stageResult{Name: s.name, Clusters: perStage[s.name], Batches: batches, Took: took[s.name], Bound: bound, Upgrades: upgrades[s.name], Limit: s.maxConcurrent}
		if b := busy[s.name]; b != nil {
			st.Busy = b.last.Sub(b.first)
			st.InFlight = st.Upgrades.sum().Seconds() / max(st.Busy.Seconds(), 1e-9)
		}
		res.PerStage = append(res.PerStage, st)
	}
	d, err := f.tc.DescribeWorkflowExecution(ctx, workflows.RolloutWorkflowID(f.ns, "bench"), "")
	if err != nil {
		return res, err
	}
	res.History = d.GetWorkflowExecutionInfo().GetHistoryLength()
	return res, nil
}
