package upgrade

import (
	"slices"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
)

// Ledger is the one record of what a Cluster's lifecycle hooks have answered. The workflow keeps
// it (it survives continue-as-new and travels into and out of an upgrade), the pass's decision
// reads it (Hold: which version moves wait; Owed: which hook is called next), and the workflow
// records each hook that passes (Record). Cluster API keeps the same facts in the Cluster's
// pending-hooks annotation and its hook response tracker.
type Ledger struct {
	// CreatePassed: BeforeClusterCreate let the Cluster be created (or it existed already).
	CreatePassed bool `json:"createPassed,omitempty"`
	// InitializedOwed: topoflow created the Cluster and AfterControlPlaneInitialized has not
	// passed yet (called once, never again after it passed).
	InitializedOwed bool `json:"initializedOwed,omitempty"`
	// DeletePassed: BeforeClusterDelete let the teardown start.
	DeletePassed bool `json:"deletePassed,omitempty"`
	// ApprovedTarget is the version BeforeClusterUpgrade allowed; nothing moves towards another.
	ApprovedTarget string `json:"approvedTarget,omitempty"`
	// ControlPlaneApproved is the version BeforeControlPlaneUpgrade allowed the control plane to
	// move to; ControlPlaneAcknowledged the control plane version AfterControlPlaneUpgrade passed
	// for (once the control plane reaches another, nothing moves until it passes for that one).
	ControlPlaneApproved     string `json:"controlPlaneApproved,omitempty"`
	ControlPlaneAcknowledged string `json:"controlPlaneAcknowledged,omitempty"`
	// WorkersApproved is the version BeforeWorkersUpgrade allowed the pools to move to;
	// WorkersAcknowledged the version AfterWorkersUpgrade passed for.
	WorkersApproved     string `json:"workersApproved,omitempty"`
	WorkersAcknowledged string `json:"workersAcknowledged,omitempty"`
	// Completed is the target AfterClusterUpgrade passed for (once per upgrade).
	Completed string `json:"completed,omitempty"`
}

// Due is a lifecycle hook the Cluster waits for, with the versions its request carries.
type Due struct {
	Hook string `json:"hook"`
	// From and To are a Before*Upgrade request's versions; Version an After*Upgrade request's.
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Version string `json:"version,omitempty"`
	// ControlPlaneSteps and WorkerSteps are BeforeClusterUpgrade's upgrade plan.
	ControlPlaneSteps []string `json:"controlPlaneSteps,omitempty"`
	WorkerSteps       []string `json:"workerSteps,omitempty"`
	// Reached is the version the control plane runs when BeforeClusterUpgrade is asked: the
	// starting point, which needs no AfterControlPlaneUpgrade.
	Reached string `json:"reached,omitempty"`
}

// Hold holds the version moves the upgrade hooks have not allowed yet, in Cluster API's order:
// BeforeClusterUpgrade; per control plane step BeforeControlPlaneUpgrade, the step,
// AfterControlPlaneUpgrade; when the workers move, BeforeWorkersUpgrade, the pools,
// AfterWorkersUpgrade. It rewrites res so that held parts keep their versions and returns the
// hook that holds and the version concerned. A nil ledger holds nothing (a plan without a
// workflow).
func (l *Ledger) Hold(in Input, res *Result) (string, string) {
	cp := in.ControlPlane
	if l == nil || !res.InProgress || !cp.Exists {
		return "", ""
	}
	workersAt, workersMoving, workersDone := "", false, true
	for _, p := range in.Pools {
		if !p.Exists {
			continue
		}
		if res.Pools[p.Key()] != p.Version {
			workersMoving, workersAt = true, res.Pools[p.Key()]
		}
		if p.Version != l.WorkersApproved || p.RollingOut {
			workersDone = false
		}
	}
	holdWorkers := func() {
		for _, p := range in.Pools {
			if p.Exists {
				res.Pools[p.Key()] = p.Version
			}
		}
		res.Upgrading, res.Pending = nil, nil
	}
	holdAll := func() {
		res.ControlPlane = cp.SpecVersion
		holdWorkers()
	}
	reached := cp.Stable && cp.StatusVersion == cp.SpecVersion
	switch {
	case l.ApprovedTarget != in.Target:
		holdAll()
		return hooksv1.BeforeClusterUpgrade, in.Target
	case reached && cp.StatusVersion != l.ControlPlaneAcknowledged:
		holdAll()
		return hooksv1.AfterControlPlaneUpgrade, cp.StatusVersion
	case l.WorkersApproved != "" && l.WorkersApproved != l.WorkersAcknowledged && workersDone:
		holdAll()
		return hooksv1.AfterWorkersUpgrade, l.WorkersApproved
	case res.ControlPlane != cp.SpecVersion && res.ControlPlane != l.ControlPlaneApproved:
		next := res.ControlPlane
		holdAll()
		return hooksv1.BeforeControlPlaneUpgrade, next
	case workersMoving && workersAt != l.WorkersApproved:
		holdWorkers()
		return hooksv1.BeforeWorkersUpgrade, workersAt
	}
	return "", ""
}

