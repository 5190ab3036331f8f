//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/topoflow/topoflow/activities"
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
	e.eventually(120*time.Second, "upgrade done and AfterClusterUpgrade called", func() (bool, string) {
		if v := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]; v != "" {
			sawPending = v
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
	upID := workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: "demo"}, "v1.31.2", "v1.33.1")
	assert.Equal(t, "topology/"+e.ns+"/demo/upgrade/v1.31.2-to-v1.33.1", upID)
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
}
