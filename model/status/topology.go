package status

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topoflow/topoflow/model/api/hooks/hooknames"
	"github.com/topoflow/topoflow/model/upgrade"
)

// Observed is what the providers report about a Cluster (the workflow reads it after a pass).
type Observed struct {
	Deleting bool
	// RefsSet: the Cluster points at its control plane (and infrastructure cluster, if any).
	RefsSet                 bool
	InfrastructureReady     bool
	EndpointValid           bool
	ControlPlaneInitialized bool
	ControlPlaneReady       bool
}

// Cluster is the phase and the conditions a Cluster gets after a pass: the topology condition the
// pass ended with, and the provider conditions from what was observed (Cluster API's v1beta1
// reasons).
func Cluster(o Observed, topologyCond Condition) (string, []Condition) {
	phase := Phase(Facts{Deleting: o.Deleting, RefsSet: o.RefsSet, InfrastructureReady: o.InfrastructureReady, EndpointValid: o.EndpointValid})
	conds := []Condition{topologyCond,
		provider(InfrastructureReady, o.InfrastructureReady, "WaitingForInfrastructure"),
		provider(ControlPlaneInitialized, o.ControlPlaneInitialized, "WaitingForControlPlaneProviderInitialized"),
		provider(ControlPlaneReady, o.ControlPlaneReady, "WaitingForControlPlane"),
	}
	return phase, conds
}

func provider(t string, ok bool, reason string) Condition {
	if ok {
		return True(t)
	}
	return False(t, reason, SeverityInfo, "")
}

// Reconciled is the topology condition of a pass that applied everything.
func Reconciled() Condition { return True(TopologyReconciled) }

// Failed is the topology condition of a pass that could not compute or apply the topology (a
// missing class or template, an invalid topology); msg names the object and field.
func Failed(msg string) Condition {
	return False(TopologyReconciled, ReasonReconcileFailed, SeverityError, msg)
}

// Paused is the topology condition of a paused Cluster.
func Paused() Condition {
	return False(TopologyReconciled, ReasonPaused, SeverityInfo,
		"Cluster is paused (spec.paused or annotation cluster.x-k8s.io/paused); topology changes are held")
}

// HookStage is the part of the lifecycle a blocking hook holds, which picks the reason.
type HookStage int

const (
	StageCreate HookStage = iota
	StageUpgrade
	StageDelete
)

// HookBlocks is the topology condition while a blocking hook holds the Cluster; why is the hook's
// answer (see HookAnswer), target the upgrade's version for StageUpgrade.
func HookBlocks(stage HookStage, why, target string) Condition {
	switch stage {
	case StageUpgrade:
		return False(TopologyReconciled, ReasonClusterUpgrading, SeverityInfo, "Cluster is upgrading to "+target+"\n  * "+why)
	case StageDelete:
		return False(TopologyReconciled, ReasonDeleting, SeverityInfo, why)
	}
	return False(TopologyReconciled, ReasonClusterCreating, SeverityInfo, why)
}

// HookFailed is the topology condition after a lifecycle hook failed (failure is the runtime
// client's error, see runtimeext.Result.Failure). Cluster API v1.14 reports it as a failed
// reconcile (#13813), the error wrapped by the reconcile step that called the hook.
func HookFailed(hook, failure string) Condition {
	return Failed(hookCaller[hook] + failure)
}

// hookCaller is how Cluster API's reconcile wraps a hook's error, by where it calls the hook:
// the upgrade hooks while computing the control plane's version (desiredstate's
// computeControlPlaneVersion, under Generate), the after-hooks in reconcileState's callAfterHooks;
// BeforeClusterCreate and BeforeClusterDelete are returned unwrapped.
var hookCaller = map[string]string{
	hooknames.BeforeClusterUpgrade:         upgradeHookCaller,
	hooknames.BeforeControlPlaneUpgrade:    upgradeHookCaller,
	hooknames.AfterControlPlaneUpgrade:     upgradeHookCaller,
	hooknames.BeforeWorkersUpgrade:         upgradeHookCaller,
	hooknames.AfterWorkersUpgrade:          upgradeHookCaller,
	hooknames.AfterControlPlaneInitialized: "error reconciling the Cluster topology: ",
	hooknames.AfterClusterUpgrade:          "error reconciling the Cluster topology: ",
}

const upgradeHookCaller = "error computing the desired state of the Cluster topology: failed to compute ControlPlane: failed to compute version of ControlPlane: "

