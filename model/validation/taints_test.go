package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

func taints(key string, propagation clusterv1.MachineTaintPropagation) []clusterv1.MachineTaint {
	return []clusterv1.MachineTaint{{Key: key, Effect: "NoSchedule", Propagation: propagation}}
}

// TestTaints_ValidateMachineTaints: the key rules of Cluster API v1.14.2's taints.ValidateMachineTaints
// (internal/util/taints), which its ClusterClass webhook (admission validateTaints) and Cluster
// webhook (admission validateTopologyTaints) apply whatever the feature gate says. ClusterClass and
// Cluster check them, so a plan refuses them too; worker paths name the pool, as Cluster API's do.
func TestTaints_ValidateMachineTaints(t *testing.T) {
	always := clusterv1.MachineTaintPropagationAlways
	for _, tc := range []struct {
		key  string
		want string // "" means accepted
	}{
		{"example.com/dedicated", ""},
		{"node.kubernetes.io/out-of-service", ""},
		{"node.cluster.x-k8s.io/uninitialized", `Invalid value: "node.cluster.x-k8s.io/uninitialized": taint key is not allowed`},
		{"node.cluster.x-k8s.io/outdated-revision", `Invalid value: "node.cluster.x-k8s.io/outdated-revision": taint key is not allowed`},
		{"node.kubernetes.io/unreachable", `Invalid value: "node.kubernetes.io/unreachable": taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service`},
		{"node.cloudprovider.kubernetes.io/x", `Invalid value: "node.cloudprovider.kubernetes.io/x": taint key must not have the prefix node.cloudprovider.kubernetes.io/`},
		{"node-role.kubernetes.io/master", `Invalid value: "node-role.kubernetes.io/master": taint is deprecated since 1.24 and should not be used anymore`},
		{"bad key!", `Invalid value: "bad key!": name part must consist of alphanumeric characters`},
	} {
		class, cluster := sample(t)
		class.Spec.ControlPlane.Taints = taints(tc.key, always)
		class.Spec.Workers.MachinePools[0].Taints = taints(tc.key, always)
		cluster.Spec.Topology.Workers.MachineDeployments[1].Taints = taints(tc.key, always)
		classErrs, clusterErrs := ClusterClass(class, nil, nil), Cluster(cluster, nil, class, nil)
		if tc.want == "" {
			assert.Empty(t, classErrs, tc.key)
			assert.Empty(t, clusterErrs, tc.key)
			continue
		}
		assert.ErrorContains(t, classErrs.ToAggregate(), "spec.controlPlane.taints[0].key: "+tc.want)
		assert.ErrorContains(t, classErrs.ToAggregate(), "spec.workers.machinePools[default-pool].taints[0].key: "+tc.want)
		assert.ErrorContains(t, clusterErrs.ToAggregate(), "spec.topology.workers.machineDeployments[md-1].taints[0].key: "+tc.want)
	}
}

// TestTaints_CRDSchema: the CRD schema of Cluster API v1.14.2's MachineTaint (api module,
// core/v1beta1 and v1beta2 MachineTaint and MachineTaintPropagation kubebuilder markers: enums,
// required fields, listType=map by key and effect, at most 64), on every taints list of a class and
// a topology, with the API server's indexed paths.
func TestTaints_CRDSchema(t *testing.T) {
	for _, tc := range []struct {
		name   string
		taints []clusterv1.MachineTaint
		want   string // "" means accepted
	}{
		{"Always", taints("example.com/a", "Always"), ""},
		{"OnInitialization", taints("example.com/a", "OnInitialization"), ""},
		{"other propagation", taints("example.com/a", "Sometimes"), `taints[0].propagation: Unsupported value: "Sometimes": supported values: "Always", "OnInitialization"`},
		{"propagation required", taints("example.com/a", ""), "taints[0].propagation: Required value"},
		{"other effect", []clusterv1.MachineTaint{{Key: "example.com/a", Effect: "Evict", Propagation: "Always"}}, `taints[0].effect: Unsupported value: "Evict"`},
		{"key required", []clusterv1.MachineTaint{{Effect: "NoSchedule", Propagation: "Always"}}, "taints[0].key: Required value"},
		{"value a label value", []clusterv1.MachineTaint{{Key: "example.com/a", Value: "not ok", Effect: "NoSchedule", Propagation: "Always"}}, `taints[0].value: Invalid value: "not ok"`},
		{"unique key and effect", append(taints("example.com/a", "Always"), taints("example.com/a", "OnInitialization")...), "taints[1]: Duplicate value"},
		{"same key, other effect", append(taints("example.com/a", "Always"), clusterv1.MachineTaint{Key: "example.com/a", Effect: "NoExecute", Propagation: "Always"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, cluster := sample(t)
			class.Spec.ControlPlane.Taints = tc.taints
			class.Spec.Workers.MachineDeployments[0].Taints = tc.taints
			class.Spec.Workers.MachinePools[0].Taints = tc.taints
			cluster.Spec.Topology.ControlPlane.Taints = tc.taints
			cluster.Spec.Topology.Workers.MachineDeployments[1].Taints = tc.taints
			cluster.Spec.Topology.Workers.MachinePools[0].Taints = tc.taints
			classErrs, clusterErrs := ClusterClass(class, nil, nil), Cluster(cluster, nil, class, nil)
			if tc.want == "" {
				assert.Empty(t, classErrs)
				assert.Empty(t, clusterErrs)
				return
			}
			for _, p := range []string{"spec.controlPlane.", "spec.workers.machineDeployments[0].", "spec.workers.machinePools[0]."} {
				assert.ErrorContains(t, classErrs.ToAggregate(), p+tc.want)
			}
			for _, p := range []string{"spec.topology.controlPlane.", "spec.topology.workers.machineDeployments[1].", "spec.topology.workers.machinePools[0]."} {
				assert.ErrorContains(t, clusterErrs.ToAggregate(), p+tc.want)
			}
		})
	}
}

// TestTaints_Gate: with MachineTaintPropagation off (Cluster API v1.14's default) ValidateMachineTaints
// refuses any taint; ClassTaints and ClusterTaints carry that rule alone, for the webhooks that know
// the gates, so nothing is reported twice beside ClusterClass and Cluster.
func TestTaints_Gate(t *testing.T) {
	class, cluster := sample(t)
	class.Spec.Workers.MachineDeployments[0].Taints = taints("node.kubernetes.io/unreachable", "Always")
	cluster.Spec.Topology.Workers.MachineDeployments[0].Taints = taints("example.com/a", "Always")
	off, on := Gates{}, Gates{MachineTaintPropagation: true}
	assert.Equal(t, "spec.workers.machineDeployments[default-worker].taints: Forbidden: taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled",
		ClassTaints(class, off).ToAggregate().Error())
	assert.Equal(t, "spec.topology.workers.machineDeployments[md-0].taints: Forbidden: taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled",
		ClusterTaints(cluster, off).ToAggregate().Error())
	assert.Empty(t, ClassTaints(class, on), "the key is ClusterClass's to refuse")
	assert.Empty(t, ClusterTaints(cluster, on))
	assert.Empty(t, ClassTaints(&clusterv1.ClusterClass{}, off), "no taints: nothing to refuse with the gate off")
}
