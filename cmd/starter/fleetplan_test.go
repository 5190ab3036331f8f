package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/upgrade"
)

func samplePlans() []plan.ClusterPlan {
	return []plan.ClusterPlan{
		{Cluster: "fleet/c0", Stage: "canary", Outcome: plan.OutcomeChanged, WritesCluster: true,
			RollsControlPlane: true, ControlPlane: "version v1.31.2 -> v1.32.0",
			RollsWorkers: []plan.PoolRoll{{Kind: "MachineDeployment", Pool: "md-0", Name: "c0-md-0-x", Why: "version v1.31.2 -> v1.32.0, infrastructure c0-md-0-a -> c0-md-0-b"}},
			Changes: []plan.Change{
				{Kind: "SimControlPlane", Name: "c0-cp", Action: plan.Update},
				{Kind: "SimMachineTemplate", Name: "c0-md-0-b", Action: plan.Rotate, Replaces: "c0-md-0-a"},
				{Kind: "MachineDeployment", Name: "c0-md-0-x", Action: plan.Update},
				{Kind: "SimMachineTemplate", Name: "c0-md-0-a", Action: plan.Delete},
			},
			Hooks: []plan.Hook{
				{Due: upgrade.Due{Hook: "BeforeClusterUpgrade", From: "v1.31.2", To: "v1.32.0"}, Called: true},
				{Due: upgrade.Due{Hook: "AfterControlPlaneUpgrade", Version: "v1.32.0"}},
			}},
		{Cluster: "fleet/c1", Stage: "rest", Outcome: plan.OutcomeUnchanged},
		{Cluster: "fleet/c2", Stage: "rest", Outcome: plan.OutcomeRefused, Reason: "version cannot be decreased"},
		{Cluster: "fleet/c3", Stage: "rest", Outcome: plan.OutcomeChanged, WritesCluster: true},
	}
}

// TestWriteRolloutPlan: the text view is a table in stage order (the plan in a few words, the
// objects and hooks counted), then what each Cluster that changes is told, and the summary line.
func TestWriteRolloutPlan(t *testing.T) {
	p := RolloutPlan{Rollout: "fleet/edge", Generation: 2, Ledgers: "from the workflows of 3 Clusters", Clusters: samplePlans(), Skipped: []string{"fleet/c9"}}
	p.Change.Version = "v1.32.0"
	p.Summary = plan.Summarize(p.Clusters)
	var out bytes.Buffer
	require.NoError(t, writeRolloutPlan(&out, p))
	got := out.String()
	for _, want := range []string{
		`Rollout fleet/edge (generation 2), change {"version":"v1.32.0"}`,
		"STAGE   CLUSTER   PLAN                             OBJECTS                       HOOKS\n",
		"canary  fleet/c0  rolls control plane and workers  2 update, 1 rotate, 1 delete  2 (1 called)\n",
		"rest    fleet/c1  unchanged                        -                             -\n",
		"rest    fleet/c2  refused",
		"rest    fleet/c3  changes in place",
		"fleet/c0 (stage canary):\n  the change is written to the Cluster's spec.topology\n  control plane rolls: version v1.31.2 -> v1.32.0\n",
		"  workers roll: deployment md-0 (MachineDeployment c0-md-0-x): version v1.31.2 -> v1.32.0, infrastructure c0-md-0-a -> c0-md-0-b\n",
		"  rotate    SimMachineTemplate c0-md-0-b (replaces c0-md-0-a)\n",
		"  hooks, in order:\n    BeforeClusterUpgrade v1.31.2->v1.32.0 (called)\n    AfterControlPlaneUpgrade v1.32.0 (no handler: passes without a call)\n",
		"fleet/c2 (stage rest): refused: version cannot be decreased\n",
		"Selected, but no stage takes them: fleet/c9",
		"4 Clusters: 1 roll their workers, 1 roll their control plane, 1 change in place only, 1 unchanged, 1 refused\n",
	} {
		assert.Contains(t, got, want)
	}
	assert.NotContains(t, got, "fleet/c1 (stage", "an unchanged Cluster has no details")

	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, p))
	var back RolloutPlan
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, p.Clusters, back.Clusters, "the JSON output says all of it")
	assert.Equal(t, 1, back.Summary.RollWorkers)
}

// TestClassFile: --class reads one ClusterClass, in either version, and the templates beside it
// keyed as the computation reads them (the class's namespace when they name none).
func TestClassFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	class, templates, err := classFile(write("ok.yaml", `apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: quick-start, namespace: team-a}
spec: {}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: SimMachineTemplate
metadata: {name: new-worker-machine}
spec: {template: {spec: {instanceType: sim.huge}}}
`))
	require.NoError(t, err)
	assert.Equal(t, "team-a/quick-start", class.GetNamespace()+"/"+class.GetName())
	assert.Contains(t, templates, "SimMachineTemplate/team-a/new-worker-machine")

	_, _, err = classFile(write("none.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"))
	assert.ErrorContains(t, err, "want exactly one ClusterClass, found none")
	two := "apiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: a}\n---\napiVersion: cluster.x-k8s.io/v1beta1\nkind: ClusterClass\nmetadata: {name: b}\n"
	_, _, err = classFile(write("two.yaml", two))
	assert.ErrorContains(t, err, "found more")
}

func TestPlanClassFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.ErrorIs(t, runPlan([]string{"--class", "x.yaml", "-f", "y.yaml"}, &out, &errOut), errClassFlags)
	assert.ErrorIs(t, runPlan([]string{"--class", "x.yaml", "--seed", "3"}, &out, &errOut), errClassFlags)
	assert.ErrorContains(t, runPlan([]string{"--class", "x.yaml", "-o", "yaml"}, &out, &errOut), "with --class, want text or json")
	assert.ErrorContains(t, runPlan([]string{"--class", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errOut), "no such file")
}
