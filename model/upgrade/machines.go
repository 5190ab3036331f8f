package upgrade

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/labels"
)

// MachineVersionsOf reads the versions a Cluster's Machines run into MachineVersions, by the
// MachineDeployment each belongs to (its deployment-name label): the Machine's spec.version and its
// Node's kubelet version, what Cluster API's check.IsMachineDeploymentUpgrading compares with the
// MachineDeployment's. Machines of no MachineDeployment are left out. The result is never nil:
// Machines were read, even if there are none.
func MachineVersionsOf(machines []unstructured.Unstructured) MachineVersions {
	out := MachineVersions{}
	for _, m := range machines {
		md := m.GetLabels()[labels.MachineDeploymentObject]
		if md == "" {
			continue
		}
		spec, _, _ := unstructured.NestedString(m.Object, "spec", "version")
		kubelet, _, _ := unstructured.NestedString(m.Object, "status", "nodeInfo", "kubeletVersion")
		out[md] = append(out[md], spec, kubelet)
	}
	return out
}
