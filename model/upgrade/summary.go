package upgrade

// Summary is where an upgrade stands after a pass's decision: what the Cluster's status, the
// workflow's state query and its history show.
type Summary struct {
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
	// PlannedBy names the GenerateUpgradePlan handler that gave the steps ("" when they come
	// from the class's kubernetesVersions, or go straight to the target).
	PlannedBy string   `json:"plannedBy,omitempty"`
	Upgrading []string `json:"upgrading,omitempty"`
	Pending   []string `json:"pending,omitempty"`
	Deferred  []string `json:"deferred,omitempty"`
	Held      []string `json:"held,omitempty"`
	Waiting   string   `json:"waiting,omitempty"`
}

// Summarize says where an upgrade stands; nil when none is in progress. plannedBy names the
// GenerateUpgradePlan handler whose plan in.External is. A finishing upgrade (Ledger.Finishing)
// is still in progress: its pools rolling out are upgrading.
func Summarize(in Input, res *Result, heldBy, heldVersion, plannedBy string, finishing bool) *Summary {
	upgrading := res.Upgrading
	switch {
	case finishing && len(upgrading) == 0:
		upgrading = res.RollingOut
	case !res.InProgress && !finishing:
		return nil
	}
	if in.External == nil {
		plannedBy = ""
	}
	return &Summary{Target: in.Target, From: in.ControlPlane.SpecVersion, Reached: in.ControlPlane.StatusVersion,
		Stable: in.ControlPlane.Stable, HeldBy: heldBy, HeldVersion: heldVersion, ControlPlane: res.ControlPlane,
		Steps: res.ControlPlaneSteps, WorkerSteps: res.WorkerSteps, PlannedBy: plannedBy,
		Upgrading: upgrading, Pending: res.Pending, Deferred: res.Deferred, Held: res.Held, Waiting: res.Waiting}
}
