package upgrade

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
)

// Table tests of Compute against Cluster API v1.14.2's topology controller with the RuntimeSDK
// gate off (exp/topology/desiredstate and exp/topology/scope). Each names the function it follows.

func settled(v string) ControlPlane {
	return ControlPlane{Exists: true, SpecVersion: v, StatusVersion: v, Stable: true}
}

func md(name, v string) Pool { return Pool{Name: name, Exists: true, Version: v} }

func mp(name, v string) Pool { return Pool{Name: name, MachinePool: true, Exists: true, Version: v} }

func rolling(p Pool) Pool {
	p.RollingOut = true
	return p
}

// TestPlans_ComputeUpgradePlan follows ComputeUpgradePlan, GetUpgradePlanFromClusterClassVersions,
// GetUpgradePlanOneMinor and DefaultAndValidateUpgradePlans (upgrade_plan.go): no plans once the
// control plane and every pool run the target; the control plane's plan steps through the last
// listed patch of each minor in the class's kubernetesVersions; the workers' plan, computed from the
// lowest version a pool runs, takes every third minor on the way and the target, and stays set
// while a pool is behind even once the control plane is done. Planned is "a plan is non-empty".
func TestPlans_ComputeUpgradePlan(t *testing.T) {
	versions := []string{"v1.28.9", "v1.29.9", "v1.30.5", "v1.31.1", "v1.31.4", "v1.32.0", "v1.32.2", "v1.33.2", "v1.34.1", "v1.35.0"}
	for _, tc := range []struct {
		name              string
		in                Input
		cp, workers       []string
		planned           bool
		wantErrorContains string
	}{
		{name: "all at the target", in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"), Pools: []Pool{md("md-0", "v1.31.2")}}},
		{name: "new pools only", in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"), Pools: []Pool{{Name: "md-0"}}}},
		{name: "one minor, no list", in: Input{Target: "v1.31.2", ControlPlane: settled("v1.30.5"), Pools: []Pool{md("md-0", "v1.30.5")}},
			cp: []string{"v1.31.2"}, workers: []string{"v1.31.2"}, planned: true},
		{name: "no pools: no workers' plan", in: Input{Target: "v1.31.2", ControlPlane: settled("v1.30.5")},
			cp: []string{"v1.31.2"}, planned: true},
		{name: "chained through kubernetesVersions, workers within the skew skip the steps",
			in: Input{Target: "v1.32.2", KubernetesVersions: versions, ControlPlane: settled("v1.30.5"), Pools: []Pool{md("md-0", "v1.30.5"), mp("mp-0", "v1.30.5")}},
			cp: []string{"v1.31.4", "v1.32.2"}, workers: []string{"v1.32.2"}, planned: true},
		{name: "chained over five minors: workers step at the third",
			in: Input{Target: "v1.33.2", KubernetesVersions: versions, ControlPlane: settled("v1.28.9"), Pools: []Pool{md("md-0", "v1.28.9")}},
			cp: []string{"v1.29.9", "v1.30.5", "v1.31.4", "v1.32.2", "v1.33.2"}, workers: []string{"v1.31.4", "v1.33.2"}, planned: true},
		{name: "control plane at an intermediate step continues the chain",
			in: Input{Target: "v1.33.2", KubernetesVersions: versions, ControlPlane: settled("v1.31.4"), Pools: []Pool{md("md-0", "v1.28.9")}},
			cp: []string{"v1.32.2", "v1.33.2"}, workers: []string{"v1.31.4", "v1.33.2"}, planned: true},
		{name: "control plane done, a MachinePool behind",
			in:      Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"), Pools: []Pool{md("md-0", "v1.31.2"), mp("mp-0", "v1.30.5")}},
			workers: []string{"v1.31.2"}, planned: true},
		{name: "two minors without a list", in: Input{Target: "v1.32.0", ControlPlane: settled("v1.30.5")},
			wantErrorContains: "at most one minor", planned: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.planned, tc.in.Planned(), "Planned")
			cp, workers, err := plans(tc.in)
			if tc.wantErrorContains != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErrorContains)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.cp, cp, "control plane plan")
			assert.Equal(t, tc.workers, workers, "workers' plan")
			res, err := Compute(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.cp, res.ControlPlaneSteps)
			assert.Equal(t, tc.workers, res.WorkerSteps)
		})
	}
}

