package activities

import (
	"strconv"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/upgrade"
)

// UpgradeSummary is where an upgrade stands, for status and the workflow's history.
type UpgradeSummary struct {
	Target string `json:"target"`
	// From is the control plane's spec version; Reached the version all its machines run.
	From    string `json:"from"`
	Reached string `json:"reached"`
	// Stable: the control plane is not provisioning, scaling or rolling out.
	Stable bool `json:"stable"`
	// HeldBy names the hook holding version moves ("BeforeClusterUpgrade", ...), if any, and
	// HeldVersion the version it is about (the next step, or the version reached).
	HeldBy       string   `json:"heldBy,omitempty"`
	HeldVersion  string   `json:"heldVersion,omitempty"`
	ControlPlane string   `json:"controlPlane"`
	Steps        []string `json:"steps,omitempty"`
	// WorkerSteps are the versions the pools pass through (BeforeClusterUpgrade's workersUpgrades).
	WorkerSteps []string `json:"workerSteps,omitempty"`
	Upgrading   []string `json:"upgrading,omitempty"`
	Pending     []string `json:"pending,omitempty"`
	Deferred    []string `json:"deferred,omitempty"`
	Held        []string `json:"held,omitempty"`
	Waiting     string   `json:"waiting,omitempty"`
}

// planVersions decides which version every part runs now (see model/upgrade) and sets it on the
// computation input. It returns nil when no upgrade is in progress.
func planVersions(l *loaded, gate *UpgradeGate) (*UpgradeSummary, *upgrade.Result, error) {
	cluster, topo := l.cluster, l.cluster.Spec.Topology
	in := upgrade.Input{Target: topo.Version, KubernetesVersions: l.class.Spec.KubernetesVersions}
	if n, err := strconv.Atoi(cluster.Annotations[labels.UpgradeConcurrency]); err == nil {
		in.Concurrency = n
	}
	if cp := l.input.Current.ControlPlane; cp != nil {
		st, err := contract.ReadControlPlane(cp)
		if err != nil {
			return nil, nil, err
		}
		in.ControlPlane = upgrade.ControlPlane{
			Exists:        true,
			SpecVersion:   st.DesiredVersion,
			StatusVersion: st.Version,
			Stable:        st.Initialized && !st.IsScaling() && (st.ObservedGeneration == 0 || st.ObservedGeneration >= st.Generation),
		}
		if in.ControlPlane.SpecVersion == "" {
			in.ControlPlane.SpecVersion = topo.Version
		}
	}
	// defer-upgrade and hold-upgrade-sequence are read from the topology (and the class's pool
	// metadata), the user's point of control; the object's own annotations may be stale while the
	// pool is held back.
	flags := func(classMeta, topoMeta v1beta1.ObjectMeta) (deferred, held bool) {
		for _, m := range []map[string]string{classMeta.Annotations, topoMeta.Annotations} {
			_, d := m[labels.DeferUpgrade]
			_, h := m[labels.HoldUpgradeSequence]
			deferred, held = deferred || d, held || h
		}
		return deferred, held
	}
	if w := topo.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			p := mdPool(md.Name, l.input.Current.MachineDeployments[md.Name])
			var classMeta v1beta1.ObjectMeta
			if c := l.class.MachineDeploymentClass(md.Class); c != nil {
				classMeta = c.Template.Metadata
			}
			p.Defer, p.Hold = flags(classMeta, md.Metadata)
			in.Pools = append(in.Pools, p)
		}
		for _, mp := range w.MachinePools {
			p := mpPool(mp.Name, l.input.Current.MachinePools[mp.Name])
			var classMeta v1beta1.ObjectMeta
			if c := l.class.MachinePoolClass(mp.Class); c != nil {
				classMeta = c.Template.Metadata
			}
			p.Defer, p.Hold = flags(classMeta, mp.Metadata)
			in.Pools = append(in.Pools, p)
		}
	}
	res, err := upgrade.Compute(in)
	if err != nil {
		return nil, nil, err
	}
	heldBy, heldVersion := gateVersions(gate, in, res)
	l.input.Versions = desired.Versions{ControlPlane: res.ControlPlane, MachineDeployments: map[string]string{}, MachinePools: map[string]string{}}
	if w := topo.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			l.input.Versions.MachineDeployments[md.Name] = res.Pools[upgrade.PoolKey(false, md.Name)]
		}
		for _, mp := range w.MachinePools {
			l.input.Versions.MachinePools[mp.Name] = res.Pools[upgrade.PoolKey(true, mp.Name)]
		}
	}
	if !res.InProgress {
		return nil, res, nil
	}
	return &UpgradeSummary{WorkerSteps: res.WorkerSteps,
		Target: topo.Version, From: in.ControlPlane.SpecVersion, Reached: in.ControlPlane.StatusVersion,
		Stable: in.ControlPlane.Stable, HeldBy: heldBy, HeldVersion: heldVersion, ControlPlane: res.ControlPlane, Steps: res.ControlPlaneSteps,
		Upgrading: res.Upgrading, Pending: res.Pending, Deferred: res.Deferred, Held: res.Held, Waiting: res.Waiting,
	}, res, nil
}

