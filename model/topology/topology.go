// Package topology makes the one decision of a pass over a managed Cluster, from the loaded state
// and the upgrade hooks' ledger: which version each part runs now (model/upgrade), which hook holds
// the next move, the desired objects (model/desired), which parts are not written this pass
// because they wait for their version or must not be created yet, and what is deleted. The apply activity and the plan
// call it, so a plan shows what the next apply does.
package topology

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/hooks/hooknames"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/upgrade"
)

// Input is what a pass decides from.
type Input struct {
	// Desired is the computation input (Cluster, class, templates, current objects); its Versions
	// are set by Decide.
	Desired desired.Input
	// Ledger is what the lifecycle hooks answered; nil holds nothing and owes nothing (a plan
	// made without the Cluster's workflow). The hooks that pass without a call are recorded in it.
	Ledger *upgrade.Ledger
	// Unhandled are the hooks that pass without a call when owed: no extension handles them and
	// their call has nothing else to do (upgrade.Ledger.Decide).
	Unhandled []string
	// Planner, when set, gives the plan of an upgrade that is due from the class's
	// GenerateUpgradePlan extension (it is asked only then).
	Planner func(upgrade.Input) (*upgrade.ExternalPlan, error)
}

// Decision is the outcome of a pass.
type Decision struct {
	// State is the desired state; parts that wait are marked (desired.State's Pending fields) and
	// left out of State.Objects.
	State *desired.State
	// Upgrade is what runs now; Result the versions decided.
	Upgrade upgrade.Input
	Result  *upgrade.Result
	// HeldBy names the hook holding version moves, and HeldVersion the version it is about.
	HeldBy, HeldVersion string
	// Owed is the upgrade hook the Cluster waits for now (upgrade.Ledger.Owed), nil for none.
	Owed *upgrade.Due
	// Passed are the hooks owed on the way that passed without a call (Input.Unhandled).
	Passed []upgrade.Due
	// Finishing: every version is at the target while pools still roll out to it
	// (upgrade.Ledger.Finishing).
	Finishing bool
	// Deletes are what the pass deletes once the parts that replace them were applied.
	Deletes Deletes
}

// Decide computes a pass. Errors are the computation's (they name the object and field).
func Decide(in Input) (*Decision, error) {
	d := in.Desired
	cur := d.Current
	ui, err := upgrade.InputFrom(d.Cluster, d.Class, cur.ControlPlane, cur.MachineDeployments, cur.MachinePools, cur.MachineVersions, cur.NodeVersions)
	if err != nil {
		return nil, err
	}
	if in.Planner != nil && ui.NeedsPlan() {
		if ui.External, err = in.Planner(ui); err != nil {
			return nil, err
		}
	}
	hooks, err := in.Ledger.Decide(ui, in.Unhandled)
	if err != nil {
		// Name the object and the field: the condition shows this message as it is.
		return nil, fmt.Errorf("Cluster %s/%s: spec.topology.version %s: %w", d.Cluster.Namespace, d.Cluster.Name, ui.Target, err)
	}
	res, heldBy, heldVersion := hooks.Result, hooks.HeldBy, hooks.HeldVersion

	d.Versions = desired.Versions{ControlPlane: res.ControlPlane, MachineDeployments: map[string]string{}, MachinePools: map[string]string{}}
	for _, p := range ui.Pools {
		if p.MachinePool {
			d.Versions.MachinePools[p.Name] = res.Pools[p.Key()]
		} else {
			d.Versions.MachineDeployments[p.Name] = res.Pools[p.Key()]
		}
	}
	state, err := desired.Compute(d)
	if err != nil {
		return nil, err
	}
	markPending(state, cur, ui, res, heldBy)
	dels, err := deletes(cur, state, d.Cluster.Namespace)
	if err != nil {
		return nil, err
	}
	return &Decision{State: state, Upgrade: ui, Result: res, HeldBy: heldBy, HeldVersion: heldVersion,
		Owed: hooks.Owed, Passed: hooks.Passed, Finishing: in.Ledger.Finishing(ui.Target, res), Deletes: dels}, nil
}

// markPending marks what Cluster API's topology controller does not write in this pass
// (reconcileControlPlane, updateMachineDeployment, updateMachinePool, createMachineDeployment,
// createMachinePool with the UpgradeTracker): a control plane or pool that keeps its current version
// while the topology's differs (pending an upgrade: writing anything else now would roll it out
// twice) is not written, its health check is; a new pool is not created at all while the control
// plane is not stable (controlPlaneStable) or AfterControlPlaneUpgrade or BeforeWorkersUpgrade
// holds (computeMachineDeploymentVersion, computeMachinePoolVersion).
func markPending(state *desired.State, cur desired.Current, ui upgrade.Input, res *upgrade.Result, heldBy string) {
	target := ui.Target
	cp := ui.ControlPlane
	if cp.Exists && res.ControlPlane != target && cp.SpecVersion == res.ControlPlane {
		state.ControlPlanePending = true
		if ref, err := contract.ControlPlaneMachineInfrastructureRef(cur.ControlPlane); err == nil && ref != nil {
			state.Kept = append(state.Kept, desired.RefKeyIn(ref, cur.ControlPlane.GetNamespace()))
		}
	}
	createHeld := !controlPlaneStable(cp, target, res.ControlPlane) ||
		heldBy == hooknames.AfterControlPlaneUpgrade || heldBy == hooknames.BeforeWorkersUpgrade
	for i := range state.MachineDeployments {
		md := &state.MachineDeployments[i]
		current := cur.MachineDeployments[md.TopologyName]
		version := res.Pools[upgrade.PoolKey(false, md.TopologyName)]
		switch {
		case current == nil:
			md.PendingCreate = createHeld
		case version != target && current.Spec.Template.Spec.Version != "" && current.Spec.Template.Spec.Version == version:
			md.Pending = true
			spec := current.Spec.Template.Spec
			for _, ref := range []clusterv1.ContractVersionedObjectReference{spec.InfrastructureRef, spec.Bootstrap.ConfigRef} {
				if ref.IsDefined() {
					state.Kept = append(state.Kept, desired.RefKeyIn(&corev1.ObjectReference{Kind: ref.Kind, Name: ref.Name}, current.Namespace))
				}
			}
		}
	}
	for i := range state.MachinePools {
		mp := &state.MachinePools[i]
		current := cur.MachinePools[mp.TopologyName]
		version := res.Pools[upgrade.PoolKey(true, mp.TopologyName)]
		switch {
		case current == nil:
			mp.PendingCreate = createHeld
		case version != target && current.Spec.Template.Spec.Version != "" && current.Spec.Template.Spec.Version == version:
			mp.Pending = true
		}
	}
}

