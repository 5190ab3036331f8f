package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// The versions every soak Cluster goes through: created at from, upgraded to target with the
// control plane stepping through via (the class lists kubernetesVersions), the pools straight.
const (
	fromVersion   = "v1.31.2"
	viaVersion    = "v1.32.4"
	targetVersion = "v1.33.1"
)

// expectedHooks is one Cluster's life in hook calls, "Hook(version)", in Cluster API's order,
// consecutive repeats (blocked or failed calls) folded.
var expectedHooks = []string{
	hooksv1.BeforeClusterCreate + "()", hooksv1.AfterControlPlaneInitialized + "()",
	hooksv1.BeforeClusterUpgrade + "(" + targetVersion + ")",
	hooksv1.BeforeControlPlaneUpgrade + "(" + viaVersion + ")", hooksv1.AfterControlPlaneUpgrade + "(" + viaVersion + ")",
	hooksv1.BeforeControlPlaneUpgrade + "(" + targetVersion + ")", hooksv1.AfterControlPlaneUpgrade + "(" + targetVersion + ")",
	hooksv1.BeforeWorkersUpgrade + "(" + targetVersion + ")", hooksv1.AfterWorkersUpgrade + "(" + targetVersion + ")",
	hooksv1.AfterClusterUpgrade + "(" + targetVersion + ")",
	hooksv1.BeforeClusterDelete + "()",
}

// Violation kinds, in the report's order.
const (
	vHookOrder      = "hook order"
	vVersionSteps   = "version steps"
	vHookBeforeMove = "part moved before its hook passed"
	vLeftAfter      = "objects left after delete"
	vWorkflowLeft   = "workflow still running after delete"
	vRolloutWrites  = "rollout changed a Cluster other than once"
	vRolloutLeft    = "Rollout left after its Cluster was deleted"
)

var violationKinds = []string{vHookOrder, vVersionSteps, vHookBeforeMove, vLeftAfter, vWorkflowLeft, vRolloutWrites, vRolloutLeft}

// clusterRecord is what the soak saw of one Cluster.
type clusterRecord struct {
	Name string
	// Calls are the extension's calls about this Cluster; Transitions the versions its parts
	// reported (control plane and pools), both in order.
	Calls       []extension.Call
	Transitions []provider.Transition
	// Reached is the last stage reached: "", "created", "upgraded", "deleted".
	Reached string
	// Left are the objects of the Cluster still present after it was deleted.
	Left []string
	// WorkflowRunning says the Cluster's workflow still runs after the delete.
	WorkflowRunning bool
	Done            time.Time
	// ViaRollout: the upgrade was a Rollout's (one stage, this Cluster); Generations is how far
	// the Cluster's generation moved from the Rollout's creation to its completion (one write:
	// 1); RolloutLeft says the Rollout was still there after its deletion.
	ViaRollout  bool
	Generations int64
	RolloutLeft bool
}

// verdict is what one Cluster's record says.
type verdict struct {
	Violations map[string][]string // kind -> details
	// DuplicatePasses counts calls made after the same hook (Cluster, version) had passed.
	DuplicatePasses int
}

func hookKey(c extension.Call) string { return c.Hook + "(" + c.Version() + ")" }

// check compares a finished Cluster's record with the invariants.
func check(r clusterRecord) verdict {
	v := verdict{Violations: map[string][]string{}}
	add := func(kind, format string, args ...any) {
		v.Violations[kind] = append(v.Violations[kind], fmt.Sprintf(format, args...))
	}
	var order []string
	passed := map[string]time.Time{}
	for _, c := range r.Calls {
		k := hookKey(c)
		if len(order) == 0 || order[len(order)-1] != k {
			order = append(order, k)
		}
		if _, ok := passed[k]; ok {
			v.DuplicatePasses++
		} else if c.Passed() {
			passed[k] = c.At
		}
	}
	want := expectedHooks
	if r.Reached != "deleted" {
		want = want[:min(len(want), len(order))]
	}
	if !slices.Equal(order, want) {
		add(vHookOrder, "%s: hooks %s, want %s", r.Name, strings.Join(order, " "), strings.Join(want, " "))
	}

	parts := map[string][]string{}
	var names []string
	firstAt := map[string]time.Time{} // "kind version" -> first time any such part reported it
	lastAt := map[string]time.Time{}
	for _, t := range r.Transitions {
		id := t.Kind + "/" + t.Name
		if _, ok := parts[id]; !ok {
			names = append(names, id)
		}
		parts[id] = append(parts[id], t.Version)
		kind := "pool"
		if t.Kind == "SimControlPlane" {
			kind = "cp"
		}
		if _, ok := firstAt[kind+" "+t.Version]; !ok {
			firstAt[kind+" "+t.Version] = t.At
		}
		lastAt[kind+" "+t.Version] = t.At
	}
	if r.Reached == "upgraded" || r.Reached == "deleted" {
		for _, id := range names {
			want := []string{fromVersion, targetVersion}
			if strings.HasPrefix(id, "SimControlPlane/") {
				want = []string{fromVersion, viaVersion, targetVersion}
			}
			if !slices.Equal(parts[id], want) {
				add(vVersionSteps, "%s: %s went %s, want %s", r.Name, id, strings.Join(parts[id], " -> "), strings.Join(want, " -> "))
			}
		}
	}
	// Each move waits for the hooks before it: the control plane's first step for
	// BeforeClusterUpgrade and BeforeControlPlaneUpgrade, its next for AfterControlPlaneUpgrade of
	// the first, the pools for BeforeWorkersUpgrade.
	gates := []struct{ move, hook string }{
		{"cp " + viaVersion, hooksv1.BeforeClusterUpgrade + "(" + targetVersion + ")"},
		{"cp " + viaVersion, hooksv1.BeforeControlPlaneUpgrade + "(" + viaVersion + ")"},
		{"cp " + targetVersion, hooksv1.AfterControlPlaneUpgrade + "(" + viaVersion + ")"},
		{"cp " + targetVersion, hooksv1.BeforeControlPlaneUpgrade + "(" + targetVersion + ")"},
		{"pool " + targetVersion, hooksv1.AfterControlPlaneUpgrade + "(" + targetVersion + ")"},
		{"pool " + targetVersion, hooksv1.BeforeWorkersUpgrade + "(" + targetVersion + ")"},
	}
	for _, g := range gates {
		moved, ok := firstAt[g.move]
		if !ok {
			continue
		}
		if at, ok := passed[g.hook]; !ok || at.After(moved) {
			add(vHookBeforeMove, "%s: %s before %s passed", r.Name, g.move, g.hook)
		}
	}
	if at, ok := passed[hooksv1.AfterWorkersUpgrade+"("+targetVersion+")"]; ok && at.Before(lastAt["pool "+targetVersion]) {
		add(vHookBeforeMove, "%s: AfterWorkersUpgrade passed before the last pool reached %s", r.Name, targetVersion)
	}
	if r.ViaRollout && (r.Reached == "upgraded" || r.Reached == "deleted") && r.Generations != 1 {
		add(vRolloutWrites, "%s: the generation moved by %d during the rollout", r.Name, r.Generations)
	}
	if r.Reached == "deleted" {
		if r.RolloutLeft {
			add(vRolloutLeft, "%s", r.Name)
		}
		if len(r.Left) > 0 {
			add(vLeftAfter, "%s: %s", r.Name, strings.Join(r.Left, ", "))
		}
		if r.WorkflowRunning {
			add(vWorkflowLeft, "%s", r.Name)
		}
	}
	return v
}
