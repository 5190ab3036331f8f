package upgrade

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	corev1 "k8s.io/api/core/v1"
)

// world plays the providers: every round topoflow's decisions are applied, then every rollout
// that was started finishes. It records the version changes in order.
type world struct {
	cp    ControlPlane
	pools []Pool
	log   []string
	// extension, when set, plays a GenerateUpgradePlan extension asked on every round.
	extension func(cp, workers, target string) ExternalPlan
}

func newWorld(version string, pools ...string) *world {
	w := &world{cp: ControlPlane{Exists: true, SpecVersion: version, StatusVersion: version, Stable: true}}
	for _, p := range pools {
		w.pools = append(w.pools, Pool{Name: p, Exists: true, Version: version})
	}
	return w
}

// round applies one decision; it returns the changes made ("cp→v1.31.2", "md-0→…").
func (w *world) round(t *testing.T, in Input) []string {
	t.Helper()
	in.ControlPlane = w.cp
	in.Pools = w.pools
	if w.extension != nil && in.NeedsPlan() {
		workers, err := in.LowestPoolVersion()
		require.NoError(t, err)
		plan, err := CheckExternalPlan(w.cp.SpecVersion, workers, in.Target, w.extension(w.cp.SpecVersion, workers, in.Target))
		require.NoError(t, err)
		in.External = &plan
	}
	res, err := Compute(in)
	require.NoError(t, err)
	var changes []string
	if res.ControlPlane != w.cp.SpecVersion {
		w.cp.SpecVersion, w.cp.Stable = res.ControlPlane, false
		changes = append(changes, "cp→"+res.ControlPlane)
	}
	for i := range w.pools {
		if v := res.Pools[w.pools[i].Key()]; v != w.pools[i].Version {
			w.pools[i].Version, w.pools[i].RollingOut = v, true
			changes = append(changes, w.pools[i].Name+"→"+v)
		}
	}
	w.log = append(w.log, strings.Join(changes, " "))
	return changes
}

// finish completes every rollout in progress.
func (w *world) finish() {
	w.cp.StatusVersion, w.cp.Stable = w.cp.SpecVersion, true
	for i := range w.pools {
		w.pools[i].RollingOut = false
	}
}

// run plays rounds until nothing changes.
func (w *world) run(t *testing.T, in Input) []string {
	t.Helper()
	for i := 0; i < 50; i++ {
		if len(w.round(t, in)) == 0 {
			w.log = w.log[:len(w.log)-1]
			return w.log
		}
		w.finish()
	}
	t.Fatal("upgrade did not converge")
	return nil
}

func TestSequentialUpgrade(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1", "mp-0")
	got := w.run(t, Input{Target: "v1.31.2"})
	assert.Equal(t, []string{"cp→v1.31.2", "md-0→v1.31.2", "md-1→v1.31.2", "mp-0→v1.31.2"}, got,
		"control plane first, then one pool at a time in topology order")
}

func TestConcurrency(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1", "md-2")
	got := w.run(t, Input{Target: "v1.31.2", Concurrency: 2})
	assert.Equal(t, []string{"cp→v1.31.2", "md-0→v1.31.2 md-1→v1.31.2", "md-2→v1.31.2"}, got)
}

// TestConcurrencyIsPerKind: MachineDeployments and MachinePools each upgrade under the
// concurrency (Cluster API's UpgradeTracker: one WorkerUpgradeTracker per kind, each checked by
// AllowUpgrade in computeMachineDeploymentVersion / computeMachinePoolVersion): a MachinePool
// takes the version while a MachineDeployment rolls out.
func TestConcurrencyIsPerKind(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1")
	w.pools = append(w.pools, Pool{Name: "mp-0", MachinePool: true, Exists: true, Version: "v1.30.5"})
	got := w.run(t, Input{Target: "v1.31.2"})
	assert.Equal(t, []string{"cp→v1.31.2", "md-0→v1.31.2 mp-0→v1.31.2", "md-1→v1.31.2"}, got)

	// A MachineDeployment rolling out for another reason holds the next MachineDeployment, not
	// the MachinePool.
	w = newWorld("v1.31.2", "md-0", "md-1")
	w.pools = append(w.pools, Pool{Name: "mp-0", MachinePool: true, Exists: true, Version: "v1.30.5"})
	w.pools[0].RollingOut, w.pools[1].Version = true, "v1.30.5"
	res, err := Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	require.NoError(t, err)
	assert.Equal(t, "v1.30.5", res.Pools[PoolKey(false, "md-1")])
	assert.Equal(t, "v1.31.2", res.Pools[PoolKey(true, "mp-0")])
}

