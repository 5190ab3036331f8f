package upgrade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	"github.com/topoflow/topoflow/model/upgrade"
)

// TestLedgerDecidePassesUnhandled plays TestLedgerOrder's chained upgrade with the hooks no
// extension handles passing inside the decision that owes them: each decision lets through what
// it can in Cluster API's order and moves on, so only the hooks that are called end a decision.
func TestLedgerDecidePassesUnhandled(t *testing.T) {
	cp := upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}
	pools := []upgrade.Pool{{Name: "md-0", Exists: true, Version: "v1.31.2"}}
	unhandled := []string{hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade}
	ledger := &upgrade.Ledger{CreatePassed: true}
	var decisions [][]string
	for i := 0; i < 20; i++ {
		in := upgrade.Input{Target: "v1.33.1", KubernetesVersions: []string{"v1.31.2", "v1.32.4", "v1.33.1"}, ControlPlane: cp, Pools: pools}
		d, err := ledger.Decide(in, unhandled)
		require.NoError(t, err)
		var step []string
		for _, p := range d.Passed {
			step = append(step, "passed "+p.Hook+"("+p.To+p.Version+")")
		}
		if res := d.Result; res.ControlPlane != cp.SpecVersion {
			cp.SpecVersion = res.ControlPlane
			step = append(step, "cp→"+res.ControlPlane)
		} else if v := res.Pools[pools[0].Key()]; v != pools[0].Version {
			pools[0].Version = v
			step = append(step, "md-0→"+v)
		}
		if d.Owed != nil {
			step = append(step, "call "+d.Owed.Hook+"("+d.Owed.To+d.Owed.Version+")")
			ledger.Record(*d.Owed)
		}
		if len(step) == 0 {
			break
		}
		decisions = append(decisions, step)
		cp.StatusVersion = cp.SpecVersion // rollouts finish by the next decision
	}
	assert.Equal(t, [][]string{
		{"call BeforeClusterUpgrade(v1.33.1)"},
		{"passed BeforeControlPlaneUpgrade(v1.32.4)", "cp→v1.32.4"},
		{"passed AfterControlPlaneUpgrade(v1.32.4)", "passed BeforeControlPlaneUpgrade(v1.33.1)", "cp→v1.33.1"},
		{"passed AfterControlPlaneUpgrade(v1.33.1)", "passed BeforeWorkersUpgrade(v1.33.1)", "md-0→v1.33.1"},
		{"passed AfterWorkersUpgrade(v1.33.1)", "call AfterClusterUpgrade(v1.33.1)"},
	}, decisions)
	assert.Empty(t, ledger.PendingHooks(), "nothing owed after the upgrade")
}

// TestLedgerDecideWithoutLedger: a plan without the Cluster's workflow (nil ledger) holds nothing,
// owes nothing and lets nothing pass.
func TestLedgerDecideWithoutLedger(t *testing.T) {
	var none *upgrade.Ledger
	in := upgrade.Input{Target: "v1.32.4", KubernetesVersions: []string{"v1.31.2", "v1.32.4"},
		ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}}
	d, err := none.Decide(in, []string{hooksv1.BeforeClusterUpgrade})
	require.NoError(t, err)
	assert.Nil(t, d.Owed)
	assert.Empty(t, d.Passed)
	assert.Equal(t, "v1.32.4", d.Result.ControlPlane)
}