// TestControlPlaneVersion_computeControlPlaneVersion follows computeControlPlaneVersion
// (desired_state.go) with the RuntimeSDK gate off: the control plane keeps its version while it
// provisions or upgrades (ControlPlane contract IsProvisioning, IsUpgrading), while the workers'
// plan starts with its version (IsWaitingForWorkersUpgrade), while any MachineDeployment or
// MachinePool upgrades (UpgradeTracker MachineDeployments/MachinePools IsAnyUpgrading: a
// MachinePool rolling out holds it as a MachineDeployment does), and once at the target; else it
// takes the first version of its plan. Scaling does not hold it.
func TestControlPlaneVersion_computeControlPlaneVersion(t *testing.T) {
	versions := []string{"v1.30.5", "v1.31.4", "v1.32.2", "v1.33.2", "v1.34.1"}
	scaling := settled("v1.30.5")
	scaling.Stable = false
	for _, tc := range []struct {
		name string
		in   Input
		want string
	}{
		{"stable, pools at its version: takes the target", Input{Target: "v1.31.2", ControlPlane: settled("v1.30.5"),
			Pools: []Pool{md("md-0", "v1.30.5"), mp("mp-0", "v1.30.5")}}, "v1.31.2"},
		{"provisioning", Input{Target: "v1.31.2", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.30.5"}}, "v1.30.5"},
		{"upgrading", Input{Target: "v1.32.2", KubernetesVersions: versions,
			ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.4", StatusVersion: "v1.30.5", Stable: true}}, "v1.31.4"},
		{"a MachinePool rolling out holds it", Input{Target: "v1.32.0", ControlPlane: settled("v1.31.2"),
			Pools: []Pool{md("md-0", "v1.31.2"), rolling(mp("mp-0", "v1.31.2"))}}, "v1.31.2"},
		{"a MachineDeployment rolling out holds it", Input{Target: "v1.32.0", ControlPlane: settled("v1.31.2"),
			Pools: []Pool{rolling(md("md-0", "v1.31.2")), mp("mp-0", "v1.31.2")}}, "v1.31.2"},
		{"scaling does not hold it", Input{Target: "v1.31.2", ControlPlane: scaling, Pools: []Pool{md("md-0", "v1.30.5")}}, "v1.31.2"},
		{"chained: the first step", Input{Target: "v1.33.2", KubernetesVersions: versions, ControlPlane: settled("v1.30.5"),
			Pools: []Pool{md("md-0", "v1.30.5")}}, "v1.31.4"},
		{"chained: at an intermediate step, workers within the skew: the next step", Input{Target: "v1.33.2", KubernetesVersions: versions,
			ControlPlane: settled("v1.31.4"), Pools: []Pool{md("md-0", "v1.30.5")}}, "v1.32.2"},
		{"chained: the workers' plan starts with its version: it waits", Input{Target: "v1.34.1", KubernetesVersions: versions,
			ControlPlane: settled("v1.33.2"), Pools: []Pool{md("md-0", "v1.33.2"), mp("mp-0", "v1.30.5")}}, "v1.33.2"},
		{"a pool one minor behind without a chain does not hold it", Input{Target: "v1.32.0", ControlPlane: settled("v1.31.2"),
			Pools: []Pool{md("md-0", "v1.31.2"), md("md-1", "v1.30.5")}}, "v1.32.0"},
		{"at the target", Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"), Pools: []Pool{md("md-0", "v1.30.5")}}, "v1.31.2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.ControlPlane)
		})
	}
}

// TestPoolVersions_computeMachineDeploymentVersion follows computeMachineDeploymentVersion and
// computeMachinePoolVersion (desired_state.go) with the UpgradeTracker (scope/upgradetracker.go)
// and the concurrency annotation read by scope.New: a new pool starts at the target and takes no
// upgrade slot; one at the target stays; else, in topology order, a deferred or held pool
// (isMachineDeploymentDeferred) stays, then one whose kind's upgrading pools reach the
// concurrency (UpgradeConcurrencyReached, MachineDeployments and MachinePools counted apart), then
// one while the control plane is neither stable nor waiting for the workers
// (IsControlPlaneStableOrWaitingForWorkersUpgrade), then one already at the first version of the
// workers' plan; any other takes that version in the same pass as the control plane's stability.
func TestPoolVersions_computeMachineDeploymentVersion(t *testing.T) {
	versions := []string{"v1.30.5", "v1.31.4", "v1.32.2", "v1.33.2", "v1.34.1"}
	held := md("md-1", "v1.30.5")
	held.Hold = true
	deferred := md("md-0", "v1.30.5")
	deferred.Defer = true
	for _, tc := range []struct {
		name string
		in   Input
		// want maps Pool.Key to the version decided (pools not named keep theirs).
		want                         map[string]string
		pending, deferred, heldNames []string
	}{
		{name: "control plane stable at the target: the first MachineDeployment and the first MachinePool move",
			in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"),
				Pools: []Pool{md("md-0", "v1.30.5"), md("md-1", "v1.30.5"), mp("mp-0", "v1.30.5"), mp("mp-1", "v1.30.5")}},
			want:    map[string]string{"MachineDeployment/md-0": "v1.31.2", "MachinePool/mp-0": "v1.31.2"},
			pending: []string{"md-1", "mp-1"}},
		{name: "concurrency 2 per kind",
			in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"), Concurrency: 2,
				Pools: []Pool{md("md-0", "v1.30.5"), md("md-1", "v1.30.5"), md("md-2", "v1.30.5"), mp("mp-0", "v1.30.5")}},
			want:    map[string]string{"MachineDeployment/md-0": "v1.31.2", "MachineDeployment/md-1": "v1.31.2", "MachinePool/mp-0": "v1.31.2"},
			pending: []string{"md-2"}},
		{name: "a pool created at the target takes no slot",
			in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"),
				Pools: []Pool{{Name: "md-new"}, md("md-1", "v1.30.5"), {Name: "mp-new", MachinePool: true}, mp("mp-1", "v1.30.5")}},
			want: map[string]string{"MachineDeployment/md-new": "v1.31.2", "MachineDeployment/md-1": "v1.31.2",
				"MachinePool/mp-new": "v1.31.2", "MachinePool/mp-1": "v1.31.2"}},
		{name: "a MachinePool rolling out takes the MachinePools' slot only",
			in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"),
				Pools: []Pool{md("md-0", "v1.30.5"), rolling(mp("mp-0", "v1.31.2")), mp("mp-1", "v1.30.5")}},
			want:    map[string]string{"MachineDeployment/md-0": "v1.31.2"},
			pending: []string{"mp-1"}},
		{name: "control plane starting its upgrade: pools wait",
			in:      Input{Target: "v1.31.2", ControlPlane: settled("v1.30.5"), Pools: []Pool{md("md-0", "v1.30.5"), mp("mp-0", "v1.30.5")}},
			pending: []string{"md-0", "mp-0"}},
		{name: "control plane upgrading: pools wait, deferred and held are told apart",
			in: Input{Target: "v1.31.2", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.5"},
				Pools: []Pool{deferred, held, md("md-2", "v1.30.5")}},
			deferred: []string{"md-0"}, heldNames: []string{"md-1", "md-2"}},
		{name: "control plane waiting for the workers: the pools behind take its version",
			in: Input{Target: "v1.34.1", KubernetesVersions: versions, ControlPlane: settled("v1.33.2"),
				Pools: []Pool{md("md-0", "v1.30.5"), md("md-1", "v1.33.2"), mp("mp-0", "v1.30.5")}},
			want:    map[string]string{"MachineDeployment/md-0": "v1.33.2", "MachinePool/mp-0": "v1.33.2"},
			pending: []string{"md-1"}},
		{name: "chained, control plane at an intermediate step, workers within the skew: they wait",
			in: Input{Target: "v1.33.2", KubernetesVersions: versions, ControlPlane: settled("v1.31.4"),
				Pools: []Pool{md("md-0", "v1.30.5")}},
			pending: []string{"md-0"}},
		{name: "a deferred pool does not hold the next one",
			in: Input{Target: "v1.31.2", ControlPlane: settled("v1.31.2"),
				Pools: []Pool{deferred, md("md-1", "v1.30.5")}},
			want:     map[string]string{"MachineDeployment/md-1": "v1.31.2"},
			deferred: []string{"md-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Compute(tc.in)
			require.NoError(t, err)
			for _, p := range tc.in.Pools {
				want, ok := tc.want[p.Key()]
				if !ok {
					want = p.Version
				}
				assert.Equal(t, want, res.Pools[p.Key()], p.Key())
			}
			assert.Equal(t, tc.pending, res.Pending, "pending")
			assert.Equal(t, tc.deferred, res.Deferred, "deferred")
			assert.Equal(t, tc.heldNames, res.Held, "held")
		})
	}
}

