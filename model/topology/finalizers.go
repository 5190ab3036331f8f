package topology

import (
	"slices"

	"github.com/topoflow/topoflow/model/desired"
)

// Finalizers Cluster API's MachineDeployment and MachineSet topology controllers put on the pools
// of a topology (MachineDeploymentTopologyFinalizer, MachineSetTopologyFinalizer). Those
// controllers run only with core's ClusterTopology gate, which is off while topoflow runs the
// topology.
const (
	MachineDeploymentTopologyFinalizer = "machinedeployment.topology.cluster.x-k8s.io"
	MachineSetTopologyFinalizer        = "machineset.topology.cluster.x-k8s.io"
)

// Release is a deleting pool object to let go of Cluster API's topology finalizer: the
// finalizers it keeps, written on the resourceVersion it was read at.
type Release struct {
	Kind, Name, ResourceVersion string
	Finalizer                   string
	Kept                        []string
}

// Releases lists the Cluster's MachineDeployments and MachineSets being deleted that carry Cluster
// API's topology finalizer (an old MachineSet after a rollout, a pool removed from the topology,
// on a Cluster taken over from Cluster API): without its controllers they would stay in deletion
// for good. Their templates go as the deletions decide (once no MachineSet uses them), as those
// controllers delete the templates no longer in use.
func Releases(cur desired.Current) []Release {
	var out []Release
	add := func(kind, name, rv, fin string, deleting bool, fins []string) {
		if deleting && slices.Contains(fins, fin) {
			kept := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == fin })
			out = append(out, Release{Kind: kind, Name: name, ResourceVersion: rv, Finalizer: fin, Kept: kept})
		}
	}
	for _, name := range desired.SortedKeys(cur.MachineDeployments) {
		md := cur.MachineDeployments[name]
		add("MachineDeployment", md.Name, md.ResourceVersion, MachineDeploymentTopologyFinalizer, md.DeletionTimestamp != nil, md.Finalizers)
	}
	for _, ms := range cur.MachineSets {
		add("MachineSet", ms.GetName(), ms.GetResourceVersion(), MachineSetTopologyFinalizer, ms.GetDeletionTimestamp() != nil, ms.GetFinalizers())
	}
	return out
}