// TestChainedUpgrade: across two minors with kubernetesVersions, the control plane steps through
// the last patch of each minor; workers (within the skew) skip the intermediate step.
func TestChainedUpgrade(t *testing.T) {
	versions := []string{"v1.30.5", "v1.31.1", "v1.31.4", "v1.32.0", "v1.32.2"}
	w := newWorld("v1.30.5", "md-0", "md-1", "md-2")
	got := w.run(t, Input{Target: "v1.32.2", KubernetesVersions: versions})
	assert.Equal(t, []string{"cp→v1.31.4", "cp→v1.32.2", "md-0→v1.32.2", "md-1→v1.32.2", "md-2→v1.32.2"}, got)

	w = newWorld("v1.30.5", "md-0", "md-1", "md-2")
	got = w.run(t, Input{Target: "v1.32.2", KubernetesVersions: versions, Concurrency: 2})
	assert.Equal(t, []string{"cp→v1.31.4", "cp→v1.32.2", "md-0→v1.32.2 md-1→v1.32.2", "md-2→v1.32.2"}, got)
}

// TestChainedUpgradeKeepsWorkersWithinSkew: over five minors, workers must catch up before the
// control plane would be more than three minors ahead of them.
func TestChainedUpgradeKeepsWorkersWithinSkew(t *testing.T) {
	versions := []string{"v1.28.9", "v1.29.9", "v1.30.9", "v1.31.9", "v1.32.9", "v1.33.2"}
	w := newWorld("v1.28.9", "md-0")
	got := w.run(t, Input{Target: "v1.33.2", KubernetesVersions: versions})
	assert.Equal(t, []string{"cp→v1.29.9", "cp→v1.30.9", "cp→v1.31.9", "md-0→v1.31.9", "cp→v1.32.9", "cp→v1.33.2", "md-0→v1.33.2"}, got)
}

func TestDeferAndHold(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1", "md-2")
	w.pools[0].Defer = true
	got := w.run(t, Input{Target: "v1.31.2"})
	assert.Equal(t, []string{"cp→v1.31.2", "md-1→v1.31.2", "md-2→v1.31.2"}, got, "a deferred pool is skipped")
	assert.Equal(t, "v1.30.5", w.pools[0].Version)
	res, err := Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	require.NoError(t, err)
	assert.Equal(t, []string{"md-0"}, res.Deferred)
	assert.True(t, res.InProgress)

	w = newWorld("v1.30.5", "md-0", "md-1", "md-2")
	w.pools[1].Hold = true
	got = w.run(t, Input{Target: "v1.31.2"})
	assert.Equal(t, []string{"cp→v1.31.2", "md-0→v1.31.2"}, got, "a held pool holds itself and every pool after it")
	res, _ = Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	assert.Equal(t, []string{"md-1", "md-2"}, res.Held)
}

// TestHoldIsPerKind: hold-upgrade-sequence on a MachineDeployment holds the MachineDeployments
// after it, not the MachinePools (two sequences, as in Cluster API); a MachineDeployment and a
// MachinePool may share a topology name.
func TestHoldIsPerKind(t *testing.T) {
	w := newWorld("v1.30.5", "workers", "md-1")
	w.pools[0].Hold = true
	w.pools = append(w.pools, Pool{Name: "workers", MachinePool: true, Exists: true, Version: "v1.30.5"})
	got := w.run(t, Input{Target: "v1.31.2"})
	assert.Equal(t, []string{"cp→v1.31.2", "workers→v1.31.2"}, got, "only the MachinePool named workers moved")
	assert.True(t, w.pools[2].MachinePool)
	assert.Equal(t, "v1.31.2", w.pools[2].Version)
	assert.Equal(t, "v1.30.5", w.pools[0].Version, "the held MachineDeployment named workers stays")
	res, err := Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	require.NoError(t, err)
	assert.Equal(t, []string{"workers", "md-1"}, res.Held)
}

