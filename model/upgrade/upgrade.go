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

// Compute decides the versions as Cluster API v1.14's topology controller does with the RuntimeSDK
// gate off (the lifecycle hooks are the ledger's: Ledger.Hold rewrites the result): the upgrade
// plans (ComputeUpgradePlan), the control plane's version (computeControlPlaneVersion), then each
// pool's, in topology order (computeMachineDeploymentVersion, computeMachinePoolVersion).
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
	if _, err := parse(cp.SpecVersion); err != nil {
		return nil, fmt.Errorf("control plane version: %w", err)
	}
	var err error
	if res.ControlPlaneSteps, res.WorkerSteps, err = plans(in); err != nil {
		return nil, err
	}
	c := &computation{in: in, res: res, concurrency: max(in.Concurrency, 1), upgrading: map[string]bool{}}
	if err := c.controlPlane(); err != nil {
		return nil, err
	}
	if err := c.pools(); err != nil {
		return nil, err
	}
	res.InProgress = res.ControlPlane != in.Target || cp.StatusVersion != in.Target
	for _, p := range in.Pools {
		if p.Exists && p.Version != in.Target {
			res.InProgress = true
		}
	}
	return res, nil
}

// plans are the upgrade plans of Cluster API's ComputeUpgradePlan: none when the control plane and
// every pool run the target; else the control plane's steps (the extension's, else the class's
// kubernetesVersions or one minor: Plan; none once it runs the target) and, while a pool runs
// another version than the target, the workers' (the extension's, else workerPlan's default).
func plans(in Input) (cpSteps, workerSteps []string, err error) {
	cp := in.ControlPlane.SpecVersion
	workers, err := in.LowestPoolVersion()
	if err != nil {
		return nil, nil, err
	}
	workersBehind := workers != "" && workers != in.Target
	if cp == in.Target && !workersBehind {
		return nil, nil, nil
	}
	switch {
	case in.External != nil:
		if cp != in.Target {
			cpSteps = in.External.ControlPlane
		}
		if workersBehind {
			workerSteps = in.External.Workers
		}
	default:
		if cpSteps, err = Plan(cp, in.Target, in.KubernetesVersions); err != nil {
			return nil, nil, err
		}
	}
	if cp != in.Target && len(cpSteps) == 0 {
		return nil, nil, fmt.Errorf("no upgrade plan for the control plane from %s to %s", cp, in.Target)
	}
	if workersBehind && len(workerSteps) == 0 {
		if workerSteps, err = workerPlan(workers, cp, cpSteps); err != nil {
			return nil, nil, err
		}
	}
	return cpSteps, workerSteps, nil
}

// Planned says whether an upgrade runs by Cluster API's measure: its ComputeUpgradePlan leaves an
// upgrade plan non-empty, that is the control plane exists and it, or the lowest version a pool
// runs, is not at the target. Cluster API's computeCluster (RuntimeSDK gate off) keeps the
// upgrade-step annotation on the Cluster meanwhile.
func (in Input) Planned() bool {
	if !in.ControlPlane.Exists {
		return false
	}
	if in.ControlPlane.SpecVersion != in.Target {
		return true
	}
	workers, err := in.LowestPoolVersion()
	return err == nil && workers != "" && workers != in.Target
}

// computation is one Compute of an upgrade in progress.
type computation struct {
	in  Input
	res *Result
	// The control plane's state, as Cluster API's ControlPlaneUpgradeTracker has it: provisioning
	// (no status version yet), upgrading (a machine not at its spec version), pending an upgrade
	// (its spec version is not the target and it does not move in this pass), starting one (it
	// moves in this pass), waiting for the workers (they must take its version first).
	provisioning, cpUpgrading, pending, starting, waitingForWorkers bool
	// upgrading holds the pools upgrading, by Pool.Key: those rolling out, and those that take a
	// version in this pass. Each kind has the concurrency (Cluster API's UpgradeTracker keeps one
	// WorkerUpgradeTracker per kind, each with its maxUpgradeConcurrency).
	upgrading   map[string]bool
	concurrency int
}

// upgradingOf counts the pools of a kind that upgrade.
func (c *computation) upgradingOf(machinePool bool) int {
	n := 0
	for _, p := range c.in.Pools {
		if p.MachinePool == machinePool && c.upgrading[p.Key()] {
			n++
		}
	}
	return n
}

// controlPlane decides the control plane's version (Cluster API's computeControlPlaneVersion, the
// RuntimeSDK gate off): it keeps its version while it provisions or upgrades, while the workers'
// plan starts with its version (they take it first), while a MachineDeployment or MachinePool
// upgrades, and once it runs the target; else it takes the next step of its plan. Scaling does not
// hold it.
func (c *computation) controlPlane() error {
	cp, res := c.in.ControlPlane, c.res
	res.ControlPlane = cp.SpecVersion
	for _, p := range c.in.Pools {
		if p.Exists && p.RollingOut {
			c.upgrading[p.Key()] = true
		}
	}
	c.pending = cp.SpecVersion != c.in.Target
	c.provisioning = cp.StatusVersion == ""
	c.cpUpgrading = !c.provisioning && controlPlaneUpgrading(cp)
	switch {
	case c.provisioning || c.cpUpgrading:
		if c.pending {
			res.Waiting = "control plane upgrading to " + cp.SpecVersion
		}
		return nil
	case len(res.WorkerSteps) > 0 && res.WorkerSteps[0] == cp.SpecVersion:
		c.waitingForWorkers = true
		if c.pending {
			res.Waiting = "worker pools not yet at " + cp.SpecVersion + ": " + strings.Join(c.behind(cp.SpecVersion), ", ")
		}
		return nil
	case len(res.RollingOut) > 0:
		if c.pending {
			res.Waiting = "worker pools rolling out: " + strings.Join(res.RollingOut, ", ")
		}
		return nil
	case !c.pending:
		return nil
	case len(res.ControlPlaneSteps) == 0:
		return fmt.Errorf("the control plane runs %s, not %s, and has no upgrade plan", cp.SpecVersion, c.in.Target)
	}
	res.ControlPlane = res.ControlPlaneSteps[0]
	c.starting, c.pending = true, false
	return nil
}

