package validation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// VersionAgainstRunning checks a version change of an existing Cluster against what runs now, as
// Cluster API's Cluster webhook does (validateTopologyVersionUpdate after its version rules, with
// validateTopologyControlPlaneVersion and validateTopologyMachineDeploymentVersions/MachinePoolVersions):
// the version cannot change while the AfterClusterUpgrade hook is pending, the control plane has
// not reached the old version, is still provisioning or still upgrading, or a pool has not reached
// the old version or is still upgrading (running.Pools[i].RollingOut: a Machine or Node on another
// version, as Cluster API's check.IsMachineDeploymentUpgrading/IsMachinePoolUpgrading). The skip
// annotation turns the check off. It complements Cluster, which checks the new version against the
// old one.
func VersionAgainstRunning(c, old *clusterv1.Cluster, running upgrade.Input) field.ErrorList {
	if !c.Spec.Topology.IsDefined() || old == nil || !old.Spec.Topology.IsDefined() || skipVersionCheck(c) {
		return nil
	}
	oldV, newV := old.Spec.Topology.Version, c.Spec.Topology.Version
	if sameVersion(oldV, newV) || upgradeUnderway(oldV, newV, running) {
		return nil
	}
	p := field.NewPath("spec", "topology", "version")
	if upgrade.Pending(c, hooksv1.AfterClusterUpgrade) {
		return field.ErrorList{field.Invalid(p, newV, fmt.Sprintf("version cannot be changed when the %q hook is still blocking", hooksv1.AfterClusterUpgrade))}
	}
	var why []string
	if msg := controlPlaneNotAt(oldV, running.ControlPlane); msg != "" {
		why = append(why, msg)
	}
	why = append(why, poolsNotAt(oldV, running.Pools)...)
	if len(why) == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(p, newV, "version cannot be changed: "+aggregate(why))}
}

// aggregate joins reasons as an apimachinery aggregate error prints them, as Cluster API's message
// does: one alone, several in brackets.
func aggregate(why []string) string {
	if len(why) == 1 {
		return why[0]
	}
	return "[" + strings.Join(why, ", ") + "]"
}

// upgradeUnderway: what runs already heads for the requested version (running.Target is it, as
// when a plan reads a Cluster whose target is set) and the control plane stands at a step of the
// chain through the class's kubernetesVersions toward it, the old version standing for that step.
// Then the version is not being changed now: Cluster API sees the stored Cluster already at the
// target and checks nothing, while the pools may still be on the versions the chain started from.
// The admission webhook reads what runs for the stored Cluster, so there Target is the old version
// and this never applies.
func upgradeUnderway(oldV, newV string, running upgrade.Input) bool {
	cp := running.ControlPlane
	return cp.Exists && sameVersion(running.Target, newV) && sameVersion(cp.SpecVersion, oldV) &&
		chainStep(cp.SpecVersion, newV, running.KubernetesVersions)
}

// controlPlaneNotAt says why the control plane blocks a version change from oldV, or "".
func controlPlaneNotAt(oldV string, cp upgrade.ControlPlane) string {
	if !cp.Exists {
		return ""
	}
	switch {
	case !sameVersion(cp.SpecVersion, oldV):
		return fmt.Sprintf("Cluster.spec.topology.version %s was not propagated to control plane yet (control plane version %s)", bare(oldV), bare(cp.SpecVersion))
	case cp.StatusVersion == "":
		return "control plane is currently provisioning"
	case controlPlaneUpgrading(cp):
		return "control plane is still completing a previous upgrade"
	}
	return ""
}

// controlPlaneUpgrading follows Cluster API's contract IsUpgrading: the spec version is above the
// status version, or differs from it only in build metadata that cannot be ordered.
func controlPlaneUpgrading(cp upgrade.ControlPlane) bool {
	spec, errS := tolerantVersion(cp.SpecVersion)
	status, errT := tolerantVersion(cp.StatusVersion)
	if errS != nil || errT != nil {
		return cp.SpecVersion != cp.StatusVersion
	}
	return compareWithBuild(spec, status) >= 1
}

// poolsNotAt lists the MachineDeployments, then the MachinePools, that block a version change from
// oldV: those existing on another version or still upgrading.
func poolsNotAt(oldV string, pools []upgrade.Pool) []string {
	var mds, mps []string
	for _, p := range pools {
		if !p.Exists || (sameVersion(p.Version, oldV) && !p.RollingOut) {
			continue
		}
		if p.MachinePool {
			mps = append(mps, p.Name)
		} else {
			mds = append(mds, p.Name)
		}
	}
	var why []string
	if len(mds) > 0 {
		why = append(why, fmt.Sprintf("there are still MachineDeployments completing a previous upgrade: [%s]", strings.Join(mds, ", ")))
	}
	if len(mps) > 0 {
		why = append(why, fmt.Sprintf("there are still MachinePools completing a previous upgrade: [%s]", strings.Join(mps, ", ")))
	}
	return why
}

// bare writes a version as Cluster API's messages do: read leniently and without the "v".
func bare(v string) string {
	if sv, err := tolerantVersion(v); err == nil {
		return sv.String()
	}
	return v
}