// TestVersionBumpMidUpgrade: a new target set while a pool still waits for the old one (Cluster
// API's webhook refuses it for a new minor; a generator run on such a Cluster decides so
// nonetheless): the workers' plan is made afresh from the lowest version a pool runs
// (ComputeUpgradePlan), so the waiting pool skips the old target and the control plane does not
// wait for it (computeControlPlaneVersion waits only while the workers' plan starts with its own
// version or a pool upgrades).
func TestVersionBumpMidUpgrade(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1")
	w.round(t, Input{Target: "v1.31.2"})
	w.finish()
	w.round(t, Input{Target: "v1.31.2"}) // md-0 starts
	w.finish()
	got := w.run(t, Input{Target: "v1.32.0"})
	assert.Equal(t, []string{"cp→v1.31.2", "md-0→v1.31.2", "cp→v1.32.0", "md-0→v1.32.0", "md-1→v1.32.0"}, got)
}

// TestNoDoubleRollout: a pool busy rolling out something else takes the version only afterwards,
// and the control plane does not start while a pool rolls out.
func TestNoDoubleRollout(t *testing.T) {
	w := newWorld("v1.30.5", "md-0", "md-1")
	w.pools[0].RollingOut = true // e.g. a template rotation in progress
	res, err := Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	require.NoError(t, err)
	assert.Equal(t, "v1.30.5", res.ControlPlane, "the control plane waits for the rollout")
	assert.Contains(t, res.Waiting, "worker pools rolling out")

	w = newWorld("v1.31.2", "md-0", "md-1")
	w.pools[0].Version, w.pools[1].Version = "v1.30.5", "v1.30.5"
	w.pools[0].RollingOut = true
	res, err = Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: w.pools})
	require.NoError(t, err)
	assert.Equal(t, "v1.30.5", res.Pools[PoolKey(false, "md-0")], "busy pool keeps its version")
	assert.Equal(t, "v1.30.5", res.Pools[PoolKey(false, "md-1")], "and counts against the concurrency")
	assert.Equal(t, []string{"md-0", "md-1"}, res.Pending)
}

