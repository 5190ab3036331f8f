package upgrade

// Gate is the hook ledger of an upgrade: what the upgrade lifecycle hooks have allowed so far.
// It holds version moves the hooks have not allowed yet (see Gate.Hold).
type Gate struct {
	// ApprovedTarget is the version BeforeClusterUpgrade allowed; nothing moves towards another.
	ApprovedTarget string `json:"approvedTarget"`
	// ControlPlaneAcknowledged is the control plane version AfterControlPlaneUpgrade passed for;
	// once the control plane reaches another version nothing moves further until it does.
	ControlPlaneAcknowledged string `json:"controlPlaneAcknowledged"`
	// ControlPlaneApproved is the version BeforeControlPlaneUpgrade allowed the control plane to
	// move to; WorkersApproved the version BeforeWorkersUpgrade allowed the pools to move to;
	// WorkersAcknowledged the version AfterWorkersUpgrade passed for.
	ControlPlaneApproved string `json:"controlPlaneApproved,omitempty"`
	WorkersApproved      string `json:"workersApproved,omitempty"`
	WorkersAcknowledged  string `json:"workersAcknowledged,omitempty"`
}

// Hold holds version moves the upgrade hooks have not allowed yet, in Cluster API's order:
// BeforeClusterUpgrade; per control plane step BeforeControlPlaneUpgrade, the step,
// AfterControlPlaneUpgrade; when the workers move, BeforeWorkersUpgrade, the pools,
// AfterWorkersUpgrade. It returns the hook that holds, and the version concerned.
func (gate *Gate) Hold(in Input, res *Result) (string, string) {
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
