package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/topoflow/topoflow/model/upgrade"
)

// TestVersionAgainstRunning follows Cluster API's validateTopologyVersion checks of the running
// control plane (validateTopologyControlPlaneVersion) and pools
// (validateTopologyMachineDeploymentVersions, validateTopologyMachinePoolVersions).
func TestVersionAgainstRunning(t *testing.T) {
	settled := upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}
	pool := func(name string, mp bool, version string, rolling bool) upgrade.Pool {
		return upgrade.Pool{Name: name, MachinePool: mp, Exists: true, Version: version, RollingOut: rolling}
	}
	for _, tc := range []struct {
		name    string
		to      string
		running upgrade.Input
		skip    bool
		want    string // "" means accepted
	}{
		{"settled", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("md-0", false, "v1.31.2", false)}}, false, ""},
		{"no change is always fine", "v1.31.2", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.30.0"}}, false, ""},
		{"control plane not told yet", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.30.9", StatusVersion: "v1.30.9"}}, false,
			"Cluster.spec.topology.version v1.31.2 was not propagated to control plane yet (control plane version v1.30.9)"},
		{"control plane provisioning", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2"}}, false,
			"control plane is currently provisioning"},
		{"control plane upgrading", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.9"}}, false,
			"control plane is still completing a previous upgrade"},
		{"pool behind", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("md-0", false, "v1.30.9", false), pool("md-1", false, "v1.31.2", false)}}, false,
			"there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"pool rolling out", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("mp-0", true, "v1.31.2", true)}}, false,
			"there are still MachinePools completing a previous upgrade: [mp-0]"},
		{"pool not created yet does not count", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{{Name: "md-9"}}}, false, ""},
		{"skip annotation", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2"}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, old := sample(t)
			c := old.DeepCopy()
			c.Spec.Topology.Version = tc.to
			if tc.skip {
				c.Annotations = map[string]string{SkipVersionCheckAnnotation: "true"}
			}
			errs := VersionAgainstRunning(c, old, tc.running)
			if tc.want == "" {
				assert.Empty(t, errs)
				return
			}
			assert.ErrorContains(t, errs.ToAggregate(), "spec.topology.version: Invalid value: \""+tc.to+"\": version cannot be changed: "+tc.want)
		})
	}
}