// controlPlaneStable is Cluster API's ControlPlaneUpgradeTracker.IsControlPlaneStable: a control
// plane about to be created is stable (new pools are created with it, and the bootstrap provider
// holds their machines until it is initialized); an existing one is not while it is provisioning
// (no status version yet), upgrading, about to upgrade or pending an upgrade.
func controlPlaneStable(cp upgrade.ControlPlane, target, decided string) bool {
	if !cp.Exists {
		return true
	}
	return cp.StatusVersion != "" && cp.StatusVersion == cp.SpecVersion && cp.SpecVersion == target && decided == target
}

// PendingCreates are the topology names of the pools this decision does not create yet
// (MachineDeployments, then MachinePools).
func (d *Decision) PendingCreates() []string {
	var out []string
	for _, md := range d.State.MachineDeployments {
		if md.PendingCreate {
			out = append(out, md.TopologyName)
		}
	}
	for _, mp := range d.State.MachinePools {
		if mp.PendingCreate {
			out = append(out, mp.TopologyName)
		}
	}
	return out
}

// Through decides the pass that ends the change the Cluster's spec asks for, so that what it writes,
// set against the current objects, is the change's whole effect. Where no upgrade is due that is
// the next pass, Decide. Where one is, the upgrade's course (upgrade.Ledger.Course, from the
// ledger given, a zero one for none: every hook on the way let through, every part settled at each
// step) says which hooks are owed and where every part ends; the current objects are then moved to
// those versions, as the providers leave them, and decided over once more with the ledger at the
// end (nothing held, nothing owed). The current objects' names, templates and MachineSets stay as
// they are, so a template whose spec ends up different is rotated from the one there now, under
// the name the passes give it (names.Source keys it by its spec). Nil course: no upgrade is due.
func Through(in Input) (*Decision, *upgrade.Course, error) {
	d := in.Desired
	cur := d.Current
	ui, err := upgrade.InputFrom(d.Cluster, d.Class, cur.ControlPlane, cur.MachineDeployments, cur.MachinePools, cur.MachineVersions, cur.NodeVersions)
	if err != nil {
		return nil, nil, err
	}
	if !ui.NeedsPlan() {
		dec, err := Decide(in)
		return dec, nil, err
	}
	if in.Planner != nil {
		if ui.External, err = in.Planner(ui); err != nil {
			return nil, nil, err
		}
	}
	var ledger upgrade.Ledger
	if in.Ledger != nil {
		ledger = *in.Ledger
	}
	course, err := ledger.Course(ui)
	if err != nil {
		return nil, nil, fmt.Errorf("Cluster %s/%s: spec.topology.version %s: %w", d.Cluster.Namespace, d.Cluster.Name, ui.Target, err)
	}
	if d.Current, err = settledAt(cur, course.Final); err != nil {
		return nil, nil, err
	}
	end := course.Ledger
	dec, err := Decide(Input{Desired: d, Ledger: &end, Unhandled: in.Unhandled})
	return dec, course, err
}

// settledAt is the current state with the control plane and the pools at the versions of the
// upgrade's end (spec and status, as the providers leave them once rolled out; the Machines and
// Nodes then run them too, so they no longer say anything: nil). Objects are copied, never
// changed.
func settledAt(cur desired.Current, final upgrade.Input) (desired.Current, error) {
	out := cur
	out.MachineVersions, out.NodeVersions = nil, nil
	if cp := cur.ControlPlane; cp != nil && final.ControlPlane.Exists {
		cp = cp.DeepCopy()
		for _, p := range []contract.Path{contract.ControlPlaneVersion, contract.ControlPlaneStatusVersion} {
			if err := unstructured.SetNestedField(cp.Object, final.ControlPlane.SpecVersion, p...); err != nil {
				return out, fmt.Errorf("control plane %s: %w", cp.GetName(), err)
			}
		}
		out.ControlPlane = cp
	}
	out.MachineDeployments = maps.Clone(cur.MachineDeployments)
	out.MachinePools = maps.Clone(cur.MachinePools)
	for _, p := range final.Pools {
		if !p.Exists || p.Version == "" {
			continue
		}
		v := p.Version
		if p.MachinePool {
			if mp := out.MachinePools[p.Name]; mp != nil {
				mp = mp.DeepCopy()
				mp.Spec.Template.Spec.Version = v
				out.MachinePools[p.Name] = mp
			}
		} else if md := out.MachineDeployments[p.Name]; md != nil {
			md = md.DeepCopy()
			md.Spec.Template.Spec.Version = v
			out.MachineDeployments[p.Name] = md
		}
	}
	return out, nil
}
