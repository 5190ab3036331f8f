//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// TestUpgradeHooks: a chained upgrade over two minors with BeforeClusterUpgrade (blocking for a
// while), AfterControlPlaneUpgrade after each control plane step and AfterClusterUpgrade at the
// end, against a real HTTPS extension. Hook calls and version changes interleave in order.
func TestUpgradeHooks(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext, err := extension.Start(hooksv1.BeforeClusterUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.AfterClusterUpgrade)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	e.registerExtension(ext)
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			require.NoError(t, unstructured.SetNestedStringSlice(u.Object, []string{"v1.31.2", "v1.32.4", "v1.33.1"}, "spec", "kubernetesVersions"))
		}
	})
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	assert.Empty(t, ext.Calls(""), "creating a Cluster calls no upgrade hook")

	ext.BlockFor(hooksv1.BeforeClusterUpgrade, 3*time.Second, "draining traffic")
	bumped := time.Now()
	c := e.cluster("demo")
	c.Spec.Topology.Version = "v1.33.1"
	e.updateTopology(c)

	e.eventually(120*time.Second, "upgrade done and AfterClusterUpgrade called", func() (bool, string) {
		n := 0
		for _, tr := range e.sim.Transitions() {
			if tr.Version == "v1.33.1" {
				n++
			}
		}
		return n == 4 && len(ext.Calls(hooksv1.AfterClusterUpgrade)) > 0, fmt.Sprintf("%d parts at v1.33.1, calls %d", n, len(ext.Calls("")))
	})

	before := ext.Calls(hooksv1.BeforeClusterUpgrade)
	require.NotEmpty(t, before)
	approved := before[len(before)-1].At
	assert.GreaterOrEqual(t, approved.Sub(bumped), 2500*time.Millisecond, "the upgrade waited for BeforeClusterUpgrade")
	body := before[0].Body
	assert.Equal(t, "v1.31.2", body["fromKubernetesVersion"])
	assert.Equal(t, "v1.33.1", body["toKubernetesVersion"])
	assert.Equal(t, []any{map[string]any{"version": "v1.32.4"}, map[string]any{"version": "v1.33.1"}}, body["controlPlaneUpgrades"])

	var afterCP []string
	afterCPAt := map[string]time.Time{}
	for _, call := range ext.Calls(hooksv1.AfterControlPlaneUpgrade) {
		v, _ := call.Body["kubernetesVersion"].(string)
		if len(afterCP) == 0 || afterCP[len(afterCP)-1] != v {
			afterCP = append(afterCP, v)
			afterCPAt[v] = call.At
		}
	}
	assert.Equal(t, []string{"v1.32.4", "v1.33.1"}, afterCP, "AfterControlPlaneUpgrade after each control plane step")

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
	assert.Equal(t, "v1.33.1", afterCluster[0].Body["kubernetesVersion"])
}
