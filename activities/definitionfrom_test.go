package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// TestDefinitionFromIsRefused: the variables are validated in v1beta2, which has no
// definitionFrom; a v1beta1 Cluster that sets it is still refused, at the call site (it was
// desired.Compute's check before the model computed on the hub).
func TestDefinitionFromIsRefused(t *testing.T) {
	c := &clusterv1.Cluster{Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{
		Variables: []clusterv1.ClusterVariable{{Name: "region"}},
		Workers: &clusterv1.WorkersTopology{MachineDeployments: []clusterv1.MachineDeploymentTopology{
			{Name: "md-0"},
			{Name: "md-1", Variables: &clusterv1.MachineDeploymentVariables{Overrides: []clusterv1.ClusterVariable{{Name: "workerInstanceType", DefinitionFrom: "inline"}}}},
		}},
	}}}
	errs := definitionFromErrors(c)
	if assert.Len(t, errs, 1) {
		assert.Contains(t, errs.ToAggregate().Error(), "spec.topology.workers.machineDeployments[1].variables.overrides[workerInstanceType].definitionFrom")
	}
	c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].DefinitionFrom = ""
	assert.Empty(t, definitionFromErrors(c))
	assert.Empty(t, definitionFromErrors(&clusterv1.Cluster{}))
}
