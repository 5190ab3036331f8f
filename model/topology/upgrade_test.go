package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/upgrade"
)

// setVersions sets the current control plane's spec and status versions and the pools' versions.
func (w *world) setVersions(t *testing.T, cpSpec, cpStatus string, pools map[string]string) {
	t.Helper()
	cp := w.in.Desired.Current.ControlPlane.Object
	require.NoError(t, unstructured.SetNestedField(cp, cpSpec, "spec", "version"))
	require.NoError(t, unstructured.SetNestedField(cp, cpStatus, "status", "version"))
	for name, md := range w.in.Desired.Current.MachineDeployments {
		if v, ok := pools[upgrade.PoolKey(false, name)]; ok {
			md.Spec.Template.Spec.Version = v
		}
	}
	for name, mp := range w.in.Desired.Current.MachinePools {
		if v, ok := pools[upgrade.PoolKey(true, name)]; ok {
			mp.Spec.Template.Spec.Version = v
		}
	}
}

// TestUpgradePass_reconcileState: what one pass writes during an upgrade, with the RuntimeSDK gate
// off and no hook ledger (as `starter plan`): the control plane version and whether it is written
// (computeControlPlaneVersion; reconcileControlPlane skips a control plane pending an upgrade), the
// pools that take a version or wait (computeMachineDeploymentVersion, computeMachinePoolVersion;
// updateMachineDeployment and updateMachinePool skip pending ones), and the Cluster's upgrade-step
// annotation (computeCluster: set while an upgrade plan is non-empty), all from Cluster API v1.14.2.
func TestUpgradePass_reconcileState(t *testing.T) {
	const (
		md0, md1, mp0 = "MachineDeployment/md-0", "MachineDeployment/md-1", "MachinePool/mp-0"
	)
	for _, tc := range []struct {
		name             string
		target           string
		cpSpec, cpStatus string
		pools            map[string]string
		// mpRollingOut: the MachinePool's replicas are not all ready (its rollout goes on).
		mpRollingOut bool
		versions     []string
		wantCP       string
		cpPending    bool
		// wantPools are the versions decided; pendingPools the pools not written.
		wantPools    map[string]string
		pendingPools []string
		upgradeStep  string
	}{
		{name: "upgrade starts: the control plane moves, the pools wait",
			target: "v1.32.0", cpSpec: "v1.31.2", cpStatus: "v1.31.2",
			pools:  map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			wantCP: "v1.32.0", wantPools: map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			pendingPools: []string{"md-0", "md-1", "mp-0"}, upgradeStep: "v1.32.0"},
		{name: "a MachinePool still rolls out: the control plane is held and not written",
			target: "v1.32.0", cpSpec: "v1.31.2", cpStatus: "v1.31.2", mpRollingOut: true,
			pools:  map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			wantCP: "v1.31.2", cpPending: true, wantPools: map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			pendingPools: []string{"md-0", "md-1", "mp-0"}, upgradeStep: "v1.31.2"},
		{name: "control plane stable at the target: the first MachineDeployment and the MachinePool move in this pass",
			target: "v1.32.0", cpSpec: "v1.32.0", cpStatus: "v1.32.0",
			pools:  map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			wantCP: "v1.32.0", wantPools: map[string]string{md0: "v1.32.0", md1: "v1.31.2", mp0: "v1.32.0"},
			pendingPools: []string{"md-1"}, upgradeStep: "v1.32.0"},
		{name: "control plane at the target, still rolling out, pools done: no plan, no annotation",
			target: "v1.32.0", cpSpec: "v1.32.0", cpStatus: "v1.31.2",
			pools:  map[string]string{md0: "v1.32.0", md1: "v1.32.0", mp0: "v1.32.0"},
			wantCP: "v1.32.0", wantPools: map[string]string{md0: "v1.32.0", md1: "v1.32.0", mp0: "v1.32.0"}},
		{name: "chained: the control plane at an intermediate step continues",
			target: "v1.33.1", cpSpec: "v1.32.3", cpStatus: "v1.32.3", versions: []string{"v1.31.2", "v1.32.3", "v1.33.1"},
			pools:  map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			wantCP: "v1.33.1", wantPools: map[string]string{md0: "v1.31.2", md1: "v1.31.2", mp0: "v1.31.2"},
			pendingPools: []string{"md-0", "md-1", "mp-0"}, upgradeStep: "v1.33.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sampleWorld(t)
			w.in.Desired.Cluster.Spec.Topology.Version = tc.target
			w.in.Desired.Class.Spec.KubernetesVersions = tc.versions
			w.setVersions(t, tc.cpSpec, tc.cpStatus, tc.pools)
			if tc.mpRollingOut {
				w.in.Desired.Current.MachinePools["mp-0"].Status.Deprecated.V1Beta1.ReadyReplicas--
			}
			dec := w.decide(t)
			assert.Equal(t, tc.wantCP, dec.Result.ControlPlane, "control plane version")
			assert.Equal(t, tc.cpPending, dec.State.ControlPlanePending, "control plane pending")
			for key, v := range tc.wantPools {
				assert.Equal(t, v, dec.Result.Pools[key], key)
			}
			var pending []string
			for _, md := range dec.State.MachineDeployments {
				if md.Pending {
					pending = append(pending, md.TopologyName)
				}
			}
			for _, mp := range dec.State.MachinePools {
				if mp.Pending {
					pending = append(pending, mp.TopologyName)
				}
			}
			assert.Equal(t, tc.pendingPools, pending, "pools not written")
			if tc.upgradeStep == "" {
				assert.NotContains(t, dec.State.Cluster.GetAnnotations(), labels.UpgradeStep)
			} else {
				assert.Equal(t, tc.upgradeStep, dec.State.Cluster.GetAnnotations()[labels.UpgradeStep])
			}
		})
	}
}
