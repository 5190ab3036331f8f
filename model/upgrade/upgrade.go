// Package upgrade decides, on every reconcile, which Kubernetes version each part of a managed
// Cluster should run, so that one field (spec.topology.version) drives a whole upgrade: the control
// plane first, then the worker pools in topology order, never two at once beyond the allowed
// concurrency, chained across minors when the ClusterClass lists kubernetesVersions. It is pure
// and level-based: the answer depends only on the current objects.
package upgrade

import (
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// maxWorkerSkew is how many minors workers may lag the control plane (Kubernetes' version skew).
const maxWorkerSkew = 3

// ControlPlane is the control plane's current state.
type ControlPlane struct {
	Exists bool
	// SpecVersion is the version the control plane was told to run; StatusVersion the lowest one
	// its machines run.
	SpecVersion, StatusVersion string
	// Stable is false while the control plane provisions, scales or rolls out.
	Stable bool
}

// Pool is a MachineDeployment or MachinePool of the topology, in topology order.
type Pool struct {
	Name string
	// MachinePool is set for MachinePools (their topology names may repeat MachineDeployments').
	MachinePool bool
	Exists      bool
	// Version is the pool's current spec version.
	Version string
	// RollingOut is true while the pool's machines are being replaced.
	RollingOut bool
	// Converging is true while the pool's status does not yet show every desired replica
	// updated and available, whatever the Machines' versions say. A fleet rollout waits for it
	// (rollout.Settled); the upgrade's own order, Cluster API's rule, does not.
	Converging bool
	// Defer and Hold mirror the defer-upgrade and hold-upgrade-sequence annotations. Hold holds
	// the pool and every later pool of its kind (MachineDeployments and MachinePools are two
	// sequences, as in Cluster API).
	Defer, Hold bool
}

// Key identifies a pool in Result.Pools.
func (p Pool) Key() string { return PoolKey(p.MachinePool, p.Name) }

// PoolKey is the key of the MachineDeployment (or MachinePool) with that topology name.
func PoolKey(machinePool bool, name string) string {
	if machinePool {
		return "MachinePool/" + name
	}
	return "MachineDeployment/" + name
}

// Input is a Cluster's upgrade state.
type Input struct {
	Target string
	// KubernetesVersions is the ClusterClass's list; non-empty means chained upgrades.
	KubernetesVersions []string
	ControlPlane       ControlPlane
	// Pools are the MachineDeployments then the MachinePools, in topology order.
	Pools []Pool
	// Concurrency is how many pools may upgrade at once (default 1).
	Concurrency int
	// External is the plan the ClusterClass's GenerateUpgradePlan extension gave for the control
	// plane's current version (checked with CheckExternalPlan). It replaces KubernetesVersions.
	External *ExternalPlan
}

// ExternalPlan is an upgrade plan from a GenerateUpgradePlan extension: the control plane's steps
// (the target last) and the workers' steps.
type ExternalPlan struct {
	ControlPlane []string `json:"controlPlane,omitempty"`
	Workers      []string `json:"workers,omitempty"`
}

// NeedsPlan says whether an upgrade is due (so a plan is needed): the control plane exists, is past
// creation, and it or a pool is not at the target.
func (in Input) NeedsPlan() bool {
	cp := in.ControlPlane
	if !cp.Exists || (cp.StatusVersion == "" && cp.SpecVersion == in.Target) {
		return false
	}
	if cp.SpecVersion != in.Target {
		return true
	}
	for _, p := range in.Pools {
		if p.Exists && p.Version != in.Target {
			return true
		}
	}
	return false
}

// LowestPoolVersion is the lowest version an existing pool runs ("" without pools).
func (in Input) LowestPoolVersion() (string, error) {
	var vs []string
	for _, p := range in.Pools {
		if p.Exists && p.Version != "" {
			vs = append(vs, p.Version)
		}
	}
	return lowest(vs)
}

// Result is the version of every part, and where the upgrade stands.
type Result struct {
	ControlPlane string
	// Pools maps Pool.Key to the pool's version.
	Pools map[string]string
	// InProgress is true while any part is not yet at the target.
	InProgress bool
	// ControlPlaneSteps are the control plane versions still to go, the next first.
	ControlPlaneSteps []string
	// WorkerSteps are the versions the pools pass through from the lowest they run (see
	// workerPlan).
	WorkerSteps []string
	// Upgrading, Pending, Deferred and Held name pools by state (for status and UI).
	Upgrading, Pending, Deferred, Held []string
	// Waiting says why the control plane is not taking its next step, if it is not.
	Waiting string
	// RollingOut names the pools whose machines are being replaced now (for any reason).
	RollingOut []string
}

// Compute decides the versions.
func Compute(in Input) (*Result, error) {
	if _, err := parse(in.Target); err != nil {
		return nil, fmt.Errorf("spec.topology.version: %w", err)
	}
	res := &Result{Pools: map[string]string{}}
	for _, p := range in.Pools {
		if p.Exists && p.RollingOut {
			res.RollingOut = append(res.RollingOut, p.Name)
		}
	}
	cp := in.ControlPlane
	if !cp.Exists || (cp.StatusVersion == "" && cp.SpecVersion == in.Target) {
		// Creation (the control plane is not there, or still initializing at the target):
		// everything starts at the target; this is not an upgrade.
		res.ControlPlane = in.Target
		for _, p := range in.Pools {
			res.Pools[p.Key()] = in.Target
		}
		return res, nil
	}
	c, err := newComputation(in, res)
	if err != nil {
		return nil, err
	}
	// 1. The pools follow the control plane, within the concurrency and their annotations.
	if err := c.pools(); err != nil {
		return nil, err
	}
	// 2. The control plane takes its next step once nothing holds it.
	c.controlPlane()
	// 3. Where the upgrade stands, and the workers' plan.
	res.InProgress = res.ControlPlane != in.Target || cp.StatusVersion != in.Target
	for _, p := range in.Pools {
		if p.Exists && p.Version != in.Target {
			res.InProgress = true
		}
	}
	if in.External != nil {
		res.WorkerSteps = in.External.Workers
		return res, nil
	}
	// The pools' versions were checked above (errors name the pool).
	low, err := in.LowestPoolVersion()
	if err != nil {
		return nil, err
	}
	if res.WorkerSteps, err = workerPlan(low, cp.SpecVersion, res.ControlPlaneSteps); err != nil {
		return nil, err
	}
	return res, nil
}

// computation is one Compute of an upgrade in progress.
type computation struct {
	in  Input
	res *Result
	// reached is the version the whole control plane runs; next its next step (nil: none).
	reached string
	next    *semver.Version
	// cpUpgrading: the control plane is rolling out or not stable.
	cpUpgrading bool
	chained     bool
	// rollingOut counts the pools rolling out by kind (MachinePool or not): MachineDeployments and
	// MachinePools each have the concurrency (Cluster API's UpgradeTracker keeps one
	// WorkerUpgradeTracker per kind, each with maxUpgradeConcurrency).
	rollingOut  map[bool]int
	concurrency int
}

func newComputation(in Input, res *Result) (*computation, error) {
	cp := in.ControlPlane
	c := &computation{in: in, res: res, reached: cp.SpecVersion, concurrency: max(in.Concurrency, 1), rollingOut: map[bool]int{},
		cpUpgrading: cp.StatusVersion != cp.SpecVersion || !cp.Stable, chained: len(in.KubernetesVersions) > 0 || in.External != nil}
	var steps []string
	if in.External != nil {
		if cp.SpecVersion != in.Target {
			steps = in.External.ControlPlane
		}
	} else {
		var err error
		if steps, err = Plan(cp.SpecVersion, in.Target, in.KubernetesVersions); err != nil {
			return nil, err
		}
	}
	res.ControlPlaneSteps = steps
	if len(steps) > 0 {
		c.next, _ = parse(steps[0])
	}
	if _, err := parse(c.reached); err != nil {
		return nil, fmt.Errorf("control plane version: %w", err)
	}
	for _, p := range in.Pools {
		if p.Exists && p.RollingOut {
			c.rollingOut[p.MachinePool]++
		}
	}
	return c, nil
}

// follows says whether a pool at pv must now take the version the control plane reached: at the
// target, at a step of the extension's worker plan, without a chain (one step at a time), or when
// the control plane's next step would leave the pool too far behind.
func (c *computation) follows(pv *semver.Version) bool {
	switch {
	case c.reached == c.in.Target || !c.chained:
		return true
	case c.next != nil && minorGap(c.next, pv) > maxWorkerSkew:
		return true
	case c.in.External != nil:
		return slices.Contains(c.in.External.Workers, c.reached)
	}
	return false
}

// pools decides each pool's version: a new pool starts at the version the control plane runs; one
// that must follow it moves unless held, deferred, busy or over the concurrency.
func (c *computation) pools() error {
	res := c.res
	held := map[bool]bool{} // by kind: a hold-upgrade-sequence seen earlier in the sequence
	for _, p := range c.in.Pools {
		if !p.Exists {
			res.Pools[p.Key()] = c.reached
			continue
		}
		res.Pools[p.Key()] = p.Version
		if p.Version == c.reached {
			if p.RollingOut {
				res.Upgrading = append(res.Upgrading, p.Name)
			}
			continue
		}
		pv, err := parse(p.Version)
		if err != nil {
			return fmt.Errorf("pool %s version: %w", p.Name, err)
		}
		switch {
		case c.cpUpgrading || !c.follows(pv):
			continue
		case held[p.MachinePool] || p.Hold:
			held[p.MachinePool] = true
			res.Held = append(res.Held, p.Name)
		case p.Defer:
			res.Deferred = append(res.Deferred, p.Name)
		case p.RollingOut:
			// Busy with another change: it takes the version once that is done (no double rollout).
			res.Pending = append(res.Pending, p.Name)
		case c.rollingOut[p.MachinePool] < c.concurrency:
			res.Pools[p.Key()] = c.reached
			res.Upgrading = append(res.Upgrading, p.Name)
			c.rollingOut[p.MachinePool]++
		default:
			res.Pending = append(res.Pending, p.Name)
		}
	}
	return nil
}

// controlPlane lets the control plane take its next step when it is stable, no pool is rolling
// out, and no pool would be left behind: all of them at its version (one step at a time), or, in
// a chained upgrade, all within the supported skew of the next step.
func (c *computation) controlPlane() {
	cp, res := c.in.ControlPlane, c.res
	res.ControlPlane = cp.SpecVersion
	if c.next == nil {
		return
	}
	switch {
	case c.cpUpgrading:
		res.Waiting = "control plane upgrading to " + cp.SpecVersion
	case c.rollingOut[false]+c.rollingOut[true] > 0:
		res.Waiting = "worker pools rolling out: " + strings.Join(res.Upgrading, ", ")
	default:
		if behind := behindPools(c.in.Pools, c.reached, c.next, c.follows); len(behind) > 0 {
			res.Waiting = "worker pools not yet at " + c.reached + ": " + strings.Join(behind, ", ")
		} else {
			res.ControlPlane = res.ControlPlaneSteps[0]
		}
	}
}

// behindPools lists pools the control plane must wait for before stepping to next: those that
// must follow it now, except deferred ones the next step still leaves within the skew.
func behindPools(pools []Pool, reached string, next *semver.Version, follows func(*semver.Version) bool) []string {
	var out []string
	for _, p := range pools {
		if !p.Exists || p.Version == reached {
			continue
		}
		pv, err := parse(p.Version)
		if err != nil {
			continue
		}
		if follows(pv) && (!p.Defer || minorGap(next, pv) > maxWorkerSkew) {
			out = append(out, p.Name)
		}
	}
	return out
}

func minorGap(a, b *semver.Version) int64 {
	if a.Major() != b.Major() {
		return 1 << 20
	}
	return int64(a.Minor()) - int64(b.Minor())
}

// Plan lists the control plane versions from current (exclusive) to target (inclusive). With a
// version list it steps through the last listed patch of every minor in between; without one it
// goes straight to the target.
func Plan(current, target string, versions []string) ([]string, error) {
	if current == target {
		return nil, nil
	}
	cur, err := parse(current)
	if err != nil {
		return nil, fmt.Errorf("current version: %w", err)
	}
	tgt, err := parse(target)
	if err != nil {
		return nil, fmt.Errorf("target version: %w", err)
	}
	if tgt.LessThan(cur) {
		return nil, fmt.Errorf("%s is older than %s, the version the control plane was told to run: downgrades are not supported", target, current)
	}
	if len(versions) == 0 {
		// The reconcile-time guard of Cluster API's version rule (the webhook's, for a Cluster
		// written while no webhook ran): without a chain, a control plane moves one minor at most.
		if minorGap(tgt, cur) > 1 {
			return nil, fmt.Errorf("the control plane runs %s and can move at most one minor at a time: list the versions in between in the ClusterClass's spec.kubernetesVersions (or name a GenerateUpgradePlan extension) to chain the upgrade", current)
		}
		return []string{target}, nil
	}
	lastOfMinor := map[uint64]string{}
	for _, v := range versions {
		sv, err := parse(v)
		if err != nil {
			return nil, fmt.Errorf("kubernetesVersions: %w", err)
		}
		if sv.Major() != cur.Major() || sv.Minor() <= cur.Minor() || sv.Minor() >= tgt.Minor() {
			continue
		}
		if prev, ok := lastOfMinor[sv.Minor()]; ok {
			pv, _ := parse(prev)
			if !sv.GreaterThan(pv) {
				continue
			}
		}
		lastOfMinor[sv.Minor()] = v
	}
	var out []string
	for m := cur.Minor() + 1; m < tgt.Minor(); m++ {
		v, ok := lastOfMinor[m]
		if !ok {
			return nil, fmt.Errorf("the ClusterClass's spec.kubernetesVersions lists no v%d.%d release to step through from %s to %s", cur.Major(), m, current, target)
		}
		out = append(out, v)
	}
	return append(out, target), nil
}

// workerPlan lists the versions the worker pools pass through while the control plane goes from
// its version (from) through steps, for the workersUpgrades of BeforeClusterUpgrade: a step only
// where the control plane's next move would leave the workers more than three minors behind, then
// the target. workers is the lowest version the pools run ("" when there are none: no steps).
func workerPlan(workers, from string, steps []string) ([]string, error) {
	if workers == "" {
		return nil, nil
	}
	w, err := parse(workers)
	if err != nil {
		return nil, fmt.Errorf("worker version: %w", err)
	}
	path := append([]string{from}, steps...)
	var out []string
	for i, s := range path[:len(path)-1] {
		next, err := parse(path[i+1])
		if err != nil {
			return nil, err
		}
		if minorGap(next, w) > maxWorkerSkew && s != workers && (len(out) == 0 || out[len(out)-1] != s) {
			out = append(out, s)
			if w, err = parse(s); err != nil {
				return nil, err
			}
		}
	}
	if target := path[len(path)-1]; target != workers {
		out = append(out, target)
	}
	return out, nil
}

// CheckExternalPlan checks a GenerateUpgradePlan answer for an upgrade from the control plane's
// version (cp) and the lowest pool version (workers, "" without pools) to target, with Cluster
// API's rules, and fills in the workers' steps when the extension left them out. Errors name the
// response field.
//
// The control plane's steps: each newer than the one before (starting from cp), at most one minor
// further, the last one the target; none when the control plane is at the target. The workers'
// steps: each one the control plane's version or one of its steps, each newer than the one before
// (starting from workers) and at most three minors further, the last one the target; none when no
// pool needs to move.
func CheckExternalPlan(cp, workers, target string, plan ExternalPlan) (ExternalPlan, error) {
	out := ExternalPlan{ControlPlane: plan.ControlPlane}
	if cp == target {
		if len(plan.ControlPlane) > 0 {
			return out, fmt.Errorf("controlPlaneUpgrades: the control plane already runs %s, yet the plan lists %d steps", target, len(plan.ControlPlane))
		}
	} else if err := checkSteps("controlPlaneUpgrades", cp, target, plan.ControlPlane, 1, nil); err != nil {
		return out, err
	}
	if workers == "" || workers == target {
		if len(plan.Workers) > 0 {
			return out, fmt.Errorf("workersUpgrades: no worker pool needs to move to %s, yet the plan lists %d steps", target, len(plan.Workers))
		}
		return out, nil
	}
	known := append([]string{cp}, plan.ControlPlane...)
	out.Workers = plan.Workers
	if len(out.Workers) == 0 {
		var err error
		if len(plan.ControlPlane) == 0 {
			out.Workers = []string{target}
		} else if out.Workers, err = workerPlan(workers, cp, plan.ControlPlane); err != nil {
			return out, err
		}
	}
	return out, checkSteps("workersUpgrades", workers, target, out.Workers, maxWorkerSkew, known)
}

// checkSteps checks that steps go up from `from` to target, at most maxMinors minors at a time,
// each one of known (when known is given).
func checkSteps(field, from, target string, steps []string, maxMinors int64, known []string) error {
	if len(steps) == 0 {
		return fmt.Errorf("%s: empty, but the upgrade goes from %s to %s", field, from, target)
	}
	prev, err := parse(from)
	if err != nil {
		return fmt.Errorf("%s: current version: %w", field, err)
	}
	prevName := from
	for i, v := range steps {
		sv, err := parse(v)
		if err != nil {
			return fmt.Errorf("%s[%d]: %w", field, i, err)
		}
		if !sv.GreaterThan(prev) {
			return fmt.Errorf("%s[%d]: %s must be newer than %s", field, i, v, prevName)
		}
		if gap := minorGap(sv, prev); gap > maxMinors {
			return fmt.Errorf("%s[%d]: %s is %d minors past %s; at most %d at a time", field, i, v, gap, prevName, maxMinors)
		}
		if known != nil && !slices.Contains(known, v) {
			return fmt.Errorf("%s[%d]: %s is neither the control plane's version nor one of its steps", field, i, v)
		}
		prev, prevName = sv, v
	}
	if last := steps[len(steps)-1]; last != target {
		return fmt.Errorf("%s: the last step is %s, not the target %s", field, last, target)
	}
	return nil
}

// lowest returns the lowest of the given versions ("" for none).
func lowest(versions []string) (string, error) {
	low, lv := "", (*semver.Version)(nil)
	for _, v := range versions {
		sv, err := parse(v)
		if err != nil {
			return "", err
		}
		if lv == nil || sv.LessThan(lv) {
			low, lv = v, sv
		}
	}
	return low, nil
}

func parse(v string) (*semver.Version, error) {
	if !strings.HasPrefix(v, "v") {
		return nil, fmt.Errorf("%q is not a version such as v1.31.2", v)
	}
	sv, err := semver.NewVersion(strings.TrimPrefix(v, "v"))
	if err != nil {
		return nil, fmt.Errorf("%q is not a version such as v1.31.2: %w", v, err)
	}
	return sv, nil
}
