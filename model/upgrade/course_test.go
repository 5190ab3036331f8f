package upgrade

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func dueString(d Due) string {
	switch {
	case d.From != "" || d.To != "":
		return fmt.Sprintf("%s %s->%s", d.Hook, d.From, d.To)
	default:
		return d.Hook + " " + d.Version
	}
}

// TestCourse: the course of an upgrade is the passes' own decisions, every hook let through and
// every part settled at once: the hooks in Cluster API's order (per control plane step Before and
// AfterControlPlaneUpgrade, the workers' steps between BeforeWorkersUpgrade and
// AfterWorkersUpgrade, AfterClusterUpgrade once everything is there), the versions each part is
// told, and where it ends; a deferred or held pool stays, and the upgrade does not complete.
func TestCourse(t *testing.T) {
	cp := func(v string) ControlPlane {
		return ControlPlane{Exists: true, SpecVersion: v, StatusVersion: v, Stable: true}
	}
	pools := func(v string) []Pool {
		return []Pool{{Name: "md-0", Exists: true, Version: v}, {Name: "md-1", Exists: true, Version: v}, {Name: "mp-0", MachinePool: true, Exists: true, Version: v}}
	}
	tests := []struct {
		name      string
		in        Input
		ledger    Ledger
		wantHooks []string
		wantCP    []string
		wantPools map[string][]string
		wantStays []string
	}{
		{
			name: "no upgrade: nothing moves, no hook",
			in:   Input{Target: "v1.31.2", ControlPlane: cp("v1.31.2"), Pools: pools("v1.31.2")},
		},
		{
			name: "one minor: the control plane, then the pools one at a time per kind",
			in:   Input{Target: "v1.32.0", ControlPlane: cp("v1.31.2"), Pools: pools("v1.31.2")},
			wantHooks: []string{"BeforeClusterUpgrade v1.31.2->v1.32.0", "BeforeControlPlaneUpgrade v1.31.2->v1.32.0", "AfterControlPlaneUpgrade v1.32.0",
				"BeforeWorkersUpgrade ->v1.32.0", "AfterWorkersUpgrade v1.32.0", "AfterClusterUpgrade v1.32.0"},
			wantCP:    []string{"v1.32.0"},
			wantPools: map[string][]string{"MachineDeployment/md-0": {"v1.32.0"}, "MachineDeployment/md-1": {"v1.32.0"}, "MachinePool/mp-0": {"v1.32.0"}},
		},
		{
			name: "chained through the class's versions: the control plane per step, the workers once (within the skew)",
			in: Input{Target: "v1.33.1", KubernetesVersions: []string{"v1.31.2", "v1.32.3", "v1.32.4", "v1.33.1"},
				ControlPlane: cp("v1.31.2"), Pools: pools("v1.31.2")},
			wantHooks: []string{"BeforeClusterUpgrade v1.31.2->v1.33.1",
				"BeforeControlPlaneUpgrade v1.31.2->v1.32.4", "AfterControlPlaneUpgrade v1.32.4",
				"BeforeControlPlaneUpgrade v1.32.4->v1.33.1", "AfterControlPlaneUpgrade v1.33.1",
				"BeforeWorkersUpgrade ->v1.33.1", "AfterWorkersUpgrade v1.33.1", "AfterClusterUpgrade v1.33.1"},
			wantCP:    []string{"v1.32.4", "v1.33.1"},
			wantPools: map[string][]string{"MachineDeployment/md-0": {"v1.33.1"}, "MachineDeployment/md-1": {"v1.33.1"}, "MachinePool/mp-0": {"v1.33.1"}},
		},
		{
			name: "a deferred pool stays: no AfterWorkersUpgrade, no AfterClusterUpgrade",
			in: Input{Target: "v1.32.0", ControlPlane: cp("v1.31.2"),
				Pools: []Pool{{Name: "md-0", Exists: true, Version: "v1.31.2", Defer: true}, {Name: "md-1", Exists: true, Version: "v1.31.2"}}},
			wantHooks: []string{"BeforeClusterUpgrade v1.31.2->v1.32.0", "BeforeControlPlaneUpgrade v1.31.2->v1.32.0", "AfterControlPlaneUpgrade v1.32.0",
				"BeforeWorkersUpgrade ->v1.32.0"},
			wantCP:    []string{"v1.32.0"},
			wantPools: map[string][]string{"MachineDeployment/md-1": {"v1.32.0"}},
			wantStays: []string{"md-0"},
		},
		{
			name: "a held pool holds the pools after it",
			in: Input{Target: "v1.32.0", ControlPlane: cp("v1.31.2"),
				Pools: []Pool{{Name: "md-0", Exists: true, Version: "v1.31.2"}, {Name: "md-1", Exists: true, Version: "v1.31.2", Hold: true}, {Name: "md-2", Exists: true, Version: "v1.31.2"}}},
			wantHooks: []string{"BeforeClusterUpgrade v1.31.2->v1.32.0", "BeforeControlPlaneUpgrade v1.31.2->v1.32.0", "AfterControlPlaneUpgrade v1.32.0",
				"BeforeWorkersUpgrade ->v1.32.0"},
			wantCP:    []string{"v1.32.0"},
			wantPools: map[string][]string{"MachineDeployment/md-0": {"v1.32.0"}},
			wantStays: []string{"md-1", "md-2"},
		},
		{
			name: "parts still rolling out are taken as settled first; a pool to be created takes no step",
			in: Input{Target: "v1.32.0", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.1"},
				Pools: []Pool{{Name: "md-0", Exists: true, Version: "v1.31.2", RollingOut: true}, {Name: "md-new"}}},
			wantHooks: []string{"BeforeClusterUpgrade v1.31.2->v1.32.0", "BeforeControlPlaneUpgrade v1.31.2->v1.32.0", "AfterControlPlaneUpgrade v1.32.0",
				"BeforeWorkersUpgrade ->v1.32.0", "AfterWorkersUpgrade v1.32.0", "AfterClusterUpgrade v1.32.0"},
			wantCP:    []string{"v1.32.0"},
			wantPools: map[string][]string{"MachineDeployment/md-0": {"v1.32.0"}},
		},
		{
			name:      "from the workflow's ledger: the hooks that passed for this upgrade are not owed again",
			in:        Input{Target: "v1.32.0", ControlPlane: cp("v1.32.0"), Pools: pools("v1.31.2")},
			ledger:    Ledger{ApprovedTarget: "v1.32.0", ControlPlaneApproved: "v1.32.0", ControlPlaneAcknowledged: "v1.32.0"},
			wantHooks: []string{"BeforeWorkersUpgrade ->v1.32.0", "AfterWorkersUpgrade v1.32.0", "AfterClusterUpgrade v1.32.0"},
			wantPools: map[string][]string{"MachineDeployment/md-0": {"v1.32.0"}, "MachineDeployment/md-1": {"v1.32.0"}, "MachinePool/mp-0": {"v1.32.0"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.ledger.Course(tc.in)
			require.NoError(t, err)
			var hooks []string
			for _, d := range c.Hooks {
				hooks = append(hooks, dueString(d))
			}
			assert.Equal(t, tc.wantHooks, hooks)
			assert.Equal(t, tc.wantCP, c.ControlPlane)
			if tc.wantPools == nil {
				tc.wantPools = map[string][]string{}
			}
			assert.Equal(t, tc.wantPools, c.Pools)
			assert.Equal(t, tc.wantStays, append(c.Deferred, c.Held...))
			// The end: every part that moved is settled at its last version.
			assert.True(t, c.Final.ControlPlane.Stable || !c.Final.ControlPlane.Exists)
			assert.Equal(t, c.Final.ControlPlane.SpecVersion, c.Final.ControlPlane.StatusVersion)
			for _, p := range c.Final.Pools {
				if steps := c.Pools[p.Key()]; len(steps) > 0 {
					assert.Equal(t, steps[len(steps)-1], p.Version, p.Name)
				}
				assert.False(t, p.RollingOut, p.Name)
			}
			// The ledger at the end owes nothing more for this course.
			d, err := c.Ledger.Decide(c.Final, nil)
			require.NoError(t, err)
			assert.Nil(t, d.Owed, "%+v", d.Owed)
		})
	}
}

// TestCourseDoesNotChangeItsInput: the course works on copies (the pools of the caller's input are
// not moved).
func TestCourseDoesNotChangeItsInput(t *testing.T) {
	in := Input{Target: "v1.32.0", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true},
		Pools: []Pool{{Name: "md-0", Exists: true, Version: "v1.31.2", RollingOut: true}}}
	l := Ledger{}
	_, err := l.Course(in)
	require.NoError(t, err)
	assert.Equal(t, "v1.31.2", in.Pools[0].Version)
	assert.True(t, in.Pools[0].RollingOut)
	assert.Equal(t, Ledger{}, l)
}

// TestCourseErrors: an upgrade the passes cannot plan fails the course with the passes' error.
func TestCourseErrors(t *testing.T) {
	_, err := Ledger{}.Course(Input{Target: "v1.34.0", ControlPlane: ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}})
	assert.ErrorContains(t, err, "can move at most one minor at a time")
}
