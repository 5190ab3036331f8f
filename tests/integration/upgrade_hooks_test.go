//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// chainedUpgradeHooks are the hook calls of an upgrade from v1.31.2 to v1.33.1 through v1.32.4,
// as "Hook(version)", in Cluster API's order.
var chainedUpgradeHooks = []string{
	"BeforeClusterUpgrade(v1.33.1)",
	"BeforeControlPlaneUpgrade(v1.32.4)", "AfterControlPlaneUpgrade(v1.32.4)",
	"BeforeControlPlaneUpgrade(v1.33.1)", "AfterControlPlaneUpgrade(v1.33.1)",
	"BeforeWorkersUpgrade(v1.33.1)", "AfterWorkersUpgrade(v1.33.1)",
	"AfterClusterUpgrade(v1.33.1)",
}

// TestUpgradeHooks: a chained upgrade over two minors with BeforeClusterUpgrade (blocking for a
// while), AfterControlPlaneUpgrade after each control plane step and AfterClusterUpgrade at the
// end, against a real HTTPS extension. Hook calls and version changes interleave in order.
func TestUpgradeHooks(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	assert.Empty(t, ext.Calls(""), "creating a Cluster calls no upgrade hook")

	ext.BlockFor(hooksv1.BeforeClusterUpgrade, 3*time.Second, "draining traffic")
	bumped := time.Now()
	e.setVersion("demo", "v1.33.1")

	sawPending := ""
	// What `starter status` printed along the way, one normalised line each.
	statusLines := map[string]bool{}
	e.eventually(120*time.Second, "upgrade done and AfterClusterUpgrade called", func() (bool, string) {
		if v := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]; v != "" {
			sawPending = v
		}
		for _, l := range e.statusLines("demo") {
			statusLines[l] = true
		}
		n := 0
		for _, tr := range e.sim.Transitions() {
			if tr.Version == "v1.33.1" {
				n++
			}
		}
		return n == 4 && len(ext.Calls(hooksv1.AfterClusterUpgrade)) > 0, fmt.Sprintf("%d parts at v1.33.1, calls %d", n, len(ext.Calls("")))
	})

	assert.Contains(t, sawPending, "AfterClusterUpgrade", "the pending-hooks annotation showed the hooks owed during the upgrade")
	e.eventually(10*time.Second, "pending-hooks annotation cleared", func() (bool, string) {
		v, ok := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]
		return !ok, v
	})

	// The upgrade ran as its own workflow, with a readable ID.
	upID := workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.33.1")
	assert.Equal(t, "topology/"+e.ns+"/demo/upgrade/v1.33.1", upID)
	e.eventually(10*time.Second, "upgrade workflow completed", func() (bool, string) {
		d, err := tc.DescribeWorkflowExecution(context.Background(), upID, "")
		if err != nil {
			return false, err.Error()
		}
		return d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED &&
			d.WorkflowExecutionInfo.Type.Name == workflows.ClusterUpgradeWorkflowType, d.WorkflowExecutionInfo.Status.String()
	})

	before := ext.Calls(hooksv1.BeforeClusterUpgrade)
	require.NotEmpty(t, before)
	approved := before[len(before)-1].At
	assert.GreaterOrEqual(t, approved.Sub(bumped), 2500*time.Millisecond, "the upgrade waited for BeforeClusterUpgrade")
	body := before[0].Body
	assert.Equal(t, "v1.31.2", body["fromKubernetesVersion"])
	assert.Equal(t, "v1.33.1", body["toKubernetesVersion"])
	assert.Equal(t, []any{map[string]any{"version": "v1.32.4"}, map[string]any{"version": "v1.33.1"}}, body["controlPlaneUpgrades"])
	assert.Equal(t, []any{map[string]any{"version": "v1.33.1"}}, body["workersUpgrades"], "the pools go straight to the target")

	// Every hook call, in order, with the version it was about (repeats while blocked folded).
	calls := hookCalls(ext)
	var order []string
	at := map[string]time.Time{}
	count := map[string]int{}
	for i, key := range calls {
		count[key]++
		if len(order) == 0 || order[len(order)-1] != key {
			order = append(order, key)
			at[key] = ext.Calls("")[i].At
		}
	}
	assert.Equal(t, chainedUpgradeHooks, order, "Cluster API's hook order over a chained upgrade")
	// Each hook is called once per step; only BeforeClusterUpgrade repeats (it blocked).
	for key, n := range count {
		if key != "BeforeClusterUpgrade(v1.33.1)" {
			assert.Equal(t, 1, n, "%s called once", key)
		}
	}
	assert.GreaterOrEqual(t, count["BeforeClusterUpgrade(v1.33.1)"], 2, "BeforeClusterUpgrade retried while it blocked")
	afterCPAt := map[string]time.Time{"v1.32.4": at["AfterControlPlaneUpgrade(v1.32.4)"], "v1.33.1": at["AfterControlPlaneUpgrade(v1.33.1)"]}

	var cp []provider.Transition
	var pools []provider.Transition
	for _, tr := range e.sim.Transitions() {
		if tr.Version == "v1.31.2" {
			continue
		}
		if tr.Kind == "SimControlPlane" {
			cp = append(cp, tr)
		} else {
			pools = append(pools, tr)
		}
	}
	require.Len(t, cp, 2)
	require.Len(t, pools, 3)
	assert.True(t, cp[0].At.After(approved), "the control plane moved only after BeforeClusterUpgrade passed")
	assert.True(t, afterCPAt["v1.32.4"].Before(cp[1].At), "AfterControlPlaneUpgrade(v1.32.4) before the next step")
	assert.True(t, afterCPAt["v1.33.1"].Before(pools[0].At), "AfterControlPlaneUpgrade(v1.33.1) before the workers")
	afterCluster := ext.Calls(hooksv1.AfterClusterUpgrade)
	require.Len(t, afterCluster, 1, "AfterClusterUpgrade once")
	assert.True(t, afterCluster[0].At.After(pools[len(pools)-1].At), "AfterClusterUpgrade after the last pool")
	assert.True(t, at["BeforeWorkersUpgrade(v1.33.1)"].Before(pools[0].At), "BeforeWorkersUpgrade before the first pool")
	assert.True(t, at["AfterWorkersUpgrade(v1.33.1)"].After(pools[len(pools)-1].At), "AfterWorkersUpgrade after the last pool")
	assert.Equal(t, "v1.33.1", afterCluster[0].Body["kubernetesVersion"])

	// `starter status` showed the upgrade step by step: the hook holding it and why, the control
	// plane at each step of the plan, and the upgrade's own workflow.
	for _, want := range []string{
		"Upgrade v1.31.2 -> v1.33.1",
		"Upgrade workflow " + upID,
		"Held by hook BeforeClusterUpgrade",
		"Upgrade plan [v1.31.2] -> v1.32.4 -> v1.33.1",
		"Upgrade plan v1.31.2 -> [v1.32.4] -> v1.33.1",
		"Upgrade plan v1.31.2 -> v1.32.4 -> [v1.33.1]",
		"Control plane step v1.31.2 -> v1.32.4",
		"Control plane step v1.32.4 -> v1.33.1",
	} {
		assert.True(t, statusLines[want], "starter status showed %q at some point; it showed:\n%s", want, strings.Join(slices.Sorted(maps.Keys(statusLines)), "\n"))
	}
	sawBlocked := false
	for l := range statusLines {
		if strings.HasPrefix(l, "Upgrade waits for hook BeforeClusterUpgrade asked to retry in") && strings.HasSuffix(l, "draining traffic") {
			sawBlocked = true
		}
	}
	assert.True(t, sawBlocked, "starter status said the upgrade waits for BeforeClusterUpgrade, and why")

	// Afterwards the Cluster's workflow holds the upgrade's hook log: every call, in order.
	var passed, blocked []string
	e.eventually(10*time.Second, "the upgrade's hook log in the Cluster's workflow", func() (bool, string) {
		passed, blocked = nil, nil
		for _, l := range e.statusLines("demo") {
			m := upgradeHookLine.FindStringSubmatch(l)
			switch {
			case m == nil:
			case strings.HasSuffix(m[1], ": passed"):
				passed = append(passed, strings.TrimSuffix(m[1], ": passed"))
			default:
				blocked = append(blocked, m[1])
			}
		}
		return len(passed) == len(chainedUpgradeHooks), strings.Join(passed, ", ")
	})
	assert.Equal(t, chainedUpgradeHooks, passed, "the hook log, as starter status prints it")
	require.NotEmpty(t, blocked)
	for _, l := range blocked {
		assert.True(t, strings.HasPrefix(l, "BeforeClusterUpgrade(v1.33.1): retry in"), "only BeforeClusterUpgrade blocked: %s", l)
	}
	e.recordHistory(workflows.WorkflowID(e.ns, "demo"), "cluster-with-upgrade.json")
	e.recordHistory(workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.33.1"), "upgrade-chained-hooks.json")
}

