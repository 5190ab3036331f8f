package upgrade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/upgrade"
)

// TestGateOrder plays a chained upgrade with hooks that pass at once, and checks that the gate
// holds version moves in Cluster API's hook order and lets each move through only after its hook.
func TestGateOrder(t *testing.T) {
	cp := upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}
	pools := []upgrade.Pool{{Name: "md-0", Exists: true, Version: "v1.31.2"}, {Name: "md-1", Exists: true, Version: "v1.31.2"}}
	gate := &upgrade.Gate{}
	var events []string
	for i := 0; i < 100; i++ {
		in := upgrade.Input{Target: "v1.33.1", KubernetesVersions: []string{"v1.31.2", "v1.32.4", "v1.33.1"}, ControlPlane: cp, Pools: pools}
		res, err := upgrade.Compute(in)
		require.NoError(t, err)
		held, v := gate.Hold(in, res)
		if held != "" {
			events = append(events, held+"("+v+")")
			switch held { // the hook passes, as the workflow would record it
			case "BeforeClusterUpgrade":
				gate.ApprovedTarget, gate.ControlPlaneAcknowledged = v, cp.StatusVersion
			case "BeforeControlPlaneUpgrade":
				gate.ControlPlaneApproved = v
			case "AfterControlPlaneUpgrade":
				gate.ControlPlaneAcknowledged = v
			case "BeforeWorkersUpgrade":
				gate.WorkersApproved = v
			case "AfterWorkersUpgrade":
				gate.WorkersAcknowledged = v
			}
			continue
		}
		moved := false
		if res.ControlPlane != cp.SpecVersion {
			cp.SpecVersion, moved = res.ControlPlane, true
			events = append(events, "cp→"+res.ControlPlane)
		}
		for j := range pools {
			if v := res.Pools[pools[j].Key()]; v != pools[j].Version {
				pools[j].Version, pools[j].RollingOut, moved = v, true, true
				events = append(events, pools[j].Name+"→"+v)
			}
		}
		// Rollouts finish.
		cp.StatusVersion = cp.SpecVersion
		for j := range pools {
			pools[j].RollingOut = false
		}
		if !moved && !res.InProgress {
			break
		}
	}
	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.33.1)",
		"BeforeControlPlaneUpgrade(v1.32.4)", "cp→v1.32.4", "AfterControlPlaneUpgrade(v1.32.4)",
		"BeforeControlPlaneUpgrade(v1.33.1)", "cp→v1.33.1", "AfterControlPlaneUpgrade(v1.33.1)",
		"BeforeWorkersUpgrade(v1.33.1)", "md-0→v1.33.1", "md-1→v1.33.1",
	}, events, "AfterWorkersUpgrade and AfterClusterUpgrade for the final step are the workflow's, once all is settled")
}
