package activities

import (
	"context"
	"fmt"

	"github.com/topoflow/topoflow/activities/runtimeext"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/model/upgrade"
)

// UpgradeSummary is where an upgrade stands (upgrade.Summary).
type UpgradeSummary = upgrade.Summary

// planner supplies the plan of an upgrade that is due from a GenerateUpgradePlan extension.
type planner func(in upgrade.Input) (*upgrade.ExternalPlan, error)

// upgradePlanner asks the ClusterClass's GenerateUpgradePlan handler, when it names one, for the
// plan of an upgrade that is due, and checks the answer (nil: the class names none). As in Cluster
// API the extension is asked again whenever the control plane or the workers have moved on, so
// each answer is for the versions they run now.
func (a *Activities) upgradePlanner(ctx context.Context, l *loaded) planner {
	handler := l.input.Class.Spec.UpgradePlanExtension()
	if handler == "" {
		return nil
	}
	// failed names the class field, so the Cluster's condition says where the handler comes from.
	failed := func(err error) error {
		return fmt.Errorf("spec.upgrade.external.generateUpgradePlanExtension of ClusterClass %s: %w", l.input.Class.Name, err)
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
		cluster := l.input.Cluster.DeepCopy()
		cluster.ManagedFields = nil
		cluster.APIVersion, cluster.Kind = hubv1.GroupVersion.String(), "Cluster"
		req := &hooksv1.GenerateUpgradePlanRequest{Cluster: *cluster, FromControlPlaneKubernetesVersion: cp,
			FromWorkersKubernetesVersion: workers, ToKubernetesVersion: in.Target}
		var resp hooksv1.GenerateUpgradePlanResponse
		rc := &runtimeext.Client{Kube: a.Kube}
		if err := rc.CallExtension(ctx, hooksv1.GenerateUpgradePlan, handler, l.input.Cluster.Namespace, req, nil, &resp); err != nil {
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
	return upgrade.Summarize(dec.Upgrade, dec.Result, dec.HeldBy, dec.HeldVersion, l.input.Class.Spec.UpgradePlanExtension(), dec.Finishing)
}
