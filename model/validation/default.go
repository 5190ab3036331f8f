package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/variables"
)

// DefaultCluster applies the defaults Cluster API's Cluster webhook applies to a v1beta2 Cluster
// (webhooks admission Cluster.Default, before its variables), so topoflow computes from the same
// Cluster whether or not a webhook ran:
//   - a topology version without the "v" prefix gets one; an empty version stays empty (Cluster
//     API's webhook makes it "v", which then reads as "Version string empty": a version that is
//     not there is reported as required instead);
//   - empty lists and maps in the topology are dropped: the webhook answers with a patch from the
//     object it decoded to the one it encodes, and an empty omitempty field does not survive
//     that, so the class's value applies (for example readinessGates: [] or failureDomains: []).
//
// v1beta2 references carry no namespace, so the v1beta1 reference-namespace defaults have no
// counterpart here. The error is a topology that does not encode.
func DefaultCluster(c *clusterv1.Cluster) error {
	if !c.Spec.Topology.IsDefined() {
		return nil
	}
	js, err := json.Marshal(c.Spec.Topology)
	if err != nil {
		return fmt.Errorf("Cluster %s/%s: spec.topology: %w", c.Namespace, c.Name, err)
	}
	var topo clusterv1.Topology
	if err := json.Unmarshal(js, &topo); err != nil {
		return fmt.Errorf("Cluster %s/%s: spec.topology: %w", c.Namespace, c.Name, err)
	}
	if topo.Version != "" && !strings.HasPrefix(topo.Version, "v") {
		topo.Version = "v" + topo.Version
	}
	c.Spec.Topology = topo
	return nil
}

// DefaultClusterClass applies the defaults Cluster API's webhooks apply to a v1beta2
// ClusterClass: none. Cluster API v1.14 registers no defaulting webhook for the kind, and what
// topoflow's v1beta1 defaulting adds (template and remediation namespaces) has no v1beta2 field.
// It stays so that callers default every object they read in one way.
func DefaultClusterClass(*clusterv1.ClusterClass) {}

// DefaultVariables writes the class's variable defaults into the Cluster's topology, as Cluster
// API's Cluster webhook does (Default, through DefaultAndValidateVariables and DefaultVariables):
// a variable the Cluster does not set gets its default value, and nested defaults fill the values
// and the overrides it sets. Errors name the field (a pool by its name, as that webhook does);
// the Cluster is then left as it was.
func DefaultVariables(c *clusterv1.Cluster, class *clusterv1.ClusterClass) field.ErrorList {
	topo := &c.Spec.Topology
	if !topo.IsDefined() || class == nil {
		return nil
	}
	tp := field.NewPath("spec", "topology")
	defs, err := variables.Definitions(class)
	if err != nil {
		return field.ErrorList{field.Invalid(tp.Child("classRef", "name"), topo.ClassRef.Name, err.Error())}
	}
	cache := variables.NewCache(defs)
	values, errs := cache.Default(topo.Variables, tp.Child("variables"))
	// Each set of overrides the Cluster has, with its field path. An empty set stays as it is.
	type overrides struct {
		vs *[]clusterv1.ClusterVariable
		p  *field.Path
	}
	var all []overrides
	add := func(vs *[]clusterv1.ClusterVariable, p *field.Path) {
		if len(*vs) > 0 {
			all = append(all, overrides{vs, p.Child("variables", "overrides")})
		}
	}
	add(&topo.ControlPlane.Variables.Overrides, tp.Child("controlPlane"))
	for i := range topo.Workers.MachineDeployments {
		md := &topo.Workers.MachineDeployments[i]
		add(&md.Variables.Overrides, poolPath(tp, false, md.Name))
	}
	for i := range topo.Workers.MachinePools {
		mp := &topo.Workers.MachinePools[i]
		add(&mp.Variables.Overrides, poolPath(tp, true, mp.Name))
	}
	defaulted := make([][]clusterv1.ClusterVariable, len(all))
	for i, o := range all {
		var derrs field.ErrorList
		defaulted[i], derrs = cache.DefaultOverrides(*o.vs, o.p)
		errs = append(errs, derrs...)
	}
	if len(errs) > 0 {
		return errs
	}
	if len(values) > 0 { // none to default: an absent list stays absent
		topo.Variables = values
	}
	for i, o := range all {
		*o.vs = defaulted[i]
	}
	return nil
}
