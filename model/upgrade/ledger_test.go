package upgrade_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	"github.com/topoflow/topoflow/model/upgrade"
)

// TestLedgerOrder plays a chained upgrade whose hooks pass at once, recording each in the ledger
// as the workflow does, and checks that the decision owes the hooks in Cluster API's order and
// lets each move through only after its hook; the last after-hooks come once all is settled.
func TestLedgerOrder(t *testing.T) {
	cp := upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}
	pools := []upgrade.Pool{{Name: "md-0", Exists: true, Version: "v1.31.2"}, {Name: "md-1", Exists: true, Version: "v1.31.2"}}
	ledger := &upgrade.Ledger{CreatePassed: true}
	var events []string
	for i := 0; i < 100; i++ {
		in := upgrade.Input{Target: "v1.33.1", KubernetesVersions: []string{"v1.31.2", "v1.32.4", "v1.33.1"}, ControlPlane: cp, Pools: pools}
		res, err := upgrade.Compute(in)
		require.NoError(t, err)
		held, v := ledger.Hold(in, res)
		if due := ledger.Owed(in, res, held, v); due != nil {
			events = append(events, due.Hook+"("+due.To+due.Version+")")
			ledger.Record(*due)
			continue
		}
		moved := false
		if res.ControlPlane != cp.SpecVersion {
			cp.SpecVersion, moved = res.ControlPlane, true
			events = append(events, "cp→"+res.ControlPlane)
		}
		for j := range pools {
			if v := res.Pools[pools[j].Key()]; v != pools[j].Version {
				pools[j].Version, pools[j].RollingOut, moved = v, true, true
				events = append(events, pools[j].Name+"→"+v)
			}
		}
		// Rollouts finish.
		cp.StatusVersion = cp.SpecVersion
		for j := range pools {
			pools[j].RollingOut = false
		}
		if !moved && !res.InProgress {
			break
		}
	}
	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.33.1)",
		"BeforeControlPlaneUpgrade(v1.32.4)", "cp→v1.32.4", "AfterControlPlaneUpgrade(v1.32.4)",
		"BeforeControlPlaneUpgrade(v1.33.1)", "cp→v1.33.1", "AfterControlPlaneUpgrade(v1.33.1)",
		"BeforeWorkersUpgrade(v1.33.1)", "md-0→v1.33.1", "md-1→v1.33.1",
		"AfterWorkersUpgrade(v1.33.1)", "AfterClusterUpgrade(v1.33.1)",
	}, events)
	assert.Empty(t, ledger.PendingHooks(), "nothing owed after the upgrade")
}

