//go:build integration

package integration

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// TestChainedUpgrade: with kubernetesVersions in the class, an upgrade over two minors steps the
// control plane through the last patch of each minor, then upgrades the three pools straight to the
// target (within the supported skew they skip the intermediate step): with the default
// concurrency one MachineDeployment at a time in topology order and the MachinePool beside the
// first (each kind has the concurrency), all three at once with upgrade-concurrency 2.
func TestChainedUpgrade(t *testing.T) {
	for _, concurrency := range []int{1, 2} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			chainedUpgrade(t, concurrency)
		})
	}
}

func chainedUpgrade(t *testing.T, concurrency int) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 2 * time.Second}})
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			require.NoError(t, unstructured.SetNestedStringSlice(u.Object, []string{"v1.31.2", "v1.32.1", "v1.32.4", "v1.33.1"}, "spec", "kubernetesVersions"))
		}
	})
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" && concurrency > 1 {
			u.SetAnnotations(map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": fmt.Sprint(concurrency)})
		}
	})
	e.waitReconciled("demo", 90*time.Second)

	e.setVersion("demo", "v1.33.1")

	e.eventually(120*time.Second, "every part rolled out v1.33.1", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.33.1")
		return len(at) == 4, fmt.Sprintf("%v; %s", at, msg)
	})
	e.waitReconciled("demo", 60*time.Second)

	// Once the Cluster said ClusterUpgrading, the starter signalled the upgrade's own workflow,
	// not the Cluster's workflow to forward each event.
	var direct, forwarded int
	for _, ev := range e.history(workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.33.1")).Events {
		if sig := ev.GetWorkflowExecutionSignaledEventAttributes(); sig != nil && sig.GetSignalName() == workflows.SignalClusterEvent {
			if sig.GetExternalWorkflowExecution() != nil {
				forwarded++
			} else {
				direct++
			}
		}
	}
	t.Logf("events to the upgrade: %d from the starter, %d forwarded", direct, forwarded)
	assert.Greater(t, direct, forwarded, "events signalled to the upgrade directly (%d) and forwarded by the Cluster's workflow (%d)", direct, forwarded)

	// What each part reported, in the order the rollouts finished.
	var seq []string
	finished := map[string]time.Time{}
	versions := map[string][]string{}
	for _, tr := range e.sim.Transitions() {
		versions[tr.Kind] = append(versions[tr.Kind], tr.Version)
		if tr.Version != "v1.31.2" {
			seq = append(seq, tr.Kind+"/"+poolOf(tr)+"@"+tr.Version)
			finished[poolOf(tr)] = tr.At
		}
	}
	assert.Equal(t, []string{"v1.31.2", "v1.32.4", "v1.33.1"}, versions["SimControlPlane"], "control plane stepped through v1.32.4")
	for _, kind := range []string{"MachineDeployment", "MachinePool"} {
		for _, v := range versions[kind] {
			assert.NotEqual(t, "v1.32.4", v, "%s never ran the intermediate step", kind)
		}
	}
	require.Len(t, seq, 5, fmt.Sprint(seq))
	assert.Equal(t, "SimControlPlane/@v1.32.4", seq[0])
	assert.Equal(t, "SimControlPlane/@v1.33.1", seq[1])
	pools := seq[2:]
	gap := func(a, b string) time.Duration {
		d := finished[a].Sub(finished[b])
		if d < 0 {
			d = -d
		}
		return d
	}
	// MachineDeployments and MachinePools each have the concurrency (Cluster API's UpgradeTracker
	// keeps one per kind): mp-0 goes with the first MachineDeployments.
	if concurrency == 1 {
		assert.ElementsMatch(t, []string{"MachineDeployment/md-0@v1.33.1", "MachinePool/mp-0@v1.33.1"}, pools[:2],
			"md-0 and the MachinePool first")
		assert.Equal(t, "MachineDeployment/md-1@v1.33.1", pools[2], "md-1 after md-0, in topology order")
		assert.Less(t, gap("md-0", "mp-0"), 1500*time.Millisecond, "md-0 and mp-0 rolled out together (rollouts take 2s)")
		assert.GreaterOrEqual(t, finished["md-1"].Sub(finished["md-0"]), 1500*time.Millisecond, "md-1 waited for md-0's slot")
		return
	}
	assert.ElementsMatch(t, []string{"MachineDeployment/md-0@v1.33.1", "MachineDeployment/md-1@v1.33.1", "MachinePool/mp-0@v1.33.1"}, pools)
	assert.Less(t, gap("md-0", "md-1"), 1500*time.Millisecond, "md-0 and md-1 rolled out together (rollouts take 2s)")
	assert.Less(t, gap("md-0", "mp-0"), 1500*time.Millisecond, "and mp-0 with them, under its own concurrency")
}