// TestChainedUpgradeWorkersFollowThePlan: a run of passes over a chained upgrade of four minors
// with the control plane stepping through kubernetesVersions one at a time
// (GetUpgradePlanFromClusterClassVersions) and the workers taking only the versions
// DefaultAndValidateUpgradePlans gives them (each third minor, then the target), MachineDeployments
// and MachinePools moving in the same passes.
func TestChainedUpgradeWorkersFollowThePlan(t *testing.T) {
	versions := []string{"v1.30.5", "v1.31.4", "v1.32.2", "v1.33.2", "v1.34.1"}
	w := newWorld("v1.30.5", "md-0")
	w.pools = append(w.pools, mp("mp-0", "v1.30.5"))
	got := w.run(t, Input{Target: "v1.34.1", KubernetesVersions: versions})
	assert.Equal(t, []string{"cp→v1.31.4", "cp→v1.32.2", "cp→v1.33.2", "md-0→v1.33.2 mp-0→v1.33.2", "cp→v1.34.1", "md-0→v1.34.1 mp-0→v1.34.1"}, got)
}

// TestDeferAndHoldFromTopology_isMachineDeploymentDeferred follows isMachineDeploymentDeferred and
// isMachinePoolDeferred (desired_state.go): defer-upgrade and hold-upgrade-sequence are read from
// the pool's topology metadata only; the same annotations in the class's pool metadata do nothing.
func TestDeferAndHoldFromTopology_isMachineDeploymentDeferred(t *testing.T) {
	ann := func(keys ...string) map[string]string {
		m := map[string]string{}
		for _, k := range keys {
			m[k] = ""
		}
		return m
	}
	class := &clusterv1.ClusterClass{}
	class.Spec.Workers.MachineDeployments = []clusterv1.MachineDeploymentClass{{Class: "w"}}
	class.Spec.Workers.MachineDeployments[0].Metadata.Annotations = ann(labels.DeferUpgrade, labels.HoldUpgradeSequence)
	for _, tc := range []struct {
		name         string
		topology     map[string]string
		defer_, hold bool
	}{
		{name: "class metadata alone: neither"},
		{name: "defer on the topology", topology: ann(labels.DeferUpgrade), defer_: true},
		{name: "hold on the topology", topology: ann(labels.HoldUpgradeSequence), hold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cluster := &clusterv1.Cluster{}
			cluster.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "c"}, Version: "v1.31.2", Workers: clusterv1.WorkersTopology{
				MachineDeployments: []clusterv1.MachineDeploymentTopology{{Class: "w", Name: "md-0", Metadata: clusterv1.ObjectMeta{Annotations: tc.topology}}}}}
			in, err := InputFrom(cluster, class, nil, nil, nil, nil, nil)
			require.NoError(t, err)
			require.Len(t, in.Pools, 1)
			assert.Equal(t, tc.defer_, in.Pools[0].Defer, "defer")
			assert.Equal(t, tc.hold, in.Pools[0].Hold, "hold")
		})
	}
}
