package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/upgrade"
)

// VersionAgainstRunning checks a version change of an existing Cluster against what runs now, as
// Cluster API's Cluster webhook does (validateTopologyVersion with
// validateTopologyControlPlaneVersion and validateTopologyMachineDeploymentVersions/MachinePoolVersions):
// while the control plane has not reached the old version, is still provisioning or still
// upgrading, or any pool has not reached it or still rolls out, spec.topology.version cannot
// change. The skip annotation turns the check off. It complements Cluster, which checks the new
// version against the old one.
func VersionAgainstRunning(c, old *clusterv1.Cluster, running upgrade.Input) field.ErrorList {
	if c.Spec.Topology == nil || old == nil || old.Spec.Topology == nil || c.Annotations[SkipVersionCheckAnnotation] != "" {
		return nil
	}
	oldV, newV := old.Spec.Topology.Version, c.Spec.Topology.Version
	if oldV == newV {
		return nil
	}
	var why []string
	if cp := running.ControlPlane; cp.Exists {
		switch {
		case cp.SpecVersion != oldV:
			why = append(why, fmt.Sprintf("Cluster.spec.topology.version %s was not propagated to control plane yet (control plane version %s)", oldV, cp.SpecVersion))
		case cp.StatusVersion == "":
			why = append(why, "control plane is currently provisioning")
		case cp.StatusVersion != cp.SpecVersion:
			why = append(why, "control plane is still completing a previous upgrade")
		}
	}
	var mds, mps []string
	for _, p := range running.Pools {
		if !p.Exists || (p.Version == oldV && !p.RollingOut) {
			continue
		}
		if p.MachinePool {
			mps = append(mps, p.Name)
		} else {
			mds = append(mds, p.Name)
		}
	}
	if len(mds) > 0 {
		why = append(why, fmt.Sprintf("there are still MachineDeployments completing a previous upgrade: [%s]", strings.Join(mds, ", ")))
	}
	if len(mps) > 0 {
		why = append(why, fmt.Sprintf("there are still MachinePools completing a previous upgrade: [%s]", strings.Join(mps, ", ")))
	}
	if len(why) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "topology", "version"), newV, "version cannot be changed: "+strings.Join(why, "; "))}
}
