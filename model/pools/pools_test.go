package pools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// The view reads a class's MachineDeploymentClasses, then its MachinePoolClasses, and a
// topology's pools in the same order; a pool finds its class by kind and name.
func TestClassesAndTopologies(t *testing.T) {
	ref := func(kind string) clusterv1.ClusterClassTemplateReference {
		return clusterv1.ClusterClassTemplateReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: kind, Name: kind + "-t"}
	}
	class := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Workers: clusterv1.WorkersClass{
		MachineDeployments: []clusterv1.MachineDeploymentClass{{Class: "w", Metadata: clusterv1.ObjectMeta{Labels: map[string]string{"a": "b"}},
			Bootstrap: clusterv1.ClassTemplate{TemplateRef: ref("Bootstrap")}, Infrastructure: clusterv1.ClassTemplate{TemplateRef: ref("Machine")},
			Naming: clusterv1.NamingSpec{Template: "{{ .random }}"}, HealthCheck: clusterv1.MachineDeploymentClassHealthCheck{
				Checks: clusterv1.HealthCheckChecks{NodeStartupTimeoutSeconds: new(int32(600))}}}},
		MachinePools: []clusterv1.MachinePoolClass{{Class: "w", Infrastructure: clusterv1.ClassTemplate{TemplateRef: ref("Pool")}}},
	}}}
	classes := Classes(class)
	require.Len(t, classes, 2)
	assert.Equal(t, Class{Name: "w", Metadata: class.Spec.Workers.MachineDeployments[0].Metadata, Bootstrap: ref("Bootstrap"), Infrastructure: ref("Machine"),
		NamingTemplate: "{{ .random }}", HealthCheck: &class.Spec.Workers.MachineDeployments[0].HealthCheck}, classes[0])
	assert.Equal(t, Class{MachinePool: true, Name: "w", Infrastructure: ref("Pool")}, classes[1], "a MachinePool has no health check")

	overrides := []clusterv1.ClusterVariable{{Name: "v", Value: apiextensionsv1.JSON{Raw: []byte(`1`)}}}
	topo := &clusterv1.Topology{Workers: clusterv1.WorkersTopology{
		MachineDeployments: []clusterv1.MachineDeploymentTopology{{Name: "md-0", Class: "w", Replicas: new(int32(2)), Variables: clusterv1.TopologyVariables{Overrides: overrides}}},
		MachinePools:       []clusterv1.MachinePoolTopology{{Name: "mp-0", Class: "w"}, {Name: "mp-1", Class: "gpu"}},
	}}
	topologies := Topologies(topo)
	require.Len(t, topologies, 3)
	assert.Equal(t, Topology{Name: "md-0", Class: "w", Replicas: new(int32(2)), Overrides: overrides}, topologies[0])
	assert.Equal(t, Topology{MachinePool: true, Index: 1, Name: "mp-1", Class: "gpu"}, topologies[2])
	assert.Equal(t, &classes[0], topologies[0].ClassIn(class))
	assert.Equal(t, &classes[1], topologies[1].ClassIn(class))
	assert.Nil(t, topologies[2].ClassIn(class))
	assert.Nil(t, Topologies(nil))
	assert.Empty(t, Topologies(&clusterv1.Topology{}))
}
