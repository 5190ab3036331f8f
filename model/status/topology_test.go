package status

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// TestTopologyConditions: the TopologyReconciled condition each pass outcome writes (reasons are
// Cluster API's v1beta1 TopologyReconciled reasons).
func TestTopologyConditions(t *testing.T) {
	info, errSev := SeverityInfo, SeverityError
	hookErr := `failed to call extension handlers for hook "X.hooks.runtime.cluster.x-k8s.io": failed to call extension handler "h.ext": got failure response with message: no`
	for _, tc := range []struct {
		name string
		got  Condition
		want Condition
	}{
		{"reconciled", Reconciled(), Condition{Type: TopologyReconciled, Status: true}},
		{"failed", Failed("ClusterClass ns/x (spec.topology.class) not found"),
			Condition{Type: TopologyReconciled, Reason: "TopologyReconcileFailed", Severity: errSev, Message: "ClusterClass ns/x (spec.topology.class) not found"}},
		{"paused", Paused(), Condition{Type: TopologyReconciled, Reason: "Paused", Severity: info,
			Message: "Cluster is paused (spec.paused or annotation cluster.x-k8s.io/paused); topology changes are held"}},
		{"create held", HookBlocks(StageCreate, "hook BeforeClusterCreate asked to retry in 10s", ""),
			Condition{Type: TopologyReconciled, Reason: "ClusterCreating", Severity: info, Message: "hook BeforeClusterCreate asked to retry in 10s"}},
		{"upgrade held", HookBlocks(StageUpgrade, "hook BeforeClusterUpgrade asked to retry in 10s", "v1.32.0"),
			Condition{Type: TopologyReconciled, Reason: "ClusterUpgrading", Severity: info, Message: "Cluster is upgrading to v1.32.0\n  * hook BeforeClusterUpgrade asked to retry in 10s"}},
		{"delete held", HookBlocks(StageDelete, "hook BeforeClusterDelete asked to retry in 5s", ""),
			Condition{Type: TopologyReconciled, Reason: "Deleting", Severity: info, Message: "hook BeforeClusterDelete asked to retry in 5s"}},
		// A failed hook is a failed reconcile, its error wrapped by where Cluster API v1.14 calls
		// it (#13813): unwrapped from the create and delete hooks (Reconciler.callBeforeClusterCreateHook,
		// reconcileDelete), under "error computing the desired state" from the upgrade hooks
		// (generator.computeControlPlaneVersion), under "error reconciling" from the after-hooks
		// (Reconciler.callAfterHooks).
		{"create hook failed", HookFailed("BeforeClusterCreate", hookErr),
			Condition{Type: TopologyReconciled, Reason: "TopologyReconcileFailed", Severity: errSev, Message: hookErr}},
		{"delete hook failed", HookFailed("BeforeClusterDelete", hookErr),
			Condition{Type: TopologyReconciled, Reason: "TopologyReconcileFailed", Severity: errSev, Message: hookErr}},
		{"upgrade hook failed", HookFailed("BeforeWorkersUpgrade", hookErr),
			Condition{Type: TopologyReconciled, Reason: "TopologyReconcileFailed", Severity: errSev,
				Message: "error computing the desired state of the Cluster topology: failed to compute ControlPlane: failed to compute version of ControlPlane: " + hookErr}},
		{"after-hook failed", HookFailed("AfterControlPlaneInitialized", hookErr),
			Condition{Type: TopologyReconciled, Reason: "TopologyReconcileFailed", Severity: errSev, Message: "error reconciling the Cluster topology: " + hookErr}},
		{"create pending", CreatePending([]string{"md-0", "mp-0"}),
			Condition{Type: TopologyReconciled, Reason: "MachineDeploymentsCreatePending", Severity: info,
				Message: "MachineDeployment(s) md-0, mp-0 creation pending: waiting for the control plane to be stable"}},
		{"upgrading", Upgrading(&upgrade.Summary{Target: "v1.33.0", Steps: []string{"v1.32.0", "v1.33.0"}, Waiting: "md-0 to finish", Pending: []string{"md-1"}}),
			Condition{Type: TopologyReconciled, Reason: "ClusterUpgrading", Severity: info,
				Message: "Cluster is upgrading to v1.33.0\n  * Control plane upgrade plan: v1.32.0 -> v1.33.0\n  * Control plane waits for md-0 to finish\n  * Worker pools pending upgrade: md-1"}},
		{"tearing down", TearingDown("workers", []string{"MachineDeployment a"}),
			Condition{Type: TopologyReconciled, Reason: "Deleting", Severity: info, Message: "Deleting the topology, step workers: waiting for deletion of MachineDeployment a"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
}

// TestHookAnswer: what a blocking hook's answer says, and "" when it lets the step go on.
func TestHookAnswer(t *testing.T) {
	assert.Equal(t, "", HookAnswer("BeforeClusterUpgrade", nil, 0, "ignored"))
	assert.Equal(t, "hook BeforeClusterUpgrade failed (a, b): no", HookAnswer("BeforeClusterUpgrade", []string{"a", "b"}, 5, "no"))
	assert.Equal(t, "hook BeforeClusterUpgrade asked to retry in 5s", HookAnswer("BeforeClusterUpgrade", nil, 5, ""))
	assert.Equal(t, "hook BeforeClusterUpgrade asked to retry in 5s: busy", HookAnswer("BeforeClusterUpgrade", nil, 5, "busy"))
}

// TestProvidersWait: what an applied topology still waits for from its providers.
func TestProvidersWait(t *testing.T) {
	for _, tc := range []struct {
		hasInfra, infraReady, cpInit bool
		want                         string
	}{
		{true, false, false, "the infrastructure to be ready"},
		{true, false, true, "the infrastructure to be ready"},
		{true, true, false, "the control plane to be initialized"},
		{false, false, false, "the control plane to be initialized"},
		{true, true, true, ""},
		{false, false, true, ""},
	} {
		assert.Equal(t, tc.want, ProvidersWait(tc.hasInfra, tc.infraReady, tc.cpInit), "%+v", tc)
	}
}

// TestClusterConditions: the provider conditions follow what was observed, beside the topology's.
func TestClusterConditions(t *testing.T) {
	phase, conds := Cluster(Observed{RefsSet: true, InfrastructureReady: true, EndpointValid: true}, Reconciled())
	assert.Equal(t, clusterv1.ClusterPhaseProvisioned, phase)
	assert.Equal(t, []Condition{
		{Type: TopologyReconciled, Status: true},
		{Type: InfrastructureReady, Status: true},
		{Type: ControlPlaneInitialized, Reason: "WaitingForControlPlaneProviderInitialized", Severity: SeverityInfo},
		{Type: ControlPlaneReady, Reason: "WaitingForControlPlane", Severity: SeverityInfo},
	}, conds)
	phase, _ = Cluster(Observed{RefsSet: true}, Reconciled())
	assert.Equal(t, clusterv1.ClusterPhaseProvisioning, phase)
}

// TestUpgradePlan: the plan of a decision, and how the status holds it (Cluster API v1.14's
// reconcileUpgradePlan: the versions still to take, the next first; none without an upgrade).
func TestUpgradePlan(t *testing.T) {
	assert.Equal(t, &UpgradePlan{}, PlanOf(nil), "no upgrade in progress: an empty plan, which clears the status")
	u := &upgrade.Summary{Steps: []string{"v1.34.0", "v1.35.0"}, WorkerSteps: []string{"v1.35.0"}}
	p := PlanOf(u)
	assert.Equal(t, &UpgradePlan{ControlPlane: []string{"v1.34.0", "v1.35.0"}, Workers: []string{"v1.35.0"}}, p)
	u.Steps[0] = "changed"
	assert.Equal(t, "v1.34.0", p.ControlPlane[0], "the plan is a copy")

	assert.True(t, p.Equal(&UpgradePlan{ControlPlane: []string{"v1.34.0", "v1.35.0"}, Workers: []string{"v1.35.0"}}))
	assert.False(t, p.Equal(&UpgradePlan{ControlPlane: []string{"v1.35.0"}, Workers: []string{"v1.35.0"}}))
	assert.True(t, (&UpgradePlan{}).Equal(&UpgradePlan{ControlPlane: []string{}}), "empty and nil are the same plan")

	assert.Nil(t, PlanField(nil))
	assert.Equal(t, []any{map[string]any{"version": "v1.34.0"}, map[string]any{"version": "v1.35.0"}}, PlanField([]string{"v1.34.0", "v1.35.0"}))
}
