package clusterstatus

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/workflows"
)

func report() *Report {
	return &Report{
		Cluster: "default/demo", Class: "quick-start", Version: "v1.32.4", Phase: "Provisioned",
		ControlPlane: &Part{Kind: "SimControlPlane", Name: "demo-x", Version: "v1.31.2", DesiredVersion: "v1.32.4", Initialized: true, Ready: true},
		Pools:        []Part{{Pool: "md-0", Kind: "MachineDeployment", Name: "demo-md-0-y", Version: "v1.31.2", Replicas: 2, Updated: 2, ReadyReplicas: 2}},
		Conditions:   []Condition{{Type: "TopologyReconciled", Status: "False", Reason: "ClusterUpgrading", Message: "Cluster is upgrading to v1.32.4\n  * Control plane upgrading"}},
		Workflow:     "topology/default/demo",
		State: &workflows.State{Step: "upgrade v1.31.2 -> v1.32.4", Passes: 3,
			Upgrade: &workflows.UpgradeState{Workflow: "topology/default/demo/upgrade/v1.32.4", From: "v1.31.2", To: "v1.32.4"}},
		Upgrade: &workflows.State{Step: "wait for providers"},
	}
}

// TestWriteJSON: -o json carries the whole report and reads back the same.
func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report().WriteJSON(&buf))
	var back Report
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	assert.Equal(t, report(), &back)
	assert.Contains(t, buf.String(), `"desiredVersion": "v1.32.4"`)
}

// TestWriteText: one aligned line per part, the condition's message lines, the upgrade's step.
func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, report().WriteText(&buf))
	var lines []string
	for _, l := range strings.Split(buf.String(), "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{
		"Control plane SimControlPlane demo-x: version v1.31.2 (desired v1.32.4), initialized true, ready true",
		"Pool md-0 MachineDeployment demo-md-0-y: version v1.31.2, replicas 2, updated 2, ready 2",
		"Condition TopologyReconciled=False (ClusterUpgrading)",
		"* Control plane upgrading",
		"Upgrade v1.31.2 -> v1.32.4",
		"Upgrade step wait for providers",
	} {
		assert.Contains(t, lines, want)
	}
}