func mdPool(name string, md *v1beta1.MachineDeployment) upgrade.Pool {
	p := upgrade.Pool{Name: name}
	if md == nil {
		return p
	}
	p.Exists = true
	if md.Spec.Template.Spec.Version != nil {
		p.Version = *md.Spec.Template.Spec.Version
	}
	want := int32(1)
	if md.Spec.Replicas != nil {
		want = *md.Spec.Replicas
	}
	s := md.Status
	p.RollingOut = s.ObservedGeneration < md.Generation || s.UpdatedReplicas != want || s.Replicas != want || s.UnavailableReplicas != 0
	return p
}

func mpPool(name string, mp *v1beta1.MachinePool) upgrade.Pool {
	p := upgrade.Pool{Name: name, MachinePool: true}
	if mp == nil {
		return p
	}
	p.Exists = true
	if mp.Spec.Template.Spec.Version != nil {
		p.Version = *mp.Spec.Template.Spec.Version
	}
	want := int32(1)
	if mp.Spec.Replicas != nil {
		want = *mp.Spec.Replicas
	}
	p.RollingOut = mp.Status.ObservedGeneration < mp.Generation || mp.Status.ReadyReplicas != want || mp.Status.Phase == "ScalingUp"
	return p
}

// gateVersions holds version moves the upgrade hooks have not allowed yet, in Cluster API's order:
// BeforeClusterUpgrade; per control plane step BeforeControlPlaneUpgrade, the step,
// AfterControlPlaneUpgrade; when the workers move, BeforeWorkersUpgrade, the pools,
// AfterWorkersUpgrade. It returns the hook that holds, and the version concerned.
func gateVersions(gate *UpgradeGate, in upgrade.Input, res *upgrade.Result) (string, string) {
	cp := in.ControlPlane
	if gate == nil || !res.InProgress || !cp.Exists {
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
		if p.Version != gate.WorkersApproved || p.RollingOut {
			workersDone = false
		}
	}
	holdAll := func() {
		res.ControlPlane = cp.SpecVersion
		for _, p := range in.Pools {
			if p.Exists {
				res.Pools[p.Key()] = p.Version
			}
		}
		res.Upgrading, res.Pending = nil, nil
	}
	reached := cp.Stable && cp.StatusVersion == cp.SpecVersion
	switch {
	case gate.ApprovedTarget != in.Target:
		holdAll()
		return "BeforeClusterUpgrade", in.Target
	case reached && cp.StatusVersion != gate.ControlPlaneAcknowledged:
		holdAll()
		return "AfterControlPlaneUpgrade", cp.StatusVersion
	case gate.WorkersApproved != "" && gate.WorkersApproved != gate.WorkersAcknowledged && workersDone:
		holdAll()
		return "AfterWorkersUpgrade", gate.WorkersApproved
	case res.ControlPlane != cp.SpecVersion && res.ControlPlane != gate.ControlPlaneApproved:
		next := res.ControlPlane
		holdAll()
		return "BeforeControlPlaneUpgrade", next
	case workersMoving && workersAt != gate.WorkersApproved:
		for _, p := range in.Pools {
			if p.Exists {
				res.Pools[p.Key()] = p.Version
			}
		}
		res.Upgrading, res.Pending = nil, nil
		return "BeforeWorkersUpgrade", workersAt
	}
	return "", ""
}
