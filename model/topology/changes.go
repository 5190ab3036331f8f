package topology

import (
	"fmt"

	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/desired"
)

// Change is something a pass writes that a user wants to see in `kubectl describe cluster`:
// the topology created, a part moving to a new version, a pool created.
type Change struct {
	Reason, Message string
}

// ControlPlaneChanges are the changes of the control plane scope's apply: the infrastructure
// cluster and control plane created, or the control plane told to run a new version.
func ControlPlaneChanges(cur desired.Current, st *desired.State) []Change {
	if st.ControlPlane == nil || st.ControlPlanePending {
		return nil
	}
	to, _, _ := contract.String(st.ControlPlane, contract.ControlPlaneVersion)
	if cur.ControlPlane == nil {
		return []Change{{"TopologyCreated", fmt.Sprintf("Created the control plane %s %s (Kubernetes %s) and the infrastructure cluster",
			st.ControlPlane.GetKind(), st.ControlPlane.GetName(), to)}}
	}
	from, _, _ := contract.String(cur.ControlPlane, contract.ControlPlaneVersion)
	if from != "" && to != "" && from != to {
		return []Change{{"ControlPlaneUpgrade", fmt.Sprintf("Control plane %s %s: version %s -> %s", cur.ControlPlane.GetKind(), cur.ControlPlane.GetName(), from, to)}}
	}
	return nil
}

// WorkerChanges are the changes of the workers scope's apply: pools created, or told to run a
// new version.
func WorkerChanges(cur desired.Current, st *desired.State) []Change {
	var out []Change
	str := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, md := range st.MachineDeployments {
		if md.Pending || md.PendingCreate {
			continue
		}
		to := str(md.Object.Spec.Template.Spec.Version)
		c, ok := cur.MachineDeployments[md.TopologyName]
		switch {
		case !ok:
			out = append(out, Change{"MachineDeploymentCreated", fmt.Sprintf("Created MachineDeployment %s for pool %s (Kubernetes %s)", md.Object.Name, md.TopologyName, to)})
		case str(c.Spec.Template.Spec.Version) != to:
			out = append(out, Change{"MachineDeploymentUpgrade", fmt.Sprintf("MachineDeployment %s (pool %s): version %s -> %s", c.Name, md.TopologyName, str(c.Spec.Template.Spec.Version), to)})
		}
	}
	for _, mp := range st.MachinePools {
		if mp.Pending || mp.PendingCreate {
			continue
		}
		to := str(mp.Object.Spec.Template.Spec.Version)
		c, ok := cur.MachinePools[mp.TopologyName]
		switch {
		case !ok:
			out = append(out, Change{"MachinePoolCreated", fmt.Sprintf("Created MachinePool %s for pool %s (Kubernetes %s)", mp.Object.Name, mp.TopologyName, to)})
		case str(c.Spec.Template.Spec.Version) != to:
			out = append(out, Change{"MachinePoolUpgrade", fmt.Sprintf("MachinePool %s (pool %s): version %s -> %s", c.Name, mp.TopologyName, str(c.Spec.Template.Spec.Version), to)})
		}
	}
	return out
}
