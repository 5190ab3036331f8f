package desired

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
)

// TestUpgradeStep_computeCluster follows Cluster API v1.14.2's computeCluster
// (exp/topology/desiredstate/desired_state.go): the Cluster carries the upgrade-step annotation,
// valued with the desired control plane's spec.version, when AfterClusterUpgrade is pending (the
// RuntimeSDK gate's rule) or, with the gate off, while one of the upgrade plans ComputeUpgradePlan
// makes is non-empty: the control plane exists and it, or the lowest version a MachineDeployment or
// MachinePool runs, is not at spec.topology.version. Otherwise it carries none (and the Cluster's
// patch removes it).
func TestUpgradeStep_computeCluster(t *testing.T) {
	const target = "v1.31.2"
	for _, tc := range []struct {
		name string
		// cp is the current control plane's spec.version ("" : not created yet), cpStatus its
		// status.version.
		cp, cpStatus string
		// mds and mps are the current pools' versions by topology name.
		mds, mps map[string]string
		pending  string
		// decided is the version the pass gives the control plane ("" : the target).
		decided string
		want    string
	}{
		{name: "creation: no control plane yet", want: ""},
		{name: "creation with AfterClusterUpgrade pending", pending: "AfterClusterUpgrade", want: target},
		{name: "control plane provisioning at the target", cp: target, want: ""},
		{name: "everything at the target", cp: target, cpStatus: target,
			mds: map[string]string{"md-0": target, "md-1": target}, mps: map[string]string{"mp-0": target}, want: ""},
		{name: "control plane pending its upgrade: the current version is the step", cp: "v1.30.5", cpStatus: "v1.30.5",
			mds: map[string]string{"md-0": "v1.30.5"}, decided: "v1.30.5", want: "v1.30.5"},
		{name: "control plane starting its upgrade", cp: "v1.30.5", cpStatus: "v1.30.5",
			mds: map[string]string{"md-0": "v1.30.5"}, want: target},
		{name: "control plane at the target, upgrading, no pools behind: plans empty", cp: target, cpStatus: "v1.30.5",
			mds: map[string]string{"md-0": target}, want: ""},
		{name: "control plane done, a MachineDeployment behind", cp: target, cpStatus: target,
			mds: map[string]string{"md-0": target, "md-1": "v1.30.5"}, want: target},
		{name: "control plane done, a MachinePool behind", cp: target, cpStatus: target,
			mds: map[string]string{"md-0": target}, mps: map[string]string{"mp-0": "v1.30.5"}, want: target},
		{name: "AfterClusterUpgrade still pending after the plans emptied", cp: target, cpStatus: target,
			mds: map[string]string{"md-0": target}, pending: "AfterControlPlaneUpgrade,AfterClusterUpgrade", want: target},
		{name: "another hook pending only", cp: target, cpStatus: target,
			mds: map[string]string{"md-0": target}, pending: "AfterControlPlaneInitialized", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			in.Cluster.Spec.Topology.Version = target
			if tc.pending != "" {
				in.Cluster.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: tc.pending}
			}
			if tc.cp != "" {
				first, err := Compute(in)
				require.NoError(t, err)
				in.Cluster.Spec.InfrastructureRef, in.Cluster.Spec.ControlPlaneRef = hubRef(first.InfrastructureRef), hubRef(first.ControlPlaneRef)
				cp := first.ControlPlane.DeepCopy()
				require.NoError(t, unstructured.SetNestedField(cp.Object, tc.cp, "spec", "version"))
				if tc.cpStatus != "" {
					require.NoError(t, unstructured.SetNestedField(cp.Object, tc.cpStatus, "status", "version"))
				}
				in.Current.ControlPlane = cp
				in.Current.MachineDeployments = map[string]*clusterv1.MachineDeployment{}
				for i, md := range first.MachineDeployments {
					if v, ok := tc.mds[md.TopologyName]; ok {
						o := first.MachineDeployments[i].Object.DeepCopy()
						o.Spec.Template.Spec.Version = v
						in.Current.MachineDeployments[md.TopologyName] = o
					}
				}
				in.Current.MachinePools = map[string]*clusterv1.MachinePool{}
				for i, mp := range first.MachinePools {
					if v, ok := tc.mps[mp.TopologyName]; ok {
						o := first.MachinePools[i].Object.DeepCopy()
						o.Spec.Template.Spec.Version = v
						in.Current.MachinePools[mp.TopologyName] = o
					}
				}
			}
			if tc.decided != "" {
				in.Versions.ControlPlane = tc.decided
			}
			s, err := Compute(in)
			require.NoError(t, err)
			cpVersion, _, _ := unstructured.NestedString(s.ControlPlane.Object, "spec", "version")
			if tc.want == "" {
				assert.NotContains(t, s.Cluster.GetAnnotations(), labels.UpgradeStep)
				return
			}
			assert.Equal(t, tc.want, cpVersion, "the step is the desired control plane's version")
			assert.Equal(t, tc.want, s.Cluster.GetAnnotations()[labels.UpgradeStep])
		})
	}
}
