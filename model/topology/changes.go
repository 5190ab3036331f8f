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
	for _, md := range st.MachineDeployments {
		var from string
		c, exists := cur.MachineDeployments[md.TopologyName]
		if exists {
			from = c.Spec.Template.Spec.Version
		}
		out = poolChange(out, "MachineDeployment", md.TopologyName, md.Object.Name, md.Pending || md.PendingCreate, exists, from, md.Object.Spec.Template.Spec.Version)
	}
	for _, mp := range st.MachinePools {
		var from string
		c, exists := cur.MachinePools[mp.TopologyName]
		if exists {
			from = c.Spec.Template.Spec.Version
		}
		out = poolChange(out, "MachinePool", mp.TopologyName, mp.Object.Name, mp.Pending || mp.PendingCreate, exists, from, mp.Object.Spec.Template.Spec.Version)
	}
	return out
}

// poolChange appends the change of one pool written in this pass (none when it waits).
func poolChange(out []Change, kind, pool, name string, waits, exists bool, from, to string) []Change {
	str := func(s string) string { return s }
	switch {
	case waits:
	case !exists:
		out = append(out, Change{kind + "Created", fmt.Sprintf("Created %s %s for pool %s (Kubernetes %s)", kind, name, pool, str(to))})
	case str(from) != str(to):
		out = append(out, Change{kind + "Upgrade", fmt.Sprintf("%s %s (pool %s): version %s -> %s", kind, name, pool, str(from), str(to))})
	}
	return out
}