// Owed is the upgrade hook the Cluster waits for after a decision (nil: none), in Cluster API's
// order: the hook Hold named (heldBy, heldVersion), else the after-hooks of an upgrade this ledger
// approved once its parts are done: AfterControlPlaneUpgrade for the last control plane step,
// AfterWorkersUpgrade when the pools have settled, AfterClusterUpgrade once everything is at the
// target and no pool rolls out. A nil ledger owes nothing.
func (l *Ledger) Owed(in Input, res *Result, heldBy, heldVersion string) *Due {
	if l == nil {
		return nil
	}
	target, cp := in.Target, in.ControlPlane
	switch heldBy {
	case hooksv1.BeforeClusterUpgrade:
		return &Due{Hook: heldBy, From: cp.SpecVersion, To: target, Reached: cp.StatusVersion,
			ControlPlaneSteps: res.ControlPlaneSteps, WorkerSteps: res.WorkerSteps}
	case hooksv1.BeforeControlPlaneUpgrade:
		return &Due{Hook: heldBy, From: cp.SpecVersion, To: heldVersion}
	case hooksv1.BeforeWorkersUpgrade:
		return &Due{Hook: heldBy, To: heldVersion}
	case hooksv1.AfterControlPlaneUpgrade, hooksv1.AfterWorkersUpgrade:
		return &Due{Hook: heldBy, Version: heldVersion}
	}
	ours := l.ApprovedTarget != "" && l.ApprovedTarget == target
	if res.InProgress || !ours {
		return nil
	}
	complete := len(res.RollingOut) == 0
	switch {
	case l.ControlPlaneAcknowledged != target:
		return &Due{Hook: hooksv1.AfterControlPlaneUpgrade, Version: target}
	case complete && l.WorkersApproved != "" && l.WorkersApproved != l.WorkersAcknowledged:
		return &Due{Hook: hooksv1.AfterWorkersUpgrade, Version: l.WorkersApproved}
	case complete && l.Completed != target:
		return &Due{Hook: hooksv1.AfterClusterUpgrade, Version: target}
	}
	return nil
}

// Finishing says whether an upgrade this ledger approved has every version at the target while
// pools still roll out to it: it is not complete (its after-hooks come once they are through), and
// Cluster API reports it as upgrading (reconcileTopologyReconciledCondition: ClusterUpgrading while
// MachineDeployments are upgrading) until AfterClusterUpgrade. A nil ledger approved nothing.
func (l *Ledger) Finishing(target string, res *Result) bool {
	return l != nil && l.ApprovedTarget == target && l.Completed != target && !res.InProgress && len(res.RollingOut) > 0
}

// Record notes that a hook passed.
func (l *Ledger) Record(d Due) {
	switch d.Hook {
	case hooksv1.BeforeClusterCreate:
		l.CreatePassed, l.InitializedOwed = true, true
	case hooksv1.AfterControlPlaneInitialized:
		l.InitializedOwed = false
	case hooksv1.BeforeClusterDelete:
		l.DeletePassed = true
	case hooksv1.BeforeClusterUpgrade:
		l.Withdraw()
		l.ApprovedTarget, l.ControlPlaneAcknowledged = d.To, d.Reached
	case hooksv1.BeforeControlPlaneUpgrade:
		l.ControlPlaneApproved = d.To
	case hooksv1.AfterControlPlaneUpgrade:
		l.ControlPlaneAcknowledged = d.Version
	case hooksv1.BeforeWorkersUpgrade:
		l.WorkersApproved = d.To
	case hooksv1.AfterWorkersUpgrade:
		l.WorkersAcknowledged = d.Version
	case hooksv1.AfterClusterUpgrade:
		l.Completed = d.Version
	}
}

// Withdraw forgets what the upgrade hooks allowed: no after-hook is owed any more, and asking for
// the same version again starts over with BeforeClusterUpgrade.
func (l *Ledger) Withdraw() {
	l.ApprovedTarget, l.ControlPlaneApproved, l.ControlPlaneAcknowledged = "", "", ""
	l.WorkersApproved, l.WorkersAcknowledged, l.Completed = "", "", ""
}

// PendingHooks are the after-hooks the Cluster is still owed, in Cluster API's order: the value
// of its runtime.cluster.x-k8s.io/pending-hooks annotation.
func (l Ledger) PendingHooks() []string {
	out := []string{}
	if l.InitializedOwed {
		out = append(out, hooksv1.AfterControlPlaneInitialized)
	}
	if l.ApprovedTarget != "" && l.ControlPlaneAcknowledged != l.ApprovedTarget {
		out = append(out, hooksv1.AfterControlPlaneUpgrade)
	}
	if l.ApprovedTarget != "" && l.Completed != l.ApprovedTarget {
		out = append(out, hooksv1.AfterClusterUpgrade)
	}
	return out
}

// PendingAfter is the pending-hooks annotation a pass writes before its applies once it let the
// hooks in passed through without a call (nil: nothing to write): the after-hooks still owed with
// them recorded, when those differ from l's, and always after BeforeClusterCreate, whose mark of
// AfterControlPlaneInitialized lets CreateGate recognise an interrupted create.
func (l Ledger) PendingAfter(passed []Due) []string {
	after, created := l, false
	for _, d := range passed {
		after.Record(d)
		created = created || d.Hook == hooksv1.BeforeClusterCreate
	}
	if p := after.PendingHooks(); created || !slices.Equal(p, l.PendingHooks()) {
		return p
	}
	return nil
}

// Ended says whether an upgrade to `to` has ended before completing, from a pass's decision:
// "superseded by an upgrade to X" when an upgrade to another target is due (BeforeClusterUpgrade
// owed for it), "withdrawn: ..." when spec.topology.version (version) names another version and
// no upgrade is in progress (it was set back before any part moved: a version set back after the
// control plane moved is a downgrade, refused before this is asked). "" while it goes on.
func Ended(to, version string, inProgress bool, due *Due) string {
	switch {
	case due != nil && due.Hook == hooksv1.BeforeClusterUpgrade && due.To != to:
		return "superseded by an upgrade to " + due.To
	case version != to && version != "" && !inProgress:
		return "withdrawn: spec.topology.version is " + version + ", not " + to + " any more"
	}
	return ""
}