// setVersion moves a Cluster's spec.topology.version.
func (e *env) setVersion(name, version string) {
	e.t.Helper()
	c := e.cluster(name)
	c.Spec.Topology.Version = version
	e.updateTopology(c)
}

// hookedCluster starts a Runtime Extension serving the upgrade hooks, registers it, and creates the
// sample Cluster (its class listing kubernetesVersions, when given) up to reconciled.
func (e *env) hookedCluster(kubernetesVersions ...string) *extension.Server {
	e.t.Helper()
	ext, err := extension.Start(upgradeHooks...)
	require.NoError(e.t, err)
	e.t.Cleanup(ext.Close)
	e.registerExtension(ext)
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" && len(kubernetesVersions) > 0 {
			require.NoError(e.t, unstructured.SetNestedStringSlice(u.Object, kubernetesVersions, "spec", "kubernetesVersions"))
		}
	})
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	return ext
}

// upgradeProgress says which parts have rolled out version (pool names; "" is the control plane)
// and the Cluster's TopologyReconciled message.
func (e *env) upgradeProgress(version string) (map[string]bool, string) {
	msg := ""
	if cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled"); cond != nil {
		msg = cond.Message
	}
	at := map[string]bool{}
	for _, tr := range e.sim.Transitions() {
		if tr.Version == version {
			at[poolOf(tr)] = true
		}
	}
	return at, msg
}

func poolOf(tr provider.Transition) string {
	if tr.Kind == "SimControlPlane" {
		return ""
	}
	// Names are <cluster>-<pool>-<random>.
	parts := strings.Split(tr.Name, "-")
	if len(parts) < 3 {
		return tr.Name
	}
	return strings.Join(parts[1:len(parts)-1], "-")
}

// TestUpgradeConcurrencyAndDefer: with upgrade-concurrency 2 on the Cluster, two pools upgrade at
// once; a pool annotated defer-upgrade stays at its version (and does not hold the others) until
// the annotation is removed.
func TestUpgradeConcurrencyAndDefer(t *testing.T) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 2 * time.Second}})
	e.applyFile(classFile)
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetAnnotations(map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "2"})
			mds, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "workers", "machineDeployments")
			md1 := mds[1].(map[string]any)
			md1["metadata"] = map[string]any{"labels": map[string]any{"pool": "deferred-one"},
				"annotations": map[string]any{"topology.cluster.x-k8s.io/defer-upgrade": ""}}
			require.NoError(t, unstructured.SetNestedSlice(u.Object, mds, "spec", "topology", "workers", "machineDeployments"))
		}
	})
	e.waitReconciled("demo", 90*time.Second)

	e.setVersion("demo", "v1.32.0")
	e.eventually(90*time.Second, "md-0 and mp-0 upgraded, md-1 deferred", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.32.0")
		return at["md-0"] && at["mp-0"] && strings.Contains(msg, "Worker pools upgrade deferred: md-1"), fmt.Sprintf("%v %q", at, msg)
	})
	var md0, mp0 provider.Transition
	for _, tr := range e.sim.Transitions() {
		switch {
		case tr.Version != "v1.32.0":
		case poolOf(tr) == "md-0":
			md0 = tr
		case poolOf(tr) == "mp-0":
			mp0 = tr
		case poolOf(tr) == "md-1":
			t.Fatalf("md-1 upgraded while deferred")
		}
	}
	gap := md0.At.Sub(mp0.At)
	if gap < 0 {
		gap = -gap
	}
	assert.Less(t, gap, 1500*time.Millisecond, "with concurrency 2 the two pools rolled out together (rollouts take 2s)")

	// Lift the deferral: md-1 follows.
	c := e.cluster("demo")
	c.Spec.Topology.Workers.MachineDeployments[1].Metadata.Annotations = nil
	e.updateTopology(c)
	e.eventually(60*time.Second, "md-1 upgraded once no longer deferred", func() (bool, string) {
		for _, tr := range e.sim.Transitions() {
			if tr.Version == "v1.32.0" && poolOf(tr) == "md-1" {
				return true, ""
			}
		}
		return false, "not yet"
	})
	e.waitReconciled("demo", 60*time.Second)
}