// HookAnswer says why a blocking hook's answer holds the step ("" when it lets it go on):
// handlers failed, or one asked to retry later.
func HookAnswer(hook string, failed []string, retryAfterSeconds int32, message string) string {
	switch {
	case len(failed) > 0:
		return fmt.Sprintf("hook %s failed (%s): %s", hook, strings.Join(failed, ", "), message)
	case retryAfterSeconds > 0:
		msg := fmt.Sprintf("hook %s asked to retry in %ds", hook, retryAfterSeconds)
		if message != "" {
			msg += ": " + message
		}
		return msg
	}
	return ""
}

// CreatePending is the topology condition while new pools wait for the control plane to be
// stable (Cluster API's MachineDeploymentsCreatePending).
func CreatePending(pools []string) Condition {
	return False(TopologyReconciled, ReasonMachineDeploymentsCreatePending, SeverityInfo,
		fmt.Sprintf("MachineDeployment(s) %s creation pending: waiting for the control plane to be stable", strings.Join(pools, ", ")))
}

// Upgrading is the topology condition while an upgrade is in progress: one line per part, as
// Cluster API's ClusterUpgrading message has.
func Upgrading(u *upgrade.Summary) Condition {
	lines := []string{"Cluster is upgrading to " + u.Target}
	if len(u.Steps) > 0 {
		lines = append(lines, "  * Control plane upgrade plan: "+strings.Join(u.Steps, " -> "))
	}
	if u.Waiting != "" {
		lines = append(lines, "  * Control plane waits for "+u.Waiting)
	}
	for _, g := range []struct {
		what  string
		names []string
	}{
		{"upgrading", u.Upgrading}, {"pending upgrade", u.Pending}, {"upgrade deferred", u.Deferred}, {"upgrade held", u.Held},
	} {
		if len(g.names) > 0 {
			lines = append(lines, "  * Worker pools "+g.what+": "+strings.Join(g.names, ", "))
		}
	}
	return False(TopologyReconciled, ReasonClusterUpgrading, SeverityInfo, strings.Join(lines, "\n"))
}

// TearingDown is the topology condition while a teardown step waits for its objects to go.
func TearingDown(step string, remaining []string) Condition {
	return False(TopologyReconciled, ReasonDeleting, SeverityInfo,
		fmt.Sprintf("Deleting the topology, step %s: waiting for deletion of %s", step, strings.Join(remaining, ", ")))
}

// ProvidersWait says what a Cluster whose topology is applied still waits for from its providers
// ("" once the infrastructure is ready and the control plane initialized). It is not a
// condition: Cluster API reports the topology reconciled meanwhile; the workflow re-checks sooner.
func ProvidersWait(hasInfrastructure, infrastructureReady, controlPlaneInitialized bool) string {
	switch {
	case hasInfrastructure && !infrastructureReady:
		return "the infrastructure to be ready"
	case !controlPlaneInitialized:
		return "the control plane to be initialized"
	}
	return ""
}

// UpgradePlan is what Cluster API v1.14's topology controller reports in the Cluster's
// status.controlPlane.upgradePlan and status.workers.upgradePlan (reconcileUpgradePlan): the
// versions the control plane and the workers (all MachineDeployments and MachinePools) still
// have to take, the next first; both empty when no upgrade is in progress.
type UpgradePlan struct {
	ControlPlane []string `json:"controlPlane,omitempty"`
	Workers      []string `json:"workers,omitempty"`
}

// Equal says whether two plans list the same versions.
func (p *UpgradePlan) Equal(o *UpgradePlan) bool {
	return slices.Equal(p.ControlPlane, o.ControlPlane) && slices.Equal(p.Workers, o.Workers)
}

// PlanOf is the upgrade plan of a pass's decision (u nil: no upgrade in progress).
func PlanOf(u *upgrade.Summary) *UpgradePlan {
	p := &UpgradePlan{}
	if u != nil {
		p.ControlPlane, p.Workers = slices.Clone(u.Steps), slices.Clone(u.WorkerSteps)
	}
	return p
}

// PlanField is one upgrade plan as the status holds it: a list of {version} (nil when empty, so
// the field is left out and, written by server-side apply, removed).
func PlanField(versions []string) []any {
	var out []any
	for _, v := range versions {
		out = append(out, map[string]any{"version": v})
	}
	return out
}
