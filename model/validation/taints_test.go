package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// TestTaints_ValidateMachineTaints: Cluster API's taint rules (internal/util/taints,
// ValidateMachineTaints) on a Cluster's topology and a ClusterClass, with the gate on and off.
func TestTaints_ValidateMachineTaints(t *testing.T) {
	taint := func(key string) []clusterv1.MachineTaint {
		return []clusterv1.MachineTaint{{Key: key, Effect: "NoSchedule", Propagation: clusterv1.MachineTaintPropagationAlways}}
	}
	on := Gates{MachineTaintPropagation: true}
	for _, tc := range []struct {
		key   string
		gates Gates
		want  []string
	}{
		{"example.com/dedicated", on, nil},
		{"node.kubernetes.io/out-of-service", on, nil},
		{"example.com/dedicated", Gates{}, []string{"spec.topology.workers.machineDeployments[md-0].taints: Forbidden: taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled"}},
		{"node.cluster.x-k8s.io/uninitialized", on, []string{`spec.topology.workers.machineDeployments[md-0].taints[0].key: Invalid value: "node.cluster.x-k8s.io/uninitialized": taint key is not allowed`}},
		{"node.cluster.x-k8s.io/outdated-revision", on, []string{`spec.topology.workers.machineDeployments[md-0].taints[0].key: Invalid value: "node.cluster.x-k8s.io/outdated-revision": taint key is not allowed`}},
		{"node.kubernetes.io/unreachable", on, []string{`spec.topology.workers.machineDeployments[md-0].taints[0].key: Invalid value: "node.kubernetes.io/unreachable": taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service`}},
		{"node.cloudprovider.kubernetes.io/x", on, []string{`spec.topology.workers.machineDeployments[md-0].taints[0].key: Invalid value: "node.cloudprovider.kubernetes.io/x": taint key must not have the prefix node.cloudprovider.kubernetes.io/`}},
		{"node-role.kubernetes.io/master", on, []string{`spec.topology.workers.machineDeployments[md-0].taints[0].key: Invalid value: "node-role.kubernetes.io/master": taint is deprecated since 1.24 and should not be used anymore`}},
	} {
		c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
			Workers: &clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{{Name: "md-0", Taints: taint(tc.key)}}}}}}
		var got []string
		for _, e := range ClusterTaints(c, tc.gates) {
			got = append(got, e.Error())
		}
		assert.Equal(t, tc.want, got, "%s %+v", tc.key, tc.gates)
	}

	// A key that is no qualified name, on a ClusterClass's control plane.
	class := &clusterv1.ClusterClass{}
	class.Spec.ControlPlane.Taints = taint("bad key!")
	errs := ClassTaints(class, on)
	if assert.Len(t, errs, 1) {
		assert.Contains(t, errs[0].Error(), `spec.controlPlane.taints[0].key: Invalid value: "bad key!": name part must consist of alphanumeric characters`)
	}
	assert.Empty(t, ClassTaints(&clusterv1.ClusterClass{}, Gates{}), "no taints: nothing to refuse with the gate off")
}