// TestVersionBumpMidUpgrade: a new version set while the pools upgrade to the previous one, as
// Cluster API v1.14.2 handles it (computeControlPlaneVersion, computeMachineDeploymentVersion): a
// pool already rolling out to v1.32.0 finishes it, and the control plane moves on to v1.33.0 only
// once no pool is rolling out; a pool still waiting may go straight to v1.33.0 (fewer rollouts,
// within the version skew). No pool takes a version twice or goes back, and all end at v1.33.0
// (the first upgrade's workflow is superseded by a new one).
func TestVersionBumpMidUpgrade(t *testing.T) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 2 * time.Second}})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	e.setVersion("demo", "v1.32.0")
	e.eventually(60*time.Second, "control plane at v1.32.0, first pool upgrading", func() (bool, string) {
		for _, tr := range e.sim.Transitions() {
			if tr.Kind == "SimControlPlane" && tr.Version == "v1.32.0" {
				return true, ""
			}
		}
		return false, "control plane not yet at v1.32.0"
	})
	e.setVersion("demo", "v1.33.0")

	e.eventually(120*time.Second, "everything at v1.33.0", func() (bool, string) {
		n := 0
		for _, tr := range e.sim.Transitions() {
			if tr.Version == "v1.33.0" {
				n++
			}
		}
		return n == 4, fmt.Sprint(n, " parts at v1.33.0")
	})
	var cpAt133 time.Time
	pools := map[string][]string{}
	reached132 := map[string]time.Time{}
	for _, tr := range e.sim.Transitions() {
		if tr.Kind == "SimControlPlane" && tr.Version == "v1.33.0" {
			cpAt133 = tr.At
		}
		if tr.Kind != "SimControlPlane" {
			pools[poolOf(tr)] = append(pools[poolOf(tr)], tr.Version)
			if tr.Version == "v1.32.0" {
				reached132[poolOf(tr)] = tr.At
			}
		}
	}
	skipped := 0
	for _, p := range []string{"md-0", "md-1", "mp-0"} {
		path := pools[p]
		require.NotEmpty(t, path, p)
		assert.Equal(t, "v1.31.2", path[0], p)
		assert.Equal(t, "v1.33.0", path[len(path)-1], "%s ends at the new version", p)
		assert.Subset(t, []string{"v1.31.2", "v1.32.0", "v1.33.0"}, path, p)
		assert.True(t, sort.SliceIsSorted(path, func(i, j int) bool { return path[i] < path[j] }) && len(path) == len(slices.Compact(slices.Clone(path))),
			"%s took each version once, in order: %v", p, path)
		if at, ok := reached132[p]; ok {
			assert.True(t, at.Before(cpAt133), "%s finished v1.32.0 before the control plane moved on", p)
		} else {
			skipped++
		}
	}
	t.Logf("pools' versions: %v (%d went straight to v1.33.0)", pools, skipped)
}

