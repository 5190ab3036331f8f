//go:build integration

package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
)

// TestUpgradePlanExtension: a ClusterClass that names a GenerateUpgradePlan extension upgrades
// along the extension's plan. Here the workers take every step, which neither kubernetesVersions
// nor the default plan would make them do. An invalid plan stops the upgrade before it starts,
// with a message naming the broken rule, and nothing moves until the extension answers well.
func TestUpgradePlanExtension(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext, err := extension.Start(hooksv1.GenerateUpgradePlan, hooksv1.BeforeClusterUpgrade)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	e.registerExtension(ext)
	handler := "generateupgradeplan-handler.ext-" + e.ns
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			require.NoError(t, unstructured.SetNestedField(u.Object, handler, "spec", "upgrade", "external", "generateUpgradePlanExtension"))
		}
	})
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	assert.Empty(t, ext.Calls(hooksv1.GenerateUpgradePlan), "creating a Cluster needs no upgrade plan")

	// The extension first skips a minor.
	ext.Respond(hooksv1.GenerateUpgradePlan, func(map[string]any) map[string]any {
		return map[string]any{"controlPlaneUpgrades": []any{map[string]any{"version": "v1.33.1"}}}
	})
	e.setVersion("demo", "v1.33.1")
	e.eventually(30*time.Second, "the invalid plan reported on the Cluster", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && strings.Contains(cond.Message, "invalid plan: controlPlaneUpgrades[0]: v1.33.1 is 2 minors past v1.31.2"), fmt.Sprint(cond)
	})
	assert.Empty(t, ext.Calls(hooksv1.BeforeClusterUpgrade), "no upgrade starts without a valid plan")
	for _, tr := range e.sim.Transitions() {
		assert.Equal(t, "v1.31.2", tr.Version, "%s %s moved without a valid plan", tr.Kind, tr.Name)
	}

	// Then it answers well: every step for the control plane and for the workers.
	path := []string{"v1.31.2", "v1.32.4", "v1.33.1"}
	after := func(v any) []any {
		var out []any
		if i := slices.Index(path, fmt.Sprint(v)); i >= 0 {
			for _, s := range path[i+1:] {
				out = append(out, map[string]any{"version": s})
			}
		}
		return out
	}
	ext.Respond(hooksv1.GenerateUpgradePlan, func(req map[string]any) map[string]any {
		return map[string]any{
			"controlPlaneUpgrades": after(req["fromControlPlaneKubernetesVersion"]),
			"workersUpgrades":      after(req["fromWorkersKubernetesVersion"]),
		}
	})
	sawPlan := ""
	e.eventually(150*time.Second, "every part at v1.33.1", func() (bool, string) {
		for _, l := range e.statusLines("demo") {
			if strings.HasPrefix(l, "Upgrade plan ") {
				sawPlan = l
			}
		}
		at, msg := e.upgradeProgress("v1.33.1")
		return len(at) == 4, fmt.Sprintf("%v %s", at, msg)
	})
	assert.Regexp(t, `^Upgrade plan v1\.31\.2 -> .*v1\.32\.4.* -> .*v1\.33\.1.* \(from GenerateUpgradePlan `+handler+`\)$`, sawPlan,
		"starter status shows the extension's plan and who planned it")

	first := ext.Calls(hooksv1.GenerateUpgradePlan)[0].Body
	assert.Equal(t, "GenerateUpgradePlanRequest", first["kind"])
	assert.Equal(t, "v1.31.2", first["fromControlPlaneKubernetesVersion"])
	assert.Equal(t, "v1.31.2", first["fromWorkersKubernetesVersion"])
	assert.Equal(t, "v1.33.1", first["toKubernetesVersion"])
	assert.Equal(t, "demo", first["cluster"].(map[string]any)["metadata"].(map[string]any)["name"])

	before := ext.Calls(hooksv1.BeforeClusterUpgrade)
	require.NotEmpty(t, before)
	steps := []any{map[string]any{"version": "v1.32.4"}, map[string]any{"version": "v1.33.1"}}
	assert.Equal(t, steps, before[0].Body["controlPlaneUpgrades"], "BeforeClusterUpgrade announces the extension's plan")
	assert.Equal(t, steps, before[0].Body["workersUpgrades"])

	// Each part rolled out v1.32.4, then v1.33.1; every pool reached v1.32.4 before the control
	// plane moved on.
	var order []string
	var cpAt133 time.Time
	reached132 := map[string]time.Time{}
	for _, tr := range e.sim.Transitions() {
		if tr.Version == "v1.31.2" {
			continue
		}
		p := poolOf(tr)
		order = append(order, p+"@"+tr.Version)
		switch {
		case p == "" && tr.Version == "v1.33.1":
			cpAt133 = tr.At
		case p != "" && tr.Version == "v1.32.4":
			reached132[p] = tr.At
		}
	}
	// Per step: the control plane, then the pools (MachineDeployments one at a time in topology
	// order, the MachinePool beside them under its own concurrency).
	require.Len(t, order, 8, fmt.Sprint(order))
	for i, v := range []string{"v1.32.4", "v1.33.1"} {
		step := order[4*i : 4*i+4]
		assert.Equal(t, "@"+v, step[0], "%v", order)
		assert.ElementsMatch(t, []string{"md-0@" + v, "md-1@" + v, "mp-0@" + v}, step[1:], "%v", order)
		assert.Less(t, slices.Index(step, "md-0@"+v), slices.Index(step, "md-1@"+v), "md-0 before md-1: %v", order)
	}
	require.Len(t, reached132, 3)
	for p, at := range reached132 {
		assert.True(t, at.Before(cpAt133), "%s reached v1.32.4 before the control plane moved on", p)
	}
}
