package upgrade

import (
	"fmt"
	"slices"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
)

// UpgradeHooks are the lifecycle hooks of an upgrade, in Cluster API's order.
var UpgradeHooks = []string{
	hooksv1.BeforeClusterUpgrade,
	hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade,
	hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade,
	hooksv1.AfterClusterUpgrade,
}

// Course is the way an upgrade goes from the state a Cluster is in to its end, as the passes
// decide it (Ledger.Decide) when every upgrade hook lets every move through and every part settles
// at the version it was told before the next pass: the hooks in the order they are owed, the
// versions each part is told to run, and where it all ends.
type Course struct {
	// Hooks are the upgrade hooks owed on the way, in order, each with its request's versions.
	Hooks []Due `json:"hooks,omitempty"`
	// ControlPlane are the versions the control plane is told to run, in order (none when it
	// keeps its version).
	ControlPlane []string `json:"controlPlane,omitempty"`
	// Pools are the versions each pool is told to run, in order, by Pool.Key (absent when it
	// keeps its version).
	Pools map[string][]string `json:"pools,omitempty"`
	// Deferred and Held name the pools that keep their version to the end (their topology's
	// defer-upgrade or hold-upgrade-sequence): the upgrade does not complete.
	Deferred []string `json:"deferred,omitempty"`
	Held     []string `json:"held,omitempty"`
	// Final is the upgrade state at the end: every part settled at its last version.
	Final Input `json:"final"`
	// Ledger is the hook ledger at the end.
	Ledger Ledger `json:"ledger"`
}

// maxCoursePasses bounds a Course: an upgrade takes a few passes per control plane step and per
// pool; a state that keeps moving longer is a bug, reported rather than looped on.
const maxCoursePasses = 1000

// Course follows the upgrade from in, starting from this ledger (a zero Ledger: no hook has
// answered yet), pass after pass: each pass decides (Ledger.Decide, every upgrade hook let
// through and recorded), then every part takes the version decided and settles. It ends when a
// pass moves nothing; the hooks owed in that last pass (the after-hooks) are included. Parts that
// roll out or provision in `in` are taken as settled at their spec version first. It is the same
// decision the passes make, so a plan made with it calls the same hooks in the same order.
func (l Ledger) Course(in Input) (*Course, error) {
	c := &Course{Pools: map[string][]string{}}
	in = settle(in)
	for range maxCoursePasses {
		d, err := l.Decide(in, UpgradeHooks)
		if err != nil {
			return nil, err
		}
		c.Hooks = append(c.Hooks, d.Passed...)
		next, moved := c.take(in, d.Result)
		if !moved {
			c.Final, c.Ledger = in, l
			c.Deferred, c.Held = d.Result.Deferred, d.Result.Held
			return c, nil
		}
		in = next
	}
	return nil, fmt.Errorf("the upgrade to %s does not settle within %d passes", in.Target, maxCoursePasses)
}

// take moves every existing part to the version res decides, settled (stable, not rolling out),
// recording each move; moved says whether anything moved.
func (c *Course) take(in Input, res *Result) (Input, bool) {
	out := in
	out.Pools = slices.Clone(in.Pools)
	moved := false
	cp := &out.ControlPlane
	if cp.Exists && res.ControlPlane != "" && res.ControlPlane != cp.SpecVersion {
		cp.SpecVersion, cp.StatusVersion, cp.Stable = res.ControlPlane, res.ControlPlane, true
		c.ControlPlane = append(c.ControlPlane, res.ControlPlane)
		moved = true
	}
	for i := range out.Pools {
		p := &out.Pools[i]
		v, ok := res.Pools[p.Key()]
		if !p.Exists || !ok || v == p.Version {
			continue
		}
		p.Version, p.RollingOut, p.Converging = v, false, false
		c.Pools[p.Key()] = append(c.Pools[p.Key()], v)
		moved = true
	}
	return out, moved
}

// settle is in with every part done with what it was doing: the control plane stable at its spec
// version (one still provisioning too), no pool rolling out.
func settle(in Input) Input {
	out := in
	out.Pools = slices.Clone(in.Pools)
	if cp := &out.ControlPlane; cp.Exists {
		cp.StatusVersion, cp.Stable = cp.SpecVersion, true
	}
	for i := range out.Pools {
		out.Pools[i].RollingOut, out.Pools[i].Converging = false, false
	}
	return out
}
