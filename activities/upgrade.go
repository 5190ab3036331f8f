package activities

import (
	"context"
	"fmt"

	"github.com/topoflow/topoflow/activities/runtimeext"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/topology"
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
	// PlannedBy names the GenerateUpgradePlan handler that gave the steps ("" when they come
	// from the class's kubernetesVersions, or go straight to the target).
	PlannedBy string   `json:"plannedBy,omitempty"`
	Upgrading []string `json:"upgrading,omitempty"`
	Pending   []string `json:"pending,omitempty"`
	Deferred  []string `json:"deferred,omitempty"`
	Held      []string `json:"held,omitempty"`
	Waiting   string   `json:"waiting,omitempty"`
}

// planner supplies the plan of an upgrade that is due from a GenerateUpgradePlan extension.
type planner func(in upgrade.Input) (*upgrade.ExternalPlan, error)

// upgradePlanner asks the ClusterClass's GenerateUpgradePlan handler, when it names one, for the
// plan of an upgrade that is due, and checks the answer (nil: the class names none). As in Cluster
// API the extension is asked again whenever the control plane or the workers have moved on, so
// each answer is for the versions they run now; answers are reused briefly within a pass.
func (a *Activities) upgradePlanner(ctx context.Context, l *loaded) planner {
	handler := l.class.Spec.UpgradePlanExtension()
	if handler == "" {
		return nil
	}
	// failed names the class field, so the Cluster's condition says where the handler comes from.
	failed := func(err error) error {
		return fmt.Errorf("spec.upgrade.external.generateUpgradePlanExtension of ClusterClass %s: %w", l.class.Name, err)
	}
	extensionSaid := func(msg string) error {
		return failed(&runtimeext.ExtensionError{Hook: hooksv1.GenerateUpgradePlan, Handler: handler, Message: msg})
	}
	return func(in upgrade.Input) (*upgrade.ExternalPlan, error) {
		if !in.NeedsPlan() {
			return nil, nil
		}
		workers, err := in.LowestPoolVersion()
		if err != nil {
			return nil, err
		}
		cp := in.ControlPlane.SpecVersion
		key, err := answerKey(hooksv1.GenerateUpgradePlan, handler, nil, []string{string(l.cluster.UID), cp, workers, in.Target})
		if err != nil {
			return nil, err
		}
		if hit, ok := a.answers.get(key); ok && hit.plan != nil {
			return hit.plan, nil
		}
		cluster := l.cluster.DeepCopy()
		cluster.ManagedFields = nil
		cluster.APIVersion, cluster.Kind = v1beta1.GroupVersion.String(), "Cluster"
		req := &hooksv1.GenerateUpgradePlanRequest{Cluster: *cluster, FromControlPlaneKubernetesVersion: cp,
			FromWorkersKubernetesVersion: workers, ToKubernetesVersion: in.Target}
		var resp hooksv1.GenerateUpgradePlanResponse
		rc := &runtimeext.Client{Kube: a.Kube}
		if err := rc.CallExtension(ctx, hooksv1.GenerateUpgradePlan, handler, l.cluster.Namespace, req, nil, &resp); err != nil {
			return nil, failed(classify(err))
		}
		if resp.Status == "" {
			return nil, extensionSaid("unreachable (failurePolicy Ignore), and an upgrade cannot go on without a plan")
		}
		plan, err := upgrade.CheckExternalPlan(cp, workers, in.Target, upgrade.ExternalPlan{
			ControlPlane: stepVersions(resp.ControlPlaneUpgrades), Workers: stepVersions(resp.WorkersUpgrades)})
		if err != nil {
			return nil, extensionSaid("invalid plan: " + err.Error())
		}
		a.answers.put(key, cachedAnswer{plan: &plan})
		return &plan, nil
	}
}

func stepVersions(steps []hooksv1.UpgradeStepInfo) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Version)
	}
	return out
}

// upgradeSummary says where an upgrade stands after a pass's decision; nil when no upgrade is in
// progress.
func upgradeSummary(l *loaded, dec *topology.Decision) *UpgradeSummary {
	res, in := dec.Result, dec.Upgrade
	if !res.InProgress {
		return nil
	}
	plannedBy := ""
	if in.External != nil {
		plannedBy = l.class.Spec.UpgradePlanExtension()
	}
	return &UpgradeSummary{WorkerSteps: res.WorkerSteps, PlannedBy: plannedBy,
		Target: in.Target, From: in.ControlPlane.SpecVersion, Reached: in.ControlPlane.StatusVersion,
		Stable: in.ControlPlane.Stable, HeldBy: dec.HeldBy, HeldVersion: dec.HeldVersion, ControlPlane: res.ControlPlane, Steps: res.ControlPlaneSteps,
		Upgrading: res.Upgrading, Pending: res.Pending, Deferred: res.Deferred, Held: res.Held, Waiting: res.Waiting,
	}
}
