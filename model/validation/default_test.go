package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestDefaultCluster follows Cluster API v1.14.2's Cluster webhook on a v1beta2 Cluster (package
// admission, Cluster.Default: the version's "v"), including what its answer, a patch from the
// decoded object to the encoded one, does to empty omitempty lists and maps.
func TestDefaultCluster(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *clusterv1.Cluster)
		check func(t *testing.T, c *clusterv1.Cluster)
	}{
		{"version without v", func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "1.31.2" },
			func(t *testing.T, c *clusterv1.Cluster) { assert.Equal(t, "v1.31.2", c.Spec.Topology.Version) }},
		{"version with v unchanged", func(c *clusterv1.Cluster) {},
			func(t *testing.T, c *clusterv1.Cluster) { assert.Equal(t, "v1.31.2", c.Spec.Topology.Version) }},
		// Cluster API's webhook would make it "v"; a version that is not there stays empty, and
		// validation says it is required.
		{"no version: none made up", func(c *clusterv1.Cluster) { c.Spec.Topology.Version = "" },
			func(t *testing.T, c *clusterv1.Cluster) { assert.Equal(t, "", c.Spec.Topology.Version) }},
		{"empty readinessGates dropped", func(c *clusterv1.Cluster) {
			c.Spec.Topology.ControlPlane.ReadinessGates = []clusterv1.MachineReadinessGate{}
			c.Spec.Topology.Workers.MachineDeployments[0].ReadinessGates = []clusterv1.MachineReadinessGate{}
		}, func(t *testing.T, c *clusterv1.Cluster) {
			assert.Nil(t, c.Spec.Topology.ControlPlane.ReadinessGates)
			assert.Nil(t, c.Spec.Topology.Workers.MachineDeployments[0].ReadinessGates)
		}},
		{"empty failureDomains dropped", func(c *clusterv1.Cluster) {
			c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{}
		}, func(t *testing.T, c *clusterv1.Cluster) {
			assert.Nil(t, c.Spec.Topology.Workers.MachinePools[0].FailureDomains)
		}},
		{"empty maps dropped", func(c *clusterv1.Cluster) {
			c.Spec.Topology.ControlPlane.Metadata.Labels = map[string]string{}
		}, func(t *testing.T, c *clusterv1.Cluster) {
			assert.Nil(t, c.Spec.Topology.ControlPlane.Metadata.Labels)
		}},
		{"non-empty lists kept", func(c *clusterv1.Cluster) {
			c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{"a"}
		}, func(t *testing.T, c *clusterv1.Cluster) {
			assert.Equal(t, []string{"a"}, c.Spec.Topology.Workers.MachinePools[0].FailureDomains)
		}},
		// The v1beta1 reference and remediation namespaces have no v1beta2 field: references are
		// left as they are.
		{"references untouched", func(c *clusterv1.Cluster) {
			c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "cp"}
			c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck.Remediation.TemplateRef = clusterv1.MachineHealthCheckRemediationTemplateReference{
				APIVersion: "r.io/v1", Kind: "R", Name: "r"}
		}, func(t *testing.T, c *clusterv1.Cluster) {
			assert.Equal(t, clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane", Name: "cp"}, c.Spec.ControlPlaneRef)
			assert.Equal(t, "r", c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck.Remediation.TemplateRef.Name)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clusterv1.Cluster{}
			c.Name, c.Namespace = "c", "ns"
			c.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "k"}, Version: "v1.31.2", Workers: clusterv1.WorkersTopology{
				MachineDeployments: []clusterv1.MachineDeploymentTopology{{Name: "md", Class: "default-worker"}},
				MachinePools:       []clusterv1.MachinePoolTopology{{Name: "mp", Class: "default-pool"}},
			}}
			tc.edit(c)
			require.NoError(t, DefaultCluster(c))
			tc.check(t, c)
		})
	}

	unmanaged := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{InfrastructureRef: clusterv1.ContractVersionedObjectReference{Kind: "SimCluster", Name: "x"}}}
	before := unmanaged.DeepCopy()
	require.NoError(t, DefaultCluster(unmanaged))
	assert.Equal(t, before, unmanaged, "a Cluster without a topology has nothing to default")
}

// TestDefaultClusterClass: Cluster API v1.14.2 registers no defaulting webhook for a ClusterClass
// (package admission, ClusterClass.SetupWebhookWithManager: a validator only), so a v1beta2 class
// is left as it is.
func TestDefaultClusterClass(t *testing.T) {
	class, _ := sample(t)
	before := class.DeepCopy()
	DefaultClusterClass(class)
	assert.Equal(t, before, class)
}

// TestDefaultVariables follows Cluster API v1.14.2's Cluster webhook defaulting (package
// admission, DefaultAndValidateVariables and DefaultVariables): variables the Cluster leaves out
// get the class's defaults in spec.topology.variables, doing it again changes nothing, and an
// error names the pool by its name and leaves the Cluster as it was.
func TestDefaultVariables(t *testing.T) {
	class, cluster := sample(t)
	require.Empty(t, DefaultVariables(cluster, class))
	got := map[string]string{}
	for _, v := range cluster.Spec.Topology.Variables {
		got[v.Name] = string(v.Value.Raw)
	}
	assert.Equal(t, `"sim-west-2"`, got["region"], "set by the Cluster, kept")
	assert.Equal(t, `"registry.k8s.io"`, got["imageRepository"], "the class's default written in")
	assert.Equal(t, `"sim.medium"`, got["workerInstanceType"])

	before := cluster.DeepCopy()
	assert.Empty(t, DefaultVariables(cluster, class), "defaulting twice changes nothing")
	assert.Equal(t, before, cluster)

	cluster.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`{`)
	before = cluster.DeepCopy()
	assert.Equal(t, `spec.topology.workers.machineDeployments[md-1].variables.overrides[workerInstanceType].value: Invalid value: "{": not valid JSON`,
		DefaultVariables(cluster, class).ToAggregate().Error())
	assert.Equal(t, before, cluster)

	assert.Empty(t, DefaultVariables(cluster, nil), "a class not known yet: nothing to default")
	_, bare := sample(t)
	bare.Spec.Topology = clusterv1.Topology{}
	assert.Empty(t, DefaultVariables(bare, class), "no topology")
}
