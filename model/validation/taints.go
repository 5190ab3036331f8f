package validation

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
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

// maxTaints is the CRD's bound on every taints list.
const maxTaints = 64

var (
	taintEffects      = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
	taintPropagations = []string{string(clusterv1.MachineTaintPropagationAlways), string(clusterv1.MachineTaintPropagationOnInitialization)}
)

// machineTaints checks a taints list whatever the feature gate says: the CRD's schema (listPath,
// indexed as the API server reports it) and the webhook's key rules (keyedPath, where the webhook
// names a pool by its name). Both hold in Cluster API whether or not MachineTaintPropagation is on,
// so a plan refuses such taints too.
func machineTaints(taints []clusterv1.MachineTaint, listPath, keyedPath *field.Path) field.ErrorList {
	errs := taintSchema(taints, listPath)
	for i, t := range taints {
		if t.Key != "" { // an empty key is the schema's error; the webhook never sees it
			errs = append(errs, taintKey(t.Key, keyedPath.Index(i).Child("key"))...)
		}
	}
	return errs
}

// taintSchema follows the CRD schema of Cluster API's MachineTaint lists (kubebuilder markers in
// the api module): at most 64 taints, unique by key and effect (listType=map), key required, value
// a label value, effect and propagation required and one of their enums.
func taintSchema(taints []clusterv1.MachineTaint, p *field.Path) field.ErrorList {
	if len(taints) > maxTaints {
		return field.ErrorList{field.TooMany(p, len(taints), maxTaints)}
	}
	var errs field.ErrorList
	seen := map[[2]string]bool{}
	for i, t := range taints {
		tp := p.Index(i)
		if t.Key == "" {
			errs = append(errs, field.Required(tp.Child("key"), ""))
		}
		if t.Value != "" {
			for _, msg := range content.IsLabelValue(t.Value) {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, msg))
			}
		}
		errs = append(errs, enum(string(t.Effect), taintEffects, tp.Child("effect"))...)
		errs = append(errs, enum(string(t.Propagation), taintPropagations, tp.Child("propagation"))...)
		id := [2]string{t.Key, string(t.Effect)}
		if seen[id] {
			errs = append(errs, field.Duplicate(tp, map[string]any{"key": t.Key, "effect": string(t.Effect)}))
		}
		seen[id] = true
	}
	return errs
}

// enum is a required field restricted to values, as the API server reports a CRD enum.
func enum(v string, values []string, p *field.Path) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(p, "")}
	case !slices.Contains(values, v):
		return field.ErrorList{field.NotSupported(p, v, values)}
	}
	return nil
}

// taintKey checks a taint key as Cluster API's webhooks do (internal/util/taints
// ValidateMachineTaints): keys Cluster API, the node lifecycle controller, cloud providers or the
// old kubeadm role taint own are refused (the first that matches), and the key must be a label key.
func taintKey(key string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case key == taintUninitialized, key == taintOutdatedRevision:
		errs = append(errs, field.Invalid(p, key, "taint key is not allowed"))
	case strings.HasPrefix(key, "node.kubernetes.io/") && key != "node.kubernetes.io/out-of-service":
		errs = append(errs, field.Invalid(p, key, "taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service"))
	case strings.HasPrefix(key, "node.cloudprovider.kubernetes.io/"):
		errs = append(errs, field.Invalid(p, key, "taint key must not have the prefix node.cloudprovider.kubernetes.io/"))
	case key == "node-role.kubernetes.io/master":
		errs = append(errs, field.Invalid(p, key, "taint is deprecated since 1.24 and should not be used anymore"))
	}
	for _, msg := range content.IsLabelKey(key) {
		errs = append(errs, field.Invalid(p, key, msg))
	}
	return errs
}

// taintGate is the feature gate's rule: with MachineTaintPropagation off no taint may be set.
func taintGate(taints []clusterv1.MachineTaint, gateOn bool, p *field.Path) field.ErrorList {
	if gateOn || len(taints) == 0 {
		return nil
	}
	return field.ErrorList{field.Forbidden(p, "taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled")}
}