func TestCreateAndNewPoolMidUpgrade(t *testing.T) {
	res, err := Compute(Input{Target: "v1.31.2", Pools: []Pool{{Name: "md-0"}}})
	require.NoError(t, err)
	assert.Equal(t, "v1.31.2", res.ControlPlane)
	assert.Equal(t, "v1.31.2", res.Pools[PoolKey(false, "md-0")])
	assert.False(t, res.InProgress)

	// A control plane still initializing at the target is a creation, not an upgrade.
	res, err = Compute(Input{Target: "v1.31.2", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.2"},
		Pools: []Pool{{Name: "md-0"}}})
	require.NoError(t, err)
	assert.False(t, res.InProgress)
	assert.Equal(t, "v1.31.2", res.Pools[PoolKey(false, "md-0")])

	w := newWorld("v1.30.5", "md-0")
	w.round(t, Input{Target: "v1.31.2"}) // control plane upgrading
	res, err = Compute(Input{Target: "v1.31.2", ControlPlane: w.cp, Pools: append(w.pools, Pool{Name: "md-new"})})
	require.NoError(t, err)
	assert.Equal(t, "v1.31.2", res.Pools[PoolKey(false, "md-new")], "a new pool starts at the control plane's version")
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		versions []string
		want     []string
		err      string
	}{
		{"v1.30.5", "v1.30.5", nil, nil, ""},
		{"v1.30.5", "v1.31.2", nil, []string{"v1.31.2"}, ""},
		{"v1.30.5", "v1.33.0", []string{"v1.31.0", "v1.31.7", "v1.32.3", "v1.33.0"}, []string{"v1.31.7", "v1.32.3", "v1.33.0"}, ""},
		{"v1.30.5", "v1.33.0", []string{"v1.31.7", "v1.33.0"}, nil, "lists no v1.32 release"},
		{"v1.31.0", "v1.30.0", nil, nil, "downgrades are not supported"},
		{"v1.31.2", "v1.33.0", nil, nil, "the control plane runs v1.31.2 and can move at most one minor at a time"},
		{"v1.31.2", "v2.0.0", nil, nil, "can move at most one minor at a time"},
		{"1.30", "v1.31.0", nil, nil, "not a version"},
	} {
		t.Run(fmt.Sprintf("%s-%s", tc.from, tc.to), func(t *testing.T) {
			got, err := Plan(tc.from, tc.to, tc.versions)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestWorkerPlan: workers step only where the control plane's next step would leave them more
// than three minors behind, and always end at the target.
func TestWorkerPlan(t *testing.T) {
	for _, tc := range []struct {
		workers, from string
		steps         []string
		want          []string
	}{
		{"", "v1.31.2", []string{"v1.32.4"}, nil},
		{"v1.31.2", "v1.31.2", nil, nil},
		// The control plane is at the target, the workers behind: they take the target (Cluster
		// API's DefaultAndValidateUpgradePlans with an empty control plane plan).
		{"v1.31.2", "v1.32.4", nil, []string{"v1.32.4"}},
		{"v1.31.2", "v1.31.2", []string{"v1.32.4"}, []string{"v1.32.4"}},
		{"v1.31.2", "v1.31.2", []string{"v1.32.4", "v1.33.1"}, []string{"v1.33.1"}},
		{"v1.30.0", "v1.30.0", []string{"v1.31.5", "v1.32.4", "v1.33.0"}, []string{"v1.33.0"}},
		{"v1.30.0", "v1.30.0", []string{"v1.31.5", "v1.32.4", "v1.33.2", "v1.34.0"}, []string{"v1.33.2", "v1.34.0"}},
		{"v1.30.0", "v1.30.0", []string{"v1.31.5", "v1.32.4", "v1.33.2", "v1.34.1", "v1.35.0"}, []string{"v1.33.2", "v1.35.0"}},
		{"v1.30.0", "v1.30.0", []string{"v1.31.5", "v1.32.4", "v1.33.2", "v1.34.1", "v1.35.3", "v1.36.0", "v1.37.0"}, []string{"v1.33.2", "v1.36.0", "v1.37.0"}},
		{"v1.29.0", "v1.30.2", []string{"v1.31.5", "v1.32.4", "v1.33.2"}, []string{"v1.32.4", "v1.33.2"}},
		// The control plane is already three minors ahead: the workers catch up before its first step.
		{"v1.30.0", "v1.33.1", []string{"v1.34.0"}, []string{"v1.33.1", "v1.34.0"}},
		{"v1.30.0", "v1.33.1", []string{"v1.34.0", "v1.35.2", "v1.36.0"}, []string{"v1.33.1", "v1.36.0"}},
	} {
		t.Run(tc.workers+"-"+tc.from+"-"+strings.Join(tc.steps, ","), func(t *testing.T) {
			got, err := workerPlan(tc.workers, tc.from, tc.steps)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestLowest(t *testing.T) {
	got, err := lowest([]string{"v1.32.10", "v1.32.9", "v1.33.0"})
	require.NoError(t, err)
	assert.Equal(t, "v1.32.9", got)
	got, err = lowest(nil)
	require.NoError(t, err)
	assert.Equal(t, "", got)
	_, err = lowest([]string{"1.2"})
	assert.Error(t, err)
}

// TestWorkerStepsMatchWhatPoolsDo: the worker steps announced at the start of an upgrade are the
// versions the pools then roll out, in order.
func TestWorkerStepsMatchWhatPoolsDo(t *testing.T) {
	for _, tc := range []struct {
		target   string
		versions []string
	}{
		{"v1.33.2", []string{"v1.28.9", "v1.29.9", "v1.30.9", "v1.31.9", "v1.32.9", "v1.33.2"}},
		{"v1.30.9", []string{"v1.28.9", "v1.29.9", "v1.30.9"}},
		{"v1.29.0", nil},
	} {
		target, versions := tc.target, tc.versions
		in := Input{Target: target, KubernetesVersions: versions}
		w := newWorld("v1.28.9", "md-0", "md-1")
		in.ControlPlane, in.Pools = w.cp, w.pools
		start, err := Compute(in)
		require.NoError(t, err)
		var rolled []string
		for _, round := range w.run(t, in) {
			for _, change := range strings.Fields(round) {
				if v, ok := strings.CutPrefix(change, "md-0→"); ok {
					rolled = append(rolled, v)
				}
			}
		}
		assert.Equal(t, rolled, start.WorkerSteps, "upgrade to %s", target)
	}
}

// listExtension answers GenerateUpgradePlan like a ClusterClass's kubernetesVersions would: the
// last patch of every minor up to the target. With everyStep the workers take every step too.
func listExtension(t *testing.T, versions []string, everyStep bool) func(cp, workers, target string) ExternalPlan {
	return func(cp, workers, target string) ExternalPlan {
		steps, err := Plan(cp, target, versions)
		require.NoError(t, err)
		p := ExternalPlan{ControlPlane: steps}
		if everyStep && workers != target {
			if cp != workers {
				p.Workers = append(p.Workers, cp) // catch up first
			}
			p.Workers = append(p.Workers, steps...)
		}
		return p
	}
}

// TestExternalPlan: a plan from GenerateUpgradePlan drives the upgrade as kubernetesVersions
// would; when it also lists worker steps, the workers take exactly those (and the control plane
// waits for them at each).
func TestExternalPlan(t *testing.T) {
	versions := []string{"v1.30.5", "v1.31.1", "v1.31.4", "v1.32.0", "v1.32.2"}
	w := newWorld("v1.30.5", "md-0", "md-1")
	w.extension = listExtension(t, versions, false)
	got := w.run(t, Input{Target: "v1.32.2"})
	assert.Equal(t, []string{"cp→v1.31.4", "cp→v1.32.2", "md-0→v1.32.2", "md-1→v1.32.2"}, got, "workers skip the step within the skew")

	w = newWorld("v1.30.5", "md-0", "md-1")
	w.extension = listExtension(t, versions, true)
	got = w.run(t, Input{Target: "v1.32.2"})
	assert.Equal(t, []string{"cp→v1.31.4", "md-0→v1.31.4", "md-1→v1.31.4", "cp→v1.32.2", "md-0→v1.32.2", "md-1→v1.32.2"}, got,
		"the workers follow every step the extension lists for them")

	five := []string{"v1.28.9", "v1.29.9", "v1.30.9", "v1.31.9", "v1.32.9", "v1.33.2"}
	w = newWorld("v1.28.9", "md-0")
	w.extension = listExtension(t, five, false)
	got = w.run(t, Input{Target: "v1.33.2"})
	assert.Equal(t, []string{"cp→v1.29.9", "cp→v1.30.9", "cp→v1.31.9", "md-0→v1.31.9", "cp→v1.32.9", "cp→v1.33.2", "md-0→v1.33.2"}, got,
		"defaulted worker steps keep the workers within the skew")

	// The extension takes precedence over kubernetesVersions.
	w = newWorld("v1.30.5", "md-0")
	w.extension = listExtension(t, versions, true)
	got = w.run(t, Input{Target: "v1.32.2", KubernetesVersions: []string{"v1.30.5", "v1.31.1", "v1.32.2"}})
	assert.Equal(t, []string{"cp→v1.31.4", "md-0→v1.31.4", "cp→v1.32.2", "md-0→v1.32.2"}, got)

	// What BeforeClusterUpgrade announces is what the pools then do.
	w = newWorld("v1.30.5", "md-0")
	in := Input{Target: "v1.32.2", ControlPlane: w.cp, Pools: w.pools}
	plan, err := CheckExternalPlan("v1.30.5", "v1.30.5", "v1.32.2", listExtension(t, versions, true)("v1.30.5", "v1.30.5", "v1.32.2"))
	require.NoError(t, err)
	in.External = &plan
	start, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, []string{"v1.31.4", "v1.32.2"}, start.WorkerSteps)
	assert.Equal(t, []string{"v1.31.4", "v1.32.2"}, start.ControlPlaneSteps)
}

func TestCheckExternalPlan(t *testing.T) {
	for _, tc := range []struct {
		name                string
		cp, workers, target string
		plan                ExternalPlan
		wantWorkers         []string
		err                 string
	}{
		{name: "one step, workers defaulted", cp: "v1.31.2", workers: "v1.31.2", target: "v1.32.4",
			plan: ExternalPlan{ControlPlane: []string{"v1.32.4"}}, wantWorkers: []string{"v1.32.4"}},
		{name: "chained, workers defaulted within the skew", cp: "v1.30.0", workers: "v1.30.0", target: "v1.34.0",
			plan:        ExternalPlan{ControlPlane: []string{"v1.31.1", "v1.32.1", "v1.33.1", "v1.34.0"}},
			wantWorkers: []string{"v1.33.1", "v1.34.0"}},
		{name: "explicit workers kept", cp: "v1.30.0", workers: "v1.30.0", target: "v1.32.0",
			plan:        ExternalPlan{ControlPlane: []string{"v1.31.1", "v1.32.0"}, Workers: []string{"v1.31.1", "v1.32.0"}},
			wantWorkers: []string{"v1.31.1", "v1.32.0"}},
		{name: "control plane done, workers behind", cp: "v1.32.0", workers: "v1.31.0", target: "v1.32.0",
			wantWorkers: []string{"v1.32.0"}},
		{name: "workers may take the control plane's current version", cp: "v1.33.0", workers: "v1.30.0", target: "v1.34.0",
			plan:        ExternalPlan{ControlPlane: []string{"v1.34.0"}},
			wantWorkers: []string{"v1.33.0", "v1.34.0"}},
		{name: "no pools", cp: "v1.31.0", target: "v1.32.0", plan: ExternalPlan{ControlPlane: []string{"v1.32.0"}}},

		{name: "empty plan", cp: "v1.31.0", workers: "v1.31.0", target: "v1.32.0",
			err: "controlPlaneUpgrades: empty, but the upgrade goes from v1.31.0 to v1.32.0"},
		{name: "not newer", cp: "v1.31.0", target: "v1.32.0", plan: ExternalPlan{ControlPlane: []string{"v1.31.0", "v1.32.0"}},
			err: "controlPlaneUpgrades[0]: v1.31.0 must be newer than v1.31.0"},
		{name: "skips a minor", cp: "v1.30.0", target: "v1.32.0", plan: ExternalPlan{ControlPlane: []string{"v1.32.0"}},
			err: "controlPlaneUpgrades[0]: v1.32.0 is 2 minors past v1.30.0; at most 1 at a time"},
		{name: "does not end at the target", cp: "v1.30.0", target: "v1.32.0", plan: ExternalPlan{ControlPlane: []string{"v1.31.0"}},
			err: "controlPlaneUpgrades: the last step is v1.31.0, not the target v1.32.0"},
		{name: "bad version", cp: "v1.30.0", target: "v1.31.0", plan: ExternalPlan{ControlPlane: []string{"1.31.0"}},
			err: `controlPlaneUpgrades[0]: "1.31.0" is not a version`},
		{name: "steps while at the target", cp: "v1.32.0", workers: "v1.32.0", target: "v1.32.0", plan: ExternalPlan{ControlPlane: []string{"v1.32.0"}},
			err: "controlPlaneUpgrades: the control plane already runs v1.32.0"},
		{name: "worker step unknown", cp: "v1.30.0", workers: "v1.30.0", target: "v1.32.0",
			plan: ExternalPlan{ControlPlane: []string{"v1.31.1", "v1.32.0"}, Workers: []string{"v1.31.0", "v1.32.0"}},
			err:  "workersUpgrades[0]: v1.31.0 is neither the control plane's version nor one of its steps"},
		{name: "workers beyond the skew", cp: "v1.30.0", workers: "v1.30.0", target: "v1.34.0",
			plan: ExternalPlan{ControlPlane: []string{"v1.31.1", "v1.32.1", "v1.33.1", "v1.34.0"}, Workers: []string{"v1.34.0"}},
			err:  "workersUpgrades[0]: v1.34.0 is 4 minors past v1.30.0; at most 3 at a time"},
		{name: "worker steps without pools to move", cp: "v1.31.0", target: "v1.32.0",
			plan: ExternalPlan{ControlPlane: []string{"v1.32.0"}, Workers: []string{"v1.32.0"}},
			err:  "workersUpgrades: no worker pool needs to move to v1.32.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckExternalPlan(tc.cp, tc.workers, tc.target, tc.plan)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.plan.ControlPlane, got.ControlPlane)
			assert.Equal(t, tc.wantWorkers, got.Workers)
		})
	}
}

// TestMachineDeploymentUpgradingFromMachines: where Machines are known, a MachineDeployment is
// upgrading while one of its Machines or their Nodes runs another version (Cluster API's
// IsMachineDeploymentUpgrading), whatever its replica counts say; one without Machines or a status
// yet is not. Where they are not known, the replica counts stand in.
func TestMachineDeploymentUpgradingFromMachines(t *testing.T) {
	v := "v1.34.0"
	md := func(replicas, updated int32) *clusterv1.MachineDeployment {
		m := &clusterv1.MachineDeployment{}
		m.Name, m.Generation = "md-0-abc", 2
		m.Spec.Replicas, m.Spec.Template.Spec.Version = &replicas, v
		m.Status.ObservedGeneration, m.Status.Replicas = 2, &updated
		m.Status.Deprecated = &clusterv1.MachineDeploymentDeprecatedStatus{V1Beta1: &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{UpdatedReplicas: updated}}
		return m
	}
	for _, tc := range []struct {
		name     string
		md       *clusterv1.MachineDeployment
		machines MachineVersions
		want     bool
	}{
		{"every Machine and Node at the version", md(2, 0), MachineVersions{"md-0-abc": {v, v, v, v}}, false},
		{"a Machine on the old version", md(2, 2), MachineVersions{"md-0-abc": {v, v, "v1.33.0", "v1.33.0"}}, true},
		{"a Node still on the old kubelet", md(1, 1), MachineVersions{"md-0-abc": {v, "v1.33.0"}}, true},
		{"a Node not reporting yet", md(1, 1), MachineVersions{"md-0-abc": {v, ""}}, false},
		{"no Machines yet, no status", md(3, 0), MachineVersions{}, false},
		{"another MachineDeployment's Machines", md(1, 1), MachineVersions{"md-1-xyz": {"v1.33.0"}}, false},
		{"Machines not known: replicas not updated", md(2, 1), nil, true},
		{"Machines not known: replicas updated", md(2, 2), nil, false},
	} {
		assert.Equal(t, tc.want, mdPool("md-0", tc.md, tc.machines).RollingOut, tc.name)
	}
}

// TestMachinePoolUpgradingFromNodes: where a MachinePool's Nodes were read, it is upgrading while
// one of them runs another kubelet version, or reports none (Cluster API's IsMachinePoolUpgrading
// compares each Node's kubelet version with the MachinePool's), whatever its replica counts say.
// Beside Cluster API (Machines served) one without Nodes is not upgrading: Cluster API reads
// Nodes only through status.nodeRefs. Otherwise, as with the simulated providers, the replica
// counts and phase stand in.
func TestMachinePoolUpgradingFromNodes(t *testing.T) {
	v := "v1.34.0"
	mp := func(ready int32, nodes ...string) *clusterv1.MachinePool {
		m := &clusterv1.MachinePool{}
		m.Name, m.Generation = "mp-0-abc", 1
		replicas := int32(2)
		m.Spec.Replicas, m.Spec.Template.Spec.Version = &replicas, v
		m.Status.ObservedGeneration = 1
		m.Status.Deprecated = &clusterv1.MachinePoolDeprecatedStatus{V1Beta1: &clusterv1.MachinePoolV1Beta1DeprecatedStatus{ReadyReplicas: ready}}
		for _, n := range nodes {
			m.Status.NodeRefs = append(m.Status.NodeRefs, corev1.ObjectReference{Kind: "Node", Name: n})
		}
		return m
	}
	for _, tc := range []struct {
		name           string
		mp             *clusterv1.MachinePool
		machinesServed bool
		nodes          NodeVersions
		want           bool
	}{
		{"every Node at the version, replicas not ready", mp(1, "n1", "n2"), true, NodeVersions{"mp-0-abc": {v, v}}, false},
		{"a Node on the old kubelet, replicas ready", mp(2, "n1", "n2"), true, NodeVersions{"mp-0-abc": {v, "v1.33.0"}}, true},
		{"a Node not reporting a version", mp(2, "n1"), true, NodeVersions{"mp-0-abc": {""}}, true},
		{"the simulated providers' Nodes count too", mp(1, "n1"), false, NodeVersions{"mp-0-abc": {v}}, false},
		{"beside Cluster API, no Nodes yet", mp(0), true, nil, false},
		{"another MachinePool's Nodes", mp(0), true, NodeVersions{"mp-1-xyz": {"v1.33.0"}}, false},
		{"nothing known: replicas not ready", mp(1), false, nil, true},
		{"nothing known: replicas ready", mp(2), false, nil, false},
	} {
		p := mpPool("mp-0", tc.mp, tc.machinesServed, tc.nodes)
		assert.Equal(t, tc.want, p.RollingOut, tc.name)
		assert.Equal(t, tc.mp.Status.Deprecated.V1Beta1.ReadyReplicas != 2, p.Converging, tc.name+": converging keeps the replica rule")
	}
}
