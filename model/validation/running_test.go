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
			"Cluster.spec.topology.version 1.31.2 was not propagated to control plane yet (control plane version 1.30.9)"},
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

// TestVersionUpdate_validateTopologyVersionUpdate follows the version rules of Cluster API
// v1.14.2's Cluster webhook (package admission, Cluster.validateTopology and
// validateTopologyVersionUpdate, with ValidateClusterForClusterClass): without kubernetesVersions
// or a GenerateUpgradePlan extension a version goes up one minor at most; with either, the ceiling
// is not checked (the class's list has no gaps, so every minor in between is a step), the version
// must be a listed one, pre-releases do not count as going down, and the skip annotation counts
// when present.
func TestVersionUpdate_validateTopologyVersionUpdate(t *testing.T) {
	chain := []string{"v1.31.2", "v1.32.4", "v1.33.1", "v1.34.1"}
	for _, tc := range []struct {
		name        string
		to          string
		versions    []string
		extension   string
		annotations map[string]string
		want        string // "" means accepted
	}{
		{"one minor", "v1.32.0", nil, "", nil, ""},
		{"two minors", "v1.33.0", nil, "", nil, `spec.topology.version: Invalid value: "v1.33.0": version can be increased by at most one minor (from v1.31.2)`},
		{"three minors chained through kubernetesVersions", "v1.34.1", chain, "", nil, ""},
		{"chained, the target listed", "v1.34.0", chain, "", nil, `spec.topology.version: Invalid value: "v1.34.0": version must match one of the versions defined in the ClusterClass`},
		{"chained by an upgrade plan extension", "v1.35.0", nil, "plan.ext", nil, ""},
		{"a pre-release of the same version is no downgrade", "v1.31.2-rc.1", nil, "", nil, ""},
		{"a downgrade", "v1.31.1", nil, "", nil, "version cannot be decreased from v1.31.2"},
		{"the skip annotation with an empty value", "v1.34.0", nil, "", map[string]string{SkipVersionCheckAnnotation: ""}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, old := sample(t)
			class.Spec.KubernetesVersions = tc.versions
			if tc.extension != "" {
				class.Spec.Upgrade.External.GenerateUpgradePlanExtension = tc.extension
			}
			c := old.DeepCopy()
			c.Spec.Topology.Version = tc.to
			c.Annotations = tc.annotations
			errs := Cluster(c, old, class, nil)
			if tc.want == "" {
				assert.Empty(t, errs)
				return
			}
			assert.ErrorContains(t, errs.ToAggregate(), tc.want)
		})
	}
}

// TestVersionAgainstRunning_ChainedAndPools: Cluster API v1.14.2's Cluster webhook (package
// admission, validateTopologyVersionUpdate with validateTopologyControlPlaneVersion and
// validateTopologyMachineDeploymentVersions, which uses check.IsMachineDeploymentUpgrading) checks
// what runs only when the stored version changes. A plan reads what runs for the Cluster whose
// target is set (Target is the new version) and the control plane's version as the old one; when
// that stands at a step of the chain toward the target, the upgrade is underway, not changed now.
// A pool on the old version whose Machines all run it (RollingOut false) is not upgrading, whatever
// its replica counts (Converging). The AfterClusterUpgrade hook pending blocks a change, and the
// control plane counts as upgrading only while its spec version is above its status version.
func TestVersionAgainstRunning_ChainedAndPools(t *testing.T) {
	chain := []string{"v1.31.2", "v1.32.4", "v1.33.1", "v1.34.1"}
	cpAt := func(v string) upgrade.ControlPlane {
		return upgrade.ControlPlane{Exists: true, SpecVersion: v, StatusVersion: v, Stable: true}
	}
	md := func(version string, rolling, converging bool) upgrade.Pool {
		return upgrade.Pool{Name: "md-0", Exists: true, Version: version, RollingOut: rolling, Converging: converging}
	}
	for _, tc := range []struct {
		name        string
		from, to    string
		running     upgrade.Input
		annotations map[string]string
		want        string // "" means accepted
	}{
		{"control plane at an intermediate step, pools behind", "v1.32.4", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: chain, ControlPlane: cpAt("v1.32.4"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil, ""},
		{"control plane upgrading to an intermediate step", "v1.33.1", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: chain, ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.33.1", StatusVersion: "v1.32.4"}, Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil, ""},
		{"the admission webhook reads for the stored Cluster: a change", "v1.32.4", "v1.34.1",
			upgrade.Input{Target: "v1.32.4", KubernetesVersions: chain, ControlPlane: cpAt("v1.32.4"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"not a step of the chain", "v1.32.3", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: append([]string{"v1.32.3"}, chain[1:]...), ControlPlane: cpAt("v1.32.3"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"the only Machine on the old version: not upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2"), Pools: []upgrade.Pool{md("v1.31.2", false, true)}}, nil, ""},
		{"a Machine on another version: upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2"), Pools: []upgrade.Pool{md("v1.31.2", true, true)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"AfterClusterUpgrade pending", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2")}, map[string]string{"runtime.cluster.x-k8s.io/pending-hooks": "AfterClusterUpgrade"},
			`version cannot be changed when the "AfterClusterUpgrade" hook is still blocking`},
		{"control plane status above spec: not upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.3"}}, nil, ""},
		{"several reasons, as an aggregate", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.9"}, Pools: []upgrade.Pool{md("v1.30.9", false, false)}}, nil,
			"version cannot be changed: [control plane is still completing a previous upgrade, there are still MachineDeployments completing a previous upgrade: [md-0]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, old := sample(t)
			old.Spec.Topology.Version = tc.from
			c := old.DeepCopy()
			c.Spec.Topology.Version = tc.to
			c.Annotations = tc.annotations
			errs := VersionAgainstRunning(c, old, tc.running)
			if tc.want == "" {
				assert.Empty(t, errs)
				return
			}
			assert.ErrorContains(t, errs.ToAggregate(), `spec.topology.version: Invalid value: "`+tc.to+`": `+tc.want)
		})
	}
}