// TestUpgradeHoldSequence: hold-upgrade-sequence on the first MachineDeployment holds it and the
// MachineDeployments after it once the control plane is upgraded; the MachinePools are their own
// sequence and go ahead. Lifting the hold lets the MachineDeployments follow, in order.
func TestUpgradeHoldSequence(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			mds, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "workers", "machineDeployments")
			mds[0].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"pool": "general"},
				"annotations": map[string]any{"topology.cluster.x-k8s.io/hold-upgrade-sequence": ""}}
			require.NoError(t, unstructured.SetNestedSlice(u.Object, mds, "spec", "topology", "workers", "machineDeployments"))
		}
	})
	e.waitReconciled("demo", 90*time.Second)
	for _, md := range e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo") {
		assert.NotContains(t, md.GetAnnotations(), "topology.cluster.x-k8s.io/hold-upgrade-sequence", "the annotation stays on the topology")
	}

	e.setVersion("demo", "v1.32.0")
	e.eventually(90*time.Second, "control plane and mp-0 upgraded, the MachineDeployments held", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.32.0")
		return at[""] && at["mp-0"] && strings.Contains(msg, "Worker pools upgrade held: md-0, md-1"),
			fmt.Sprintf("%v %q", at, msg)
	})
	e.runPasses("demo") // passes over the held pools: nothing held moves
	for _, tr := range e.sim.Transitions() {
		if tr.Kind == "MachineDeployment" && tr.Version == "v1.32.0" {
			t.Fatalf("%s upgraded while held", poolOf(tr))
		}
	}

	c := e.cluster("demo")
	c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = nil
	e.updateTopology(c)
	e.eventually(90*time.Second, "the MachineDeployments follow once released", func() (bool, string) {
		var order []string
		for _, tr := range e.sim.Transitions() {
			if tr.Kind == "MachineDeployment" && tr.Version == "v1.32.0" {
				order = append(order, poolOf(tr))
			}
		}
		return len(order) == 2, fmt.Sprint(order)
	})
	var order []string
	for _, tr := range e.sim.Transitions() {
		if tr.Kind == "MachineDeployment" && tr.Version == "v1.32.0" {
			order = append(order, poolOf(tr))
		}
	}
	assert.Equal(t, []string{"md-0", "md-1"}, order, "in topology order")
	e.waitReconciled("demo", 60*time.Second)
}

// TestVersionErrorNamesObjectAndField: a downgrade written where no webhook refuses it is reported
// on TopologyReconciled with the Cluster and the field, and nothing moves.
func TestVersionErrorNamesObjectAndField(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	e.setVersion("demo", "v1.30.0")
	want := "Cluster " + e.ns + "/demo: spec.topology.version v1.30.0: v1.30.0 is older than v1.31.2, the version the control plane was told to run: downgrades are not supported"
	e.eventually(30*time.Second, "the downgrade reported", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Message == want, fmt.Sprint(cond)
	})
	v, _, _ := unstructured.NestedString(e.get(e.cluster("demo").Spec.ControlPlaneRef).Object, "spec", "version")
	assert.Equal(t, "v1.31.2", v, "nothing moved")
}

// TestTwoMinorJumpRefused: without kubernetesVersions (or a plan extension) a version two minors
// ahead, written where no webhook refuses it, does not move the control plane two minors at once:
// the pass refuses it on TopologyReconciled, naming the Cluster and the field; a valid version
// afterwards is taken up as usual.
func TestTwoMinorJumpRefused(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	e.setVersion("demo", "v1.33.0")
	e.eventually(30*time.Second, "the jump refused", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Message == "Cluster "+e.ns+"/demo: spec.topology.version v1.33.0: the control plane runs v1.31.2 and can move at most one minor at a time: "+
			"list the versions in between in the ClusterClass's spec.kubernetesVersions (or name a GenerateUpgradePlan extension) to chain the upgrade", fmt.Sprint(cond)
	})
	cpRef := e.cluster("demo").Spec.ControlPlaneRef
	v, _, _ := unstructured.NestedString(e.get(cpRef).Object, "spec", "version")
	assert.Equal(t, "v1.31.2", v, "nothing moved")

	e.setVersion("demo", "v1.32.0")
	e.eventually(60*time.Second, "the control plane at v1.32.0", func() (bool, string) {
		v, _, _ := unstructured.NestedString(e.get(cpRef).Object, "status", "version")
		return v == "v1.32.0", v
	})
}
