package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// DefaultCluster applies the defaults Cluster API's Cluster webhook applies (webhooks.Cluster.Default),
// so topoflow computes from the same Cluster whether or not a webhook ran:
//   - a topology version without the "v" prefix gets one;
//   - the references without a namespace get the Cluster's;
//   - a topology health check's remediation template without a namespace gets the Cluster's;
//   - empty lists and maps in the topology are dropped: the webhook decodes and re-encodes the
//     Cluster, and an empty omitempty field does not survive that, so the class's value applies
//     (for example readinessGates: [] or failureDomains: []).
func DefaultCluster(c *clusterv1.Cluster) error {
	if r := c.Spec.InfrastructureRef; r != nil && r.Namespace == "" {
		r.Namespace = c.Namespace
	}
	if r := c.Spec.ControlPlaneRef; r != nil && r.Namespace == "" {
		r.Namespace = c.Namespace
	}
	if c.Spec.Topology == nil {
		return nil
	}
	js, err := json.Marshal(c.Spec.Topology)
	if err != nil {
		return fmt.Errorf("Cluster %s/%s: spec.topology: %w", c.Namespace, c.Name, err)
	}
	topo := &clusterv1.Topology{}
	if err := json.Unmarshal(js, topo); err != nil {
		return fmt.Errorf("Cluster %s/%s: spec.topology: %w", c.Namespace, c.Name, err)
	}
	c.Spec.Topology = topo
	if !strings.HasPrefix(topo.Version, "v") {
		topo.Version = "v" + topo.Version
	}
	remediationNamespace := func(m *clusterv1.MachineHealthCheckTopology) {
		if m != nil && m.RemediationTemplate != nil && m.RemediationTemplate.Namespace == "" {
			m.RemediationTemplate.Namespace = c.Namespace
		}
	}
	remediationNamespace(topo.ControlPlane.MachineHealthCheck)
	if topo.Workers != nil {
		for i := range topo.Workers.MachineDeployments {
			remediationNamespace(topo.Workers.MachineDeployments[i].MachineHealthCheck)
		}
	}
	return nil
}