// TestLedgerOwedAfterHooks: the after-hooks an approved upgrade owes once no part moves, table by
// table: the last control plane step, the workers, then the whole upgrade; a pool still rolling
// out holds the last two; an upgrade the ledger did not approve owes nothing.
func TestLedgerOwedAfterHooks(t *testing.T) {
	done := upgrade.Input{Target: "v1.33.1", ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.33.1", StatusVersion: "v1.33.1", Stable: true}}
	for _, tt := range []struct {
		name    string
		ledger  upgrade.Ledger
		rolling []string
		want    string
	}{
		{"not approved here", upgrade.Ledger{}, nil, ""},
		{"approved another target", upgrade.Ledger{ApprovedTarget: "v1.32.4"}, nil, ""},
		{"control plane not acknowledged", upgrade.Ledger{ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.32.4"}, nil, "AfterControlPlaneUpgrade(v1.33.1)"},
		{"control plane owed even while pools roll", upgrade.Ledger{ApprovedTarget: "v1.33.1"}, []string{"md-0"}, "AfterControlPlaneUpgrade(v1.33.1)"},
		{"workers settled", upgrade.Ledger{ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1", WorkersApproved: "v1.33.1"}, nil, "AfterWorkersUpgrade(v1.33.1)"},
		{"workers rolling", upgrade.Ledger{ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1", WorkersApproved: "v1.33.1"}, []string{"md-0"}, ""},
		{"cluster done", upgrade.Ledger{ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1"}, nil, "AfterClusterUpgrade(v1.33.1)"},
		{"all passed", upgrade.Ledger{ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1", Completed: "v1.33.1"}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := &upgrade.Result{ControlPlane: "v1.33.1", Pools: map[string]string{}, RollingOut: tt.rolling}
			got := ""
			if due := tt.ledger.Owed(done, res, "", ""); due != nil {
				got = due.Hook + "(" + due.Version + ")"
			}
			assert.Equal(t, tt.want, got)
		})
	}
	var none *upgrade.Ledger
	assert.Nil(t, none.Owed(done, &upgrade.Result{}, hooksv1.BeforeClusterUpgrade, "v1.33.1"), "a nil ledger (a plan) owes nothing")
}

// TestLedgerRecordAndPending: recording each hook's pass moves the pending-hooks annotation as
// Cluster API's does; BeforeClusterUpgrade starts a new upgrade from scratch; Withdraw forgets.
func TestLedgerRecordAndPending(t *testing.T) {
	var l upgrade.Ledger
	l.Record(upgrade.Due{Hook: hooksv1.BeforeClusterCreate})
	assert.Equal(t, []string{hooksv1.AfterControlPlaneInitialized}, l.PendingHooks())
	l.Record(upgrade.Due{Hook: hooksv1.AfterControlPlaneInitialized})
	assert.Empty(t, l.PendingHooks())
	l.Record(upgrade.Due{Hook: hooksv1.BeforeClusterUpgrade, To: "v1.32.4", Reached: "v1.31.2"})
	assert.Equal(t, []string{hooksv1.AfterControlPlaneUpgrade, hooksv1.AfterClusterUpgrade}, l.PendingHooks())
	l.Record(upgrade.Due{Hook: hooksv1.AfterControlPlaneUpgrade, Version: "v1.32.4"})
	assert.Equal(t, []string{hooksv1.AfterClusterUpgrade}, l.PendingHooks())
	l.Record(upgrade.Due{Hook: hooksv1.AfterClusterUpgrade, Version: "v1.32.4"})
	assert.Empty(t, l.PendingHooks())
	l.Record(upgrade.Due{Hook: hooksv1.BeforeClusterUpgrade, To: "v1.33.1", Reached: "v1.32.4"})
	assert.Equal(t, upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.32.4"}, l, "a new upgrade starts from scratch")
	l.Withdraw()
	assert.Equal(t, upgrade.Ledger{CreatePassed: true}, l)
	assert.Empty(t, l.PendingHooks())
}

// TestEnded: an upgrade child ends when another target is due (superseded) or the version was set
// back while nothing moved (withdrawn); it goes on while it, or its after-hooks, are in progress.
func TestEnded(t *testing.T) {
	before := func(to string) *upgrade.Due { return &upgrade.Due{Hook: hooksv1.BeforeClusterUpgrade, To: to} }
	for _, tt := range []struct {
		name       string
		version    string
		inProgress bool
		due        *upgrade.Due
		want       string
	}{
		{"in progress", "v1.33.1", true, nil, ""},
		{"own hook owed", "v1.33.1", true, before("v1.33.1"), ""},
		{"after-hooks owed", "v1.33.1", false, &upgrade.Due{Hook: hooksv1.AfterClusterUpgrade, Version: "v1.33.1"}, ""},
		{"superseded", "v1.34.0", true, before("v1.34.0"), "superseded by an upgrade to v1.34.0"},
		{"withdrawn", "v1.32.4", false, nil, "withdrawn: spec.topology.version is v1.32.4, not v1.33.1 any more"},
		{"another version still moving is not withdrawn", "v1.32.4", true, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, upgrade.Ended("v1.33.1", tt.version, tt.inProgress, tt.due))
		})
	}
}

// TestFinishing: an approved upgrade with every version at the target is still finishing while
// its pools roll out, until AfterClusterUpgrade passed; a rollout outside an upgrade is not one.
func TestFinishing(t *testing.T) {
	approved := &upgrade.Ledger{ApprovedTarget: "v1.33.1"}
	rolling := &upgrade.Result{RollingOut: []string{"md-0"}}
	for _, tt := range []struct {
		name string
		l    *upgrade.Ledger
		res  *upgrade.Result
		want bool
	}{
		{"pools rolling out to the target", approved, rolling, true},
		{"nothing rolling out", approved, &upgrade.Result{}, false},
		{"a version still moving", approved, &upgrade.Result{InProgress: true, RollingOut: []string{"md-0"}}, false},
		{"completed", &upgrade.Ledger{ApprovedTarget: "v1.33.1", Completed: "v1.33.1"}, rolling, false},
		{"no upgrade approved", &upgrade.Ledger{}, rolling, false},
		{"no ledger", nil, rolling, false},
	} {
		if got := tt.l.Finishing("v1.33.1", tt.res); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	s := upgrade.Summarize(upgrade.Input{Target: "v1.33.1"}, rolling, "", "", "", true)
	if s == nil || len(s.Upgrading) != 1 || s.Upgrading[0] != "md-0" {
		t.Errorf("a finishing upgrade's summary: %+v, want md-0 upgrading", s)
	}
	if upgrade.Summarize(upgrade.Input{Target: "v1.33.1"}, rolling, "", "", "", false) != nil {
		t.Error("a rollout outside an upgrade summarized as one")
	}
}

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

// TestLedgerPendingAfter: the pending-hooks annotation a pass writes after the hooks it let
// through: only when they change what is owed, and always after BeforeClusterCreate.
func TestLedgerPendingAfter(t *testing.T) {
	upgrading := upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.33.1", ControlPlaneApproved: "v1.32.4", ControlPlaneAcknowledged: "v1.31.2"}
	for _, tt := range []struct {
		name   string
		ledger upgrade.Ledger
		passed []upgrade.Due
		want   []string
	}{
		{"nothing passed", upgrading, nil, nil},
		{"a before-hook changes nothing owed", upgrading, []upgrade.Due{{Hook: hooksv1.BeforeWorkersUpgrade, To: "v1.33.1"}}, nil},
		{"the control plane's last step acknowledged", upgrading, []upgrade.Due{{Hook: hooksv1.AfterControlPlaneUpgrade, Version: "v1.33.1"}},
			[]string{hooksv1.AfterClusterUpgrade}},
		{"a create marks AfterControlPlaneInitialized", upgrade.Ledger{}, []upgrade.Due{{Hook: hooksv1.BeforeClusterCreate}},
			[]string{hooksv1.AfterControlPlaneInitialized}},
		{"a create is written even with that mark carried", upgrade.Ledger{InitializedOwed: true}, []upgrade.Due{{Hook: hooksv1.BeforeClusterCreate}},
			[]string{hooksv1.AfterControlPlaneInitialized}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.ledger.PendingAfter(tt.passed))
		})
	}
}