// upgradeHookLine is a hook log line of `starter status` about an upgrade hook: its time, then
// "Hook(version): outcome".
var upgradeHookLine = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\S+ (\w+Upgrade\(v[^)]+\): .*)$`)

// statusLines runs what `starter status` prints for a Cluster and returns its lines with the
// column padding folded to single spaces.
func (e *env) statusLines(name string) []string {
	e.t.Helper()
	var buf bytes.Buffer
	require.NoError(e.t, clusterstatus.Print(e.ctx, &buf, kc, tc, e.ns, name))
	var out []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// workflowRuns lists the runs of a workflow ID, newest first, by status ("Running",
// "ContinuedAsNew", "Completed", ...).
func workflowRuns(t *testing.T, id string) []string {
	t.Helper()
	resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: temporal.Namespace, Query: fmt.Sprintf("WorkflowId = %q", id)})
	require.NoError(t, err)
	var out []string
	for _, x := range resp.Executions {
		out = append(out, x.Status.String())
	}
	return out
}

// handOvers counts the runs of a Cluster's workflow that began by waiting for an upgrade an
// earlier run handed over (ClusterInput.Upgrade).
func handOvers(t *testing.T, id string) int {
	t.Helper()
	resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: temporal.Namespace, Query: fmt.Sprintf("WorkflowId = %q", id)})
	require.NoError(t, err)
	n := 0
	for _, x := range resp.Executions {
		it := tc.GetWorkflowHistory(context.Background(), id, x.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		first, err := it.Next()
		require.NoError(t, err)
		var in workflows.ClusterInput
		payloads := first.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
		if len(payloads) == 1 && json.Unmarshal(payloads[0].GetData(), &in) == nil && in.Upgrade != nil {
			n++
		}
	}
	return n
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// TestLongUpgradeContinuesAsNew: with a tiny history budget, both the Cluster's workflow and the
// upgrade continue as new during a chained upgrade (the Cluster's workflow hands the running
// upgrade to its next run). The upgrade is not disturbed: every hook once and in order, every
// part through its versions once, and the hook log survives.
func TestLongUpgradeContinuesAsNew(t *testing.T) {
	e := newEnv(t, envOptions{timing: workflows.Timing{PassesBeforeContinueAsNew: 3}, sim: provider.Options{RolloutDuration: 2 * time.Second}})
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	ext.BlockFor(hooksv1.BeforeClusterUpgrade, 4*time.Second, "change freeze")
	e.setVersion("demo", "v1.33.1")
	// The starter sends watch events to the running upgrade; those the Cluster's workflow still
	// gets (sent here directly, as the starter does until the Cluster says ClusterUpgrading) it
	// forwards, and they count toward its budget until it hands the upgrade over.
	id := workflows.WorkflowID(e.ns, "demo")
	upID := workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.33.1")
	e.eventually(30*time.Second, "the upgrade started", func() (bool, string) {
		return len(workflowRuns(t, upID)) > 0, ""
	})
	e.eventually(60*time.Second, "the Cluster's workflow handed the upgrade to its next run", func() (bool, string) {
		require.NoError(t, tc.SignalWorkflow(e.ctx, id, "", workflows.SignalClusterEvent, workflows.ClusterEvent{Source: "resync"}))
		n := handOvers(t, id)
		return n > 0, fmt.Sprint(n)
	})
	e.waitUpgraded(ext, "v1.33.1", 150*time.Second)
	e.eventually(10*time.Second, "pending-hooks annotation cleared", func() (bool, string) {
		v, ok := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]
		return !ok, v
	})
	e.runPasses("demo") // nothing more comes
	calls := hookCalls(ext)
	assert.Equal(t, chainedUpgradeHooks, folded(calls), "Cluster API's hook order across the hand-overs")
	assert.Equal(t, len(chainedUpgradeHooks)-1, len(calls)-count(calls, "BeforeClusterUpgrade(v1.33.1)"), "every other hook exactly once")
	e.assertChainedVersions()
	e.waitReconciled("demo", 30*time.Second)

	clusterRuns := workflowRuns(t, id)
	upgradeRuns := workflowRuns(t, upID)
	t.Logf("Cluster workflow runs: %d, upgrade workflow runs: %d", len(clusterRuns), len(upgradeRuns))
	assert.GreaterOrEqual(t, count(upgradeRuns, "ContinuedAsNew"), 1, "the upgrade continued as new: %v", upgradeRuns)
	assert.Equal(t, "Completed", upgradeRuns[0])
	assert.GreaterOrEqual(t, count(clusterRuns, "ContinuedAsNew"), 3, "%v", clusterRuns)

	// The hook log made it through every run into the Cluster's workflow.
	var logged []string
	e.eventually(10*time.Second, "the hook log in the Cluster's workflow", func() (bool, string) {
		logged = nil
		for _, l := range e.statusLines("demo") {
			if m := upgradeHookLine.FindStringSubmatch(l); m != nil && strings.HasSuffix(m[1], ": passed") {
				logged = append(logged, strings.TrimSuffix(m[1], ": passed"))
			}
		}
		return len(logged) == len(chainedUpgradeHooks), strings.Join(logged, ", ")
	})
	assert.Equal(t, chainedUpgradeHooks, logged)
}

// TestClusterWorkflowTerminatedMidUpgrade: an operator terminates a Cluster's workflow in the
// middle of an upgrade. The upgrade runs on (the starter sends it the watch events); when it
// ends with no Cluster workflow to take its answers, it starts a new one with them (a watch event
// that reaches the Cluster's workflow first starts one that finds the upgrade running and waits
// for it instead of starting another). Every hook once.
func TestClusterWorkflowTerminatedMidUpgrade(t *testing.T) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 3 * time.Second}})
	ext := e.startChainedUpgrade()
	id := workflows.WorkflowID(e.ns, "demo")
	require.NoError(t, tc.TerminateWorkflow(context.Background(), id, "", "operator test"))
	e.waitUpgraded(ext, "v1.33.1", 150*time.Second)
	e.eventually(30*time.Second, "a new Cluster workflow", func() (bool, string) {
		runs := workflowRuns(t, id)
		return len(runs) > 1 && runs[0] == "Running", fmt.Sprint(runs)
	})
	e.runPasses("demo")
	assert.Equal(t, chainedUpgradeHooks, hookCalls(ext), "each hook exactly once, in order")
	e.assertChainedVersions()
	upgradeRuns := workflowRuns(t, workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.33.1"))
	assert.Equal(t, []string{"Completed"}, upgradeRuns, "one upgrade, never started twice")
	runs := workflowRuns(t, id)
	assert.Equal(t, "Running", runs[0], "a new Cluster workflow runs: %v", runs)
	assert.Contains(t, runs, "Terminated")
	e.waitReconciled("demo", 30*time.Second)
	// The new run took the upgrade's answers: the after-hooks are not owed any more.
	_, pending := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]
	assert.False(t, pending)
}

// TestRevertedUpgradeEnds (#12 item 1): a version bump set back while its upgrade waits for a hook
// ends that upgrade, first while BeforeClusterUpgrade blocks, then while BeforeControlPlaneUpgrade
// does (after BeforeClusterUpgrade passed). No further hook is called for it, nothing moves, the
// after-hooks are not owed, and asking for the version again starts over with BeforeClusterUpgrade.
func TestRevertedUpgradeEnds(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	upID := workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.32.4")

	revert := func(blocking string) {
		t.Helper()
		ext.BlockFor(blocking, 10*time.Minute, "change freeze")
		e.setVersion("demo", "v1.32.4")
		e.eventually(60*time.Second, blocking+" called", func() (bool, string) {
			return len(ext.Calls(blocking)) > 0, strings.Join(hookCalls(ext), ", ")
		})
		e.setVersion("demo", "v1.31.2")
		var out workflows.UpgradeOutput
		e.eventually(60*time.Second, "the upgrade ended", func() (bool, string) {
			d, err := tc.DescribeWorkflowExecution(context.Background(), upID, "")
			if err != nil {
				return false, err.Error()
			}
			st := d.WorkflowExecutionInfo.Status
			if st != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				return false, st.String()
			}
			return tc.GetWorkflow(context.Background(), upID, "").Get(context.Background(), &out) == nil, st.String()
		})
		assert.Equal(t, "withdrawn: spec.topology.version is v1.31.2, not v1.32.4 any more", out.Ended)
		e.recordHistory(upID, "upgrade-withdrawn-"+strings.ToLower(blocking)+".json")
		calls := len(ext.Calls(""))
		e.waitReconciled("demo", 30*time.Second)
		e.eventually(10*time.Second, "pending-hooks annotation cleared", func() (bool, string) {
			v, ok := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]
			return !ok, v
		})
		e.eventually(10*time.Second, "starter status shows how the upgrade ended", func() (bool, string) {
			lines := e.statusLines("demo")
			return slices.Contains(lines, "Last upgrade v1.31.2 -> v1.32.4: "+out.Ended), strings.Join(lines, "\n")
		})
		e.runPasses("demo")
		assert.Len(t, ext.Calls(""), calls, "no hook called after the upgrade ended: %v", hookCalls(ext)[calls:])
		for _, l := range e.statusLines("demo") {
			assert.False(t, strings.HasPrefix(l, "Upgrade "), "no upgrade shown any more: %s", l)
		}
	}

	revert(hooksv1.BeforeClusterUpgrade)
	assert.Equal(t, []string{"BeforeClusterUpgrade(v1.32.4)"}, folded(hookCalls(ext)))

	ext.BlockFor(hooksv1.BeforeClusterUpgrade, 0, "")
	revert(hooksv1.BeforeControlPlaneUpgrade)
	assert.Equal(t, []string{"BeforeClusterUpgrade(v1.32.4)", "BeforeControlPlaneUpgrade(v1.32.4)"}, folded(hookCalls(ext)),
		"no after-hook called for an upgrade that never moved anything")
	for _, tr := range e.sim.Transitions() {
		assert.Equal(t, "v1.31.2", tr.Version, "nothing moved: %+v", tr)
	}
	assert.Equal(t, []string{"Completed", "Completed"}, workflowRuns(t, upID))

	// Asked for again, the upgrade starts over with BeforeClusterUpgrade and completes.
	ext.BlockFor(hooksv1.BeforeControlPlaneUpgrade, 0, "")
	before := len(ext.Calls(hooksv1.BeforeClusterUpgrade))
	e.setVersion("demo", "v1.32.4")
	e.waitUpgraded(ext, "v1.32.4", 120*time.Second)
	assert.Greater(t, len(ext.Calls(hooksv1.BeforeClusterUpgrade)), before, "BeforeClusterUpgrade asked again")
}
