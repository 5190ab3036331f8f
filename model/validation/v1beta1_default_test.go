package validation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/model/api/v1beta1"
)

// TestDefaultClusterV1Beta1 follows Cluster API's webhooks.Cluster.Default, including what its decode and
// re-encode does to empty omitempty lists.
func TestDefaultClusterV1Beta1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(c *v1beta1.Cluster)
		check func(t *testing.T, c *v1beta1.Cluster)
	}{
		{"version without v", func(c *v1beta1.Cluster) { c.Spec.Topology.Version = "1.31.2" },
			func(t *testing.T, c *v1beta1.Cluster) { assert.Equal(t, "v1.31.2", c.Spec.Topology.Version) }},
		{"version with v unchanged", func(c *v1beta1.Cluster) {},
			func(t *testing.T, c *v1beta1.Cluster) { assert.Equal(t, "v1.31.2", c.Spec.Topology.Version) }},
		// Cluster API's webhook (core/webhooks/admission Cluster.Default) would make it "v"; a
		// version that is not there stays empty, and validation says it is required.
		{"no version: none made up", func(c *v1beta1.Cluster) { c.Spec.Topology.Version = "" },
			func(t *testing.T, c *v1beta1.Cluster) { assert.Equal(t, "", c.Spec.Topology.Version) }},
		{"empty readinessGates dropped", func(c *v1beta1.Cluster) {
			c.Spec.Topology.ControlPlane.ReadinessGates = []v1beta1.MachineReadinessGate{}
			c.Spec.Topology.Workers.MachineDeployments[0].ReadinessGates = []v1beta1.MachineReadinessGate{}
		}, func(t *testing.T, c *v1beta1.Cluster) {
			assert.Nil(t, c.Spec.Topology.ControlPlane.ReadinessGates)
			assert.Nil(t, c.Spec.Topology.Workers.MachineDeployments[0].ReadinessGates)
		}},
		{"empty failureDomains dropped", func(c *v1beta1.Cluster) {
			c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{}
		}, func(t *testing.T, c *v1beta1.Cluster) {
			assert.Nil(t, c.Spec.Topology.Workers.MachinePools[0].FailureDomains)
		}},
		{"non-empty lists kept", func(c *v1beta1.Cluster) {
			c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{"a"}
		}, func(t *testing.T, c *v1beta1.Cluster) {
			assert.Equal(t, []string{"a"}, c.Spec.Topology.Workers.MachinePools[0].FailureDomains)
		}},
		{"reference and remediation namespaces", func(c *v1beta1.Cluster) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "KubeadmControlPlane", Name: "cp"}
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &v1beta1.MachineHealthCheckTopology{
				MachineHealthCheckClass: v1beta1.MachineHealthCheckClass{RemediationTemplate: &corev1.ObjectReference{Kind: "R", Name: "r"}},
			}
		}, func(t *testing.T, c *v1beta1.Cluster) {
			assert.Equal(t, "ns", c.Spec.ControlPlaneRef.Namespace)
			assert.Equal(t, "ns", c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck.RemediationTemplate.Namespace)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &v1beta1.Cluster{}
			c.Name, c.Namespace = "c", "ns"
			c.Spec.Topology = &v1beta1.Topology{Class: "k", Version: "v1.31.2", Workers: &v1beta1.WorkersTopology{
				MachineDeployments: []v1beta1.MachineDeploymentTopology{{Name: "md", Class: "default-worker"}},
				MachinePools:       []v1beta1.MachinePoolTopology{{Name: "mp", Class: "default-pool"}},
			}}
			tc.edit(c)
			require.NoError(t, DefaultClusterV1Beta1(c))
			tc.check(t, c)
		})
	}
}

// TestDefaultClusterClassV1Beta1 follows webhooks.ClusterClass.Default: references without a namespace
// get the class's, others are kept.
func TestDefaultClusterClassV1Beta1(t *testing.T) {
	class, _ := sampleV1Beta1(t)
	class.Namespace = "team-a"
	class.Spec.ControlPlane.Ref.Namespace = ""
	class.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Namespace = ""
	class.Spec.Workers.MachinePools[0].Template.Bootstrap.Ref.Namespace = "elsewhere"
	DefaultClusterClassV1Beta1(class)
	assert.Equal(t, "team-a", class.Spec.ControlPlane.Ref.Namespace)
	assert.Equal(t, "team-a", class.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Namespace)
	assert.Equal(t, "elsewhere", class.Spec.Workers.MachinePools[0].Template.Bootstrap.Ref.Namespace)
}

// TestDefaultVariablesV1Beta1 follows Cluster API's Cluster webhook defaulting (DefaultAndValidateVariables):
// variables the Cluster leaves out get the class's defaults in spec.topology.variables, and doing
// it again changes nothing.
func TestDefaultVariablesV1Beta1(t *testing.T) {
	class, cluster := sampleV1Beta1(t)
	require.Empty(t, DefaultVariablesV1Beta1(cluster, class))
	got := map[string]string{}
	for _, v := range cluster.Spec.Topology.Variables {
		got[v.Name] = string(v.Value.Raw)
	}
	assert.Equal(t, `"sim-west-2"`, got["region"], "set by the Cluster, kept")
	assert.Equal(t, `"registry.k8s.io"`, got["imageRepository"], "the class's default written in")
	assert.Equal(t, `"sim.medium"`, got["workerInstanceType"])

	before := cluster.DeepCopy()
	assert.Empty(t, DefaultVariablesV1Beta1(cluster, class), "defaulting twice changes nothing")
	assert.Equal(t, before, cluster)

	// Defaulting computes in v1beta2, which has no definitionFrom: what the Cluster sets is kept
	// for the validation to refuse.
	cluster.Spec.Topology.Variables[0].DefinitionFrom = "inline"
	cluster.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].DefinitionFrom = "inline"
	before = cluster.DeepCopy()
	assert.Empty(t, DefaultVariablesV1Beta1(cluster, class))
	assert.Equal(t, before, cluster)

}

// TestDefaultVariablesV1Beta1WritesValuesOnly: the defaulting computes on the hub, whose
// conversion normalises (durations to whole seconds, no definitionFrom), but only the values come
// back to the v1beta1 Cluster: the admission webhook patches the difference.
func TestDefaultVariablesV1Beta1WritesValuesOnly(t *testing.T) {
	class, c := sampleV1Beta1(t)
	md := &c.Spec.Topology.Workers.MachineDeployments[1]
	md.NodeDrainTimeout = &metav1.Duration{Duration: 1900 * time.Millisecond}
	md.Variables.Overrides[0].DefinitionFrom = "inline"
	c.Spec.Topology.Variables[0].DefinitionFrom = "inline"
	want := c.DeepCopy()
	require.Empty(t, DefaultVariablesV1Beta1(c, class))
	assert.Greater(t, len(c.Spec.Topology.Variables), len(want.Spec.Topology.Variables), "the class's defaults written in")
	assert.Equal(t, want.Spec.Topology.Variables, c.Spec.Topology.Variables[:len(want.Spec.Topology.Variables)], "the values set kept as they were")
	want.Spec.Topology.Variables = c.Spec.Topology.Variables
	assert.Equal(t, want, c, "nothing but the variables changed")
}
