// Package upgrade decides, on every reconcile, which Kubernetes version each part of a managed
// Cluster should run, so that one field (spec.topology.version) drives a whole upgrade: the control
// plane first, then the worker pools in topology order, never two at once beyond the allowed
// concurrency, chained across minors when the ClusterClass lists kubernetesVersions. It is pure
// and level-based: the answer depends only on the current objects.
package upgrade

import (
	"fmt"
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
	concurrency := in.Concurrency
	if concurrency < 1 {
		concurrency = 1
	}
	steps, err := Plan(cp.SpecVersion, in.Target, in.KubernetesVersions)
	if err != nil {
		return nil, err
	}
	res.ControlPlaneSteps = steps
	cpUpgrading := cp.StatusVersion != cp.SpecVersion || !cp.Stable
	// reached is the version the whole control plane runs.
	reached := cp.SpecVersion

	// Workers follow the control plane: to the version it has reached, once it is the target or
	// once the next control plane step would leave them too far behind.
	var next *semver.Version
	if len(steps) > 0 {
		next, _ = parse(steps[0])
	}
	if _, err := parse(reached); err != nil {
		return nil, fmt.Errorf("control plane version: %w", err)
	}
	chained := len(in.KubernetesVersions) > 0
	rollingOut := 0
	for _, p := range in.Pools {
		if p.Exists && p.RollingOut {
			rollingOut++
		}
	}
	held := map[bool]bool{} // by kind: a hold-upgrade-sequence seen earlier in the sequence
	for _, p := range in.Pools {
		if !p.Exists {
			// A new pool starts at the version the control plane runs.
			res.Pools[p.Key()] = reached
			continue
		}
		res.Pools[p.Key()] = p.Version
		if p.Version == reached {
			if p.RollingOut {
				res.Upgrading = append(res.Upgrading, p.Name)
			}
			continue
		}
		pv, err := parse(p.Version)
		if err != nil {
			return nil, fmt.Errorf("pool %s version: %w", p.Name, err)
		}
		mustMove := !cpUpgrading && (reached == in.Target || !chained || (next != nil && minorGap(next, pv) > maxWorkerSkew))
		switch {
		case !mustMove:
			continue
		case held[p.MachinePool] || p.Hold:
			held[p.MachinePool] = true
			res.Held = append(res.Held, p.Name)
		case p.Defer:
			res.Deferred = append(res.Deferred, p.Name)
		case p.RollingOut:
			// Busy with another change: it takes the version once that is done (no double rollout).
			res.Pending = append(res.Pending, p.Name)
		case rollingOut < concurrency:
			res.Pools[p.Key()] = reached
			res.Upgrading = append(res.Upgrading, p.Name)
			rollingOut++
		default:
			res.Pending = append(res.Pending, p.Name)
		}
	}

	// The control plane takes its next step when it is stable, no pool is rolling out, and no
	// pool would be left behind: all of them at its version (one step at a time), or, in a
	// chained upgrade, all within the supported skew of the next step.
	res.ControlPlane = cp.SpecVersion
	if next != nil {
		switch {
		case cpUpgrading:
			res.Waiting = "control plane upgrading to " + cp.SpecVersion
		case rollingOut > 0:
			res.Waiting = "worker pools rolling out: " + strings.Join(res.Upgrading, ", ")
		default:
			behind := behindPools(in.Pools, reached, next, chained)
			if len(behind) > 0 {
				res.Waiting = "worker pools not yet at " + reached + ": " + strings.Join(behind, ", ")
			} else {
				res.ControlPlane = steps[0]
			}
		}
	}
	res.InProgress = res.ControlPlane != in.Target || cp.StatusVersion != in.Target
	var poolVersions []string
	for _, p := range in.Pools {
		if p.Exists && p.Version != in.Target {
			res.InProgress = true
		}
		if p.Exists && p.Version != "" {
			poolVersions = append(poolVersions, p.Version)
		}
	}
	// The pools' versions were checked above (errors name the pool).
	low, err := lowest(poolVersions)
	if err != nil {
		return nil, err
	}
	if res.WorkerSteps, err = workerPlan(low, steps); err != nil {
		return nil, err
	}
	return res, nil
}

// behindPools lists pools the control plane must wait for before stepping to next.
func behindPools(pools []Pool, reached string, next *semver.Version, chained bool) []string {
	var out []string
	for _, p := range pools {
		if !p.Exists || p.Version == reached {
			continue
		}
		pv, err := parse(p.Version)
		if err != nil {
			continue
		}
		if !chained || minorGap(next, pv) > maxWorkerSkew {
			if !p.Defer || minorGap(next, pv) > maxWorkerSkew {
				out = append(out, p.Name)
			}
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
		return nil, fmt.Errorf("version %s is older than %s: downgrades are not supported", target, current)
	}
	if len(versions) == 0 {
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
			return nil, fmt.Errorf("kubernetesVersions lists no v%d.%d release to step through from %s to %s", cur.Major(), m, current, target)
		}
		out = append(out, v)
	}
	return append(out, target), nil
}

// workerPlan lists the versions the worker pools pass through while the control plane takes
// steps (as planned by Plan), for the workersUpgrades of BeforeClusterUpgrade: a step only where
// the control plane's next step would leave the workers more than three minors behind, then the
// target. workers is the lowest version the pools run ("" when there are none: no steps).
func workerPlan(workers string, steps []string) ([]string, error) {
	if workers == "" || len(steps) == 0 {
		return nil, nil
	}
	w, err := parse(workers)
	if err != nil {
		return nil, fmt.Errorf("worker version: %w", err)
	}
	var out []string
	for i, s := range steps[:len(steps)-1] {
		next, err := parse(steps[i+1])
		if err != nil {
			return nil, err
		}
		if minorGap(next, w) > maxWorkerSkew {
			out = append(out, s)
			if w, err = parse(s); err != nil {
				return nil, err
			}
		}
	}
	if target := steps[len(steps)-1]; target != workers {
		out = append(out, target)
	}
	return out, nil
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