// topologyTaints checks the taints of a Cluster's topology (Cluster API's validateTopologyTaints
// and the CRD schema); Cluster calls it.
func topologyTaints(topo *clusterv1.Topology, tp *field.Path) field.ErrorList {
	errs := machineTaints(topo.ControlPlane.Taints, tp.Child("controlPlane", "taints"), tp.Child("controlPlane", "taints"))
	for i, md := range topo.Workers.MachineDeployments {
		mdp := tp.Child("workers", "machineDeployments")
		errs = append(errs, machineTaints(md.Taints, mdp.Index(i).Child("taints"), mdp.Key(md.Name).Child("taints"))...)
	}
	for i, mp := range topo.Workers.MachinePools {
		mpp := tp.Child("workers", "machinePools")
		errs = append(errs, machineTaints(mp.Taints, mpp.Index(i).Child("taints"), mpp.Key(mp.Name).Child("taints"))...)
	}
	return errs
}

// classTaints checks the taints of a ClusterClass (Cluster API's ClusterClass validateTaints and
// the CRD schema); ClusterClass calls it.
func classTaints(class *clusterv1.ClusterClass) field.ErrorList {
	cp := field.NewPath("spec", "controlPlane", "taints")
	errs := machineTaints(class.Spec.ControlPlane.Taints, cp, cp)
	mdp := field.NewPath("spec", "workers", "machineDeployments")
	for i, md := range class.Spec.Workers.MachineDeployments {
		errs = append(errs, machineTaints(md.Taints, mdp.Index(i).Child("taints"), mdp.Key(md.Class).Child("taints"))...)
	}
	mpp := field.NewPath("spec", "workers", "machinePools")
	for i, mp := range class.Spec.Workers.MachinePools {
		errs = append(errs, machineTaints(mp.Taints, mpp.Index(i).Child("taints"), mpp.Key(mp.Class).Child("taints"))...)
	}
	return errs
}

// ClusterTaints is the feature gate's rule for a Cluster's topology taints, for the admission
// webhook, which knows the gates. The rules that hold whatever the gate are Cluster's.
func ClusterTaints(c *clusterv1.Cluster, gates Gates) field.ErrorList {
	topo := &c.Spec.Topology
	if !topo.IsDefined() {
		return nil
	}
	on := gates.MachineTaintPropagation
	p := field.NewPath("spec", "topology")
	errs := taintGate(topo.ControlPlane.Taints, on, p.Child("controlPlane", "taints"))
	for _, md := range topo.Workers.MachineDeployments {
		errs = append(errs, taintGate(md.Taints, on, p.Child("workers", "machineDeployments").Key(md.Name).Child("taints"))...)
	}
	for _, mp := range topo.Workers.MachinePools {
		errs = append(errs, taintGate(mp.Taints, on, p.Child("workers", "machinePools").Key(mp.Name).Child("taints"))...)
	}
	return errs
}

// ClassTaints is the feature gate's rule for a ClusterClass's taints, for the admission webhook,
// which knows the gates. The rules that hold whatever the gate are ClusterClass's.
func ClassTaints(class *clusterv1.ClusterClass, gates Gates) field.ErrorList {
	on := gates.MachineTaintPropagation
	errs := taintGate(class.Spec.ControlPlane.Taints, on, field.NewPath("spec", "controlPlane", "taints"))
	for _, md := range class.Spec.Workers.MachineDeployments {
		errs = append(errs, taintGate(md.Taints, on, field.NewPath("spec", "workers", "machineDeployments").Key(md.Class).Child("taints"))...)
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		errs = append(errs, taintGate(mp.Taints, on, field.NewPath("spec", "workers", "machinePools").Key(mp.Class).Child("taints"))...)
	}
	return errs
}
