package validation

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// Gates are the Cluster API feature gates whose rules the admission webhooks follow (Cluster API's
// --feature-gates; topoflow's worker takes the same flag). Off by default, as in Cluster API v1.14.
type Gates struct {
	// MachineTaintPropagation allows taints in ClusterClasses and topologies.
	MachineTaintPropagation bool
}

// Taint keys Cluster API keeps for itself (clusterv1.NodeUninitializedTaint and
// NodeOutdatedRevisionTaint).
const (
	taintUninitialized    = "node.cluster.x-k8s.io/uninitialized"
	taintOutdatedRevision = "node.cluster.x-k8s.io/outdated-revision"
)

// machineTaints checks taints as Cluster API's ValidateMachineTaints does (internal/util/taints):
// reserved keys refused, keys must be label keys; with gate off, any taint is refused.
func machineTaints(taints []clusterv1.MachineTaint, gateOn bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !gateOn && len(taints) > 0 {
		errs = append(errs, field.Forbidden(p, "taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled"))
	}
	for i, t := range taints {
		kp := p.Index(i).Child("key")
		switch {
		case t.Key == taintUninitialized, t.Key == taintOutdatedRevision:
			errs = append(errs, field.Invalid(kp, t.Key, "taint key is not allowed"))
		case strings.HasPrefix(t.Key, "node.kubernetes.io/") && t.Key != "node.kubernetes.io/out-of-service":
			errs = append(errs, field.Invalid(kp, t.Key, "taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service"))
		case strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/"):
			errs = append(errs, field.Invalid(kp, t.Key, "taint key must not have the prefix node.cloudprovider.kubernetes.io/"))
		case t.Key == "node-role.kubernetes.io/master":
			errs = append(errs, field.Invalid(kp, t.Key, "taint is deprecated since 1.24 and should not be used anymore"))
		}
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(kp, t.Key, msg))
		}
	}
	return errs
}

// ClusterTaints checks the taints of a Cluster's topology (Cluster API's validateTopologyTaints).
func ClusterTaints(c *clusterv1.Cluster, gates Gates) field.ErrorList {
	topo := c.Spec.Topology
	if topo == nil {
		return nil
	}
	p := field.NewPath("spec", "topology")
	errs := machineTaints(topo.ControlPlane.Taints, gates.MachineTaintPropagation, p.Child("controlPlane", "taints"))
	if w := topo.Workers; w != nil {
		for _, md := range w.MachineDeployments {
			errs = append(errs, machineTaints(md.Taints, gates.MachineTaintPropagation, p.Child("workers", "machineDeployments").Key(md.Name).Child("taints"))...)
		}
		for _, mp := range w.MachinePools {
			errs = append(errs, machineTaints(mp.Taints, gates.MachineTaintPropagation, p.Child("workers", "machinePools").Key(mp.Name).Child("taints"))...)
		}
	}
	return errs
}

// ClassTaints checks the taints of a ClusterClass (Cluster API's validateTaints).
func ClassTaints(class *clusterv1.ClusterClass, gates Gates) field.ErrorList {
	errs := machineTaints(class.Spec.ControlPlane.Taints, gates.MachineTaintPropagation, field.NewPath("spec", "controlPlane", "taints"))
	for _, md := range class.Spec.Workers.MachineDeployments {
		errs = append(errs, machineTaints(md.Taints, gates.MachineTaintPropagation, field.NewPath("spec", "workers", "machineDeployments").Key(md.Class).Child("taints"))...)
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		errs = append(errs, machineTaints(mp.Taints, gates.MachineTaintPropagation, field.NewPath("spec", "workers", "machinePools").Key(mp.Class).Child("taints"))...)
	}
	return errs
}
