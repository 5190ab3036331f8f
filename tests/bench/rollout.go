package main

import (
	"context"
	"fmt"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities/kube"
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
	// Single is the canary's upgrade, from its write to done: one Cluster alone.
	Single time.Duration
	// Bound is the least the rollout can take: per stage, its batches (Clusters over the
	// concurrency limit, rounded up) times Single, plus the soaks.
	Bound             time.Duration
	History           int64
	RequestsPerSecond float64
}

// rolloutAll moves the fleet to rolloutTo with a Rollout of four stages and short soaks.
func (f *fleet) rolloutAll(ctx context.Context) (rolloutResult, error) {
	before, err := scrapeRequests(f.metrics)
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
	after, err := scrapeRequests(f.metrics)
	if err != nil {
		return res, err
	}
	for verb, v := range after {
		if verb != "watch" {
			res.RequestsPerSecond += (v - before[verb]) / res.Took.Seconds()
		}
	}
	perStage := map[string]int{}
	for _, c := range ro.Status.Clusters {
		perStage[c.Stage]++
		if c.Stage == benchStages[0].name && c.StartedAt != nil && c.FinishedAt != nil {
			res.Single = c.FinishedAt.Sub(c.StartedAt.Time)
		}
	}
	for _, s := range benchStages {
		batches := math.Ceil(float64(perStage[s.name]) / float64(s.maxConcurrent))
		res.Bound += time.Duration(batches)*res.Single + benchSoak
	}
	d, err := f.tc.DescribeWorkflowExecution(ctx, workflows.RolloutWorkflowID(f.ns, "bench"), "")
	if err != nil {
		return res, err
	}
	res.History = d.GetWorkflowExecutionInfo().GetHistoryLength()
	return res, nil
}