// controlPlaneUpgrading is Cluster API's ControlPlane contract IsUpgrading: a status version is
// reported and the spec version is not it (unless older: a downgrade is not an upgrade).
func controlPlaneUpgrading(cp ControlPlane) bool {
	if cp.StatusVersion == "" || cp.StatusVersion == cp.SpecVersion {
		return false
	}
	spec, err1 := parse(cp.SpecVersion)
	status, err2 := parse(cp.StatusVersion)
	return err1 != nil || err2 != nil || !spec.LessThan(status)
}

// behind names the existing pools at neither version nor the target.
func (c *computation) behind(version string) []string {
	var out []string
	for _, p := range c.in.Pools {
		if p.Exists && p.Version != version && p.Version != c.in.Target {
			out = append(out, p.Name)
		}
	}
	return out
}

// pools decides each pool's version (Cluster API's computeMachineDeploymentVersion and
// computeMachinePoolVersion, the RuntimeSDK gate off), in topology order: a new pool starts at the
// target (creating it waits for a stable control plane: model/topology) and takes no upgrade
// slot; one at the target keeps it. Any other keeps its version while it is deferred or held,
// while its kind's pools upgrading reach the concurrency, while the control plane is neither
// stable nor waiting for the workers, and while it already runs the first version of the workers'
// plan; else it takes that version.
func (c *computation) pools() error {
	res, target := c.res, c.in.Target
	stableOrWaiting := !c.provisioning && !c.cpUpgrading && !c.starting && (!c.pending || c.waitingForWorkers)
	held := map[bool]bool{} // by kind: a hold-upgrade-sequence on this pool or an earlier one
	for _, p := range c.in.Pools {
		held[p.MachinePool] = held[p.MachinePool] || p.Hold
		key := p.Key()
		if !p.Exists {
			res.Pools[key] = target
			continue
		}
		res.Pools[key] = p.Version
		if p.Version == target {
			continue
		}
		if _, err := parse(p.Version); err != nil {
			return fmt.Errorf("pool %s version: %w", p.Name, err)
		}
		switch {
		case held[p.MachinePool]:
			res.Held = append(res.Held, p.Name)
		case p.Defer:
			res.Deferred = append(res.Deferred, p.Name)
		case c.upgradingOf(p.MachinePool) >= c.concurrency, !stableOrWaiting:
			res.Pending = append(res.Pending, p.Name)
		case len(res.WorkerSteps) == 0:
			return fmt.Errorf("pool %s runs %s, not %s, and the workers have no upgrade plan", p.Name, p.Version, target)
		case res.WorkerSteps[0] == p.Version:
			res.Pending = append(res.Pending, p.Name)
		default:
			res.Pools[key] = res.WorkerSteps[0]
			c.upgrading[key] = true
		}
	}
	for _, p := range c.in.Pools {
		if c.upgrading[p.Key()] {
			res.Upgrading = append(res.Upgrading, p.Name)
		}
	}
	return nil
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

// workerPlan is the workers' upgrade plan Cluster API's DefaultAndValidateUpgradePlans defaults
// when none is given: while the control plane goes from its version (from) through steps, the
// workers, starting at workers (the lowest version a pool runs; "" when there is none: no plan),
// take the version of every third minor on the way (the furthest the version skew lets them lag)
// and then the target.
func workerPlan(workers, from string, steps []string) ([]string, error) {
	if workers == "" {
		return nil, nil
	}
	w, err := parse(workers)
	if err != nil {
		return nil, fmt.Errorf("worker version: %w", err)
	}
	path := append([]string{from}, steps...)
	target := path[len(path)-1]
	if target == workers {
		return nil, nil
	}
	tgt, err := parse(target)
	if err != nil {
		return nil, err
	}
	// The version of each minor the control plane passes (the last one listed for it).
	byMinor := map[uint64]string{}
	for _, v := range path {
		sv, err := parse(v)
		if err != nil {
			return nil, err
		}
		byMinor[sv.Minor()] = v
	}
	var out []string
	if w.Major() == tgt.Major() {
		for m := w.Minor() + maxWorkerSkew; m < tgt.Minor(); m += maxWorkerSkew {
			v, ok := byMinor[m]
			if !ok {
				return nil, fmt.Errorf("no v%d.%d version on the control plane's way from %s to %s for the workers to step through", w.Major(), m, from, target)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 || out[len(out)-1] != target {
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
