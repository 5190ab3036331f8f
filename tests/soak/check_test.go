package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// life builds a clean record: every hook blocked once then passed, the parts moving after them.
func life() clusterRecord {
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	r := clusterRecord{Name: "c1", Reached: "deleted"}
	s := 0
	for _, k := range expectedHooks {
		hook, version, _ := cut(k)
		body := map[string]any{}
		if version != "" {
			body["kubernetesVersion"] = version
		}
		s++
		r.Calls = append(r.Calls, extension.Call{Hook: hook, At: at(s), Body: body, Status: "Success", RetryAfterSeconds: 5})
		s++
		r.Calls = append(r.Calls, extension.Call{Hook: hook, At: at(s), Body: body, Status: "Success"})
		s++
		switch k {
		case hooksv1.BeforeControlPlaneUpgrade + "(" + viaVersion + ")":
			r.Transitions = append(r.Transitions, provider.Transition{Kind: "SimControlPlane", Name: "c1-cp", Version: viaVersion, At: at(s)})
		case hooksv1.BeforeControlPlaneUpgrade + "(" + targetVersion + ")":
			r.Transitions = append(r.Transitions, provider.Transition{Kind: "SimControlPlane", Name: "c1-cp", Version: targetVersion, At: at(s)})
		case hooksv1.BeforeWorkersUpgrade + "(" + targetVersion + ")":
			r.Transitions = append(r.Transitions, provider.Transition{Kind: "MachineDeployment", Name: "c1-md-0-x", Version: targetVersion, At: at(s)})
		case hooksv1.AfterControlPlaneInitialized + "()":
			r.Transitions = append(r.Transitions,
				provider.Transition{Kind: "SimControlPlane", Name: "c1-cp", Version: fromVersion, At: at(s)},
				provider.Transition{Kind: "MachineDeployment", Name: "c1-md-0-x", Version: fromVersion, At: at(s)})
		}
	}
	return r
}

func cut(k string) (hook, version string, ok bool) {
	i := len(k) - 1
	for k[i] != '(' {
		i--
	}
	return k[:i], k[i+1 : len(k)-1], true
}

// TestCheck: a clean life has no violation; each broken invariant is reported under its kind.
func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*clusterRecord)
		kind  string
		dupes int
	}{
		{name: "clean", edit: func(*clusterRecord) {}},
		{name: "a hook called again after it passed", dupes: 1, edit: func(r *clusterRecord) {
			c := r.Calls[5] // BeforeClusterUpgrade, passing
			c.At = c.At.Add(time.Millisecond)
			r.Calls = append(r.Calls[:6], append([]extension.Call{c}, r.Calls[6:]...)...)
		}},
		{name: "hooks out of order", kind: vHookOrder, edit: func(r *clusterRecord) {
			r.Calls[6], r.Calls[8] = r.Calls[8], r.Calls[6]
			r.Calls[7], r.Calls[9] = r.Calls[9], r.Calls[7]
		}},
		{name: "a hook missing", kind: vHookOrder, edit: func(r *clusterRecord) {
			r.Calls = r.Calls[:len(r.Calls)-2]
		}},
		{name: "control plane repeats a version", kind: vVersionSteps, edit: func(r *clusterRecord) {
			r.Transitions = append(r.Transitions, provider.Transition{Kind: "SimControlPlane", Name: "c1-cp", Version: targetVersion, At: r.Transitions[len(r.Transitions)-1].At})
		}},
		{name: "control plane skips the step", kind: vVersionSteps, edit: func(r *clusterRecord) {
			for i, tr := range r.Transitions {
				if tr.Version == viaVersion {
					r.Transitions = append(r.Transitions[:i], r.Transitions[i+1:]...)
					break
				}
			}
		}},
		{name: "a pool moved before BeforeWorkersUpgrade passed", kind: vHookBeforeMove, edit: func(r *clusterRecord) {
			for i, tr := range r.Transitions {
				if tr.Kind == "MachineDeployment" && tr.Version == targetVersion {
					r.Transitions[i].At = r.Calls[0].At
				}
			}
		}},
		{name: "objects left", kind: vLeftAfter, edit: func(r *clusterRecord) { r.Left = []string{"MachineDeployment c1-md-0-x"} }},
		{name: "workflow left", kind: vWorkflowLeft, edit: func(r *clusterRecord) { r.WorkflowRunning = true }},
		{name: "rollout wrote twice", kind: vRolloutWrites, edit: func(r *clusterRecord) { r.ViaRollout, r.Generations = true, 2 }},
		{name: "rollout left", kind: vRolloutLeft, edit: func(r *clusterRecord) { r.ViaRollout, r.Generations, r.RolloutLeft = true, 1, true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := life()
			tt.edit(&r)
			v := check(r)
			var kinds []string
			for k := range v.Violations {
				kinds = append(kinds, k)
			}
			if tt.kind == "" {
				assert.Empty(t, kinds, "%v", v.Violations)
			} else {
				assert.Equal(t, []string{tt.kind}, kinds, "%v", v.Violations)
			}
			assert.Equal(t, tt.dupes, v.DuplicatePasses)
		})
	}
}

// TestCheckUnfinished: a Cluster that stopped half way is judged on what it did so far.
func TestCheckUnfinished(t *testing.T) {
	r := life()
	r.Reached = "created"
	r.Calls = r.Calls[:4]
	r.Transitions = r.Transitions[:2]
	assert.Empty(t, check(r).Violations)
}
