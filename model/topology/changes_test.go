package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/desired"
)

func reasons(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Reason)
	}
	return out
}

// TestChanges: what a pass's Events say, from the same decision the apply makes.
func TestChanges(t *testing.T) {
	// Nothing exists yet: the topology is created, and every pool.
	w := sampleWorld(t)
	fresh := w.in.Desired
	fresh.Current = desired.Current{}
	st, err := desired.Compute(fresh)
	require.NoError(t, err)
	cps := ControlPlaneChanges(fresh.Current, st)
	assert.Equal(t, []string{"TopologyCreated"}, reasons(cps))
	assert.Contains(t, cps[0].Message, "(Kubernetes v1.31.2)")
	assert.Equal(t, []string{"MachineDeploymentCreated", "MachineDeploymentCreated", "MachinePoolCreated"}, reasons(WorkerChanges(fresh.Current, st)))

	// Settled: nothing to tell.
	dec, err := Decide(w.in)
	require.NoError(t, err)
	assert.Empty(t, ControlPlaneChanges(w.in.Desired.Current, dec.State))
	assert.Empty(t, WorkerChanges(w.in.Desired.Current, dec.State))

	// One minor up: the control plane moves first; the pools wait (pending), so no pool Event.
	w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
	dec, err = Decide(w.in)
	require.NoError(t, err)
	cps = ControlPlaneChanges(w.in.Desired.Current, dec.State)
	require.Equal(t, []string{"ControlPlaneUpgrade"}, reasons(cps))
	assert.Contains(t, cps[0].Message, "version v1.31.2 -> v1.32.0")
	assert.Empty(t, WorkerChanges(w.in.Desired.Current, dec.State), "pools pending their turn")
}
