package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/variables"
)

// The v1beta1 defaulting, kept as v1beta1 code: it mutates the caller's v1beta1 object, which the
// admission webhook turns into a JSON patch, so it may change the defaulted fields only (a trip
// through the hub and back would also write what the conversion normalises). Each function goes
// once its callers are on the hub (DefaultCluster, DefaultClusterClass, DefaultVariables).

// DefaultClusterV1Beta1 applies the defaults Cluster API's Cluster webhook applied to a v1beta1
// Cluster (webhooks.Cluster.Default before v1beta2), so topoflow computes from the same Cluster
// whether or not a webhook ran:
//   - a topology version without the "v" prefix gets one; an empty version stays empty (Cluster
//     API's webhook makes it "v", which then reads as "Version string empty": a version that is
//     not there is reported as required instead);
//   - the references without a namespace get the Cluster's;
//   - a topology health check's remediation template without a namespace gets the Cluster's;
//   - empty lists and maps in the topology are dropped: the webhook decodes and re-encodes the
//     Cluster, and an empty omitempty field does not survive that, so the class's value applies
//     (for example readinessGates: [] or failureDomains: []).
func DefaultClusterV1Beta1(c *v1beta1.Cluster) error {
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
	topo := &v1beta1.Topology{}
	if err := json.Unmarshal(js, topo); err != nil {
		return fmt.Errorf("Cluster %s/%s: spec.topology: %w", c.Namespace, c.Name, err)
	}
	c.Spec.Topology = topo
	if topo.Version != "" && !strings.HasPrefix(topo.Version, "v") {
		topo.Version = "v" + topo.Version
	}
	remediationNamespace := func(m *v1beta1.MachineHealthCheckTopology) {
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

// DefaultClusterClassV1Beta1 applies the defaults Cluster API's ClusterClass webhook applied to a
// v1beta1 ClusterClass (webhooks.ClusterClass.Default before v1beta2): every template and
// remediation reference without a namespace gets the class's.
func DefaultClusterClassV1Beta1(class *v1beta1.ClusterClass) {
	ns := class.Namespace
	set := func(r *corev1.ObjectReference) {
		if r != nil && r.Namespace == "" {
			r.Namespace = ns
		}
	}
	s := &class.Spec
	if s.Infrastructure != nil {
		set(s.Infrastructure.Ref)
	}
	set(s.ControlPlane.Ref)
	if s.ControlPlane.MachineInfrastructure != nil {
		set(s.ControlPlane.MachineInfrastructure.Ref)
	}
	if s.ControlPlane.MachineHealthCheck != nil {
		set(s.ControlPlane.MachineHealthCheck.RemediationTemplate)
	}
	for i := range s.Workers.MachineDeployments {
		md := &s.Workers.MachineDeployments[i]
		set(md.Template.Bootstrap.Ref)
		set(md.Template.Infrastructure.Ref)
		if md.MachineHealthCheck != nil {
			set(md.MachineHealthCheck.RemediationTemplate)
		}
	}
	for i := range s.Workers.MachinePools {
		set(s.Workers.MachinePools[i].Template.Bootstrap.Ref)
		set(s.Workers.MachinePools[i].Template.Infrastructure.Ref)
	}
}

// DefaultVariablesV1Beta1 writes the class's variable defaults into the v1beta1 Cluster's
// topology, as Cluster API's Cluster webhook does (Default, through DefaultAndValidateVariables): a
// variable the Cluster does not set gets its default value, and nested defaults fill the values
// and the overrides it sets. The class and each set of values are converted to the hub
// (package conversion) for the computation; only the values come back (withValues). Errors name
// the field (v1beta1 paths, a pool by its index); the Cluster is then left as it was.
func DefaultVariablesV1Beta1(c *v1beta1.Cluster, class *v1beta1.ClusterClass) field.ErrorList {
	topo := c.Spec.Topology
	if topo == nil || class == nil {
		return nil
	}
	tp := field.NewPath("spec", "topology")
	hubClass, err := conversion.ClusterClassToHub(class)
	if err != nil {
		return field.ErrorList{field.Invalid(tp.Child("class"), topo.Class, fmt.Sprintf("the ClusterClass does not convert to v1beta2: %v", err))}
	}
	defs, err := variables.Definitions(hubClass)
	if err != nil {
		return field.ErrorList{field.Invalid(tp.Child("class"), topo.Class, err.Error())}
	}
	cache := variables.NewCache(defs)
	// Each set of values the Cluster has, with its field path: its variables (a variable not set
	// gets its default), then its overrides (only the ones set are defaulted).
	type values struct {
		vs        *[]v1beta1.ClusterVariable
		p         *field.Path
		overrides bool
	}
	all := []values{{&topo.Variables, tp.Child("variables"), false}}
	if v := topo.ControlPlane.Variables; v != nil {
		all = append(all, values{&v.Overrides, tp.Child("controlPlane", "variables", "overrides"), true})
	}
	if w := topo.Workers; w != nil {
		for i := range w.MachineDeployments {
			if v := w.MachineDeployments[i].Variables; v != nil {
				all = append(all, values{&v.Overrides, tp.Child("workers", "machineDeployments").Index(i).Child("variables", "overrides"), true})
			}
		}
		for i := range w.MachinePools {
			if v := w.MachinePools[i].Variables; v != nil {
				all = append(all, values{&v.Overrides, tp.Child("workers", "machinePools").Index(i).Child("variables", "overrides"), true})
			}
		}
	}
	var errs field.ErrorList
	defaulted := make([][]v1beta1.ClusterVariable, len(all))
	for i, set := range all {
		hub, err := conversion.ClusterVariablesToHub(*set.vs)
		if err != nil {
			errs = append(errs, unconverted(set.p, err))
			continue
		}
		var out []clusterv1.ClusterVariable
		var derrs field.ErrorList
		if set.overrides {
			out, derrs = cache.DefaultOverrides(hub, set.p)
		} else {
			out, derrs = cache.Default(hub, set.p)
		}
		defaulted[i] = withValues(*set.vs, out)
		errs = append(errs, derrs...)
	}
	if len(errs) > 0 {
		return errs
	}
	for i, set := range all {
		*set.vs = defaulted[i]
	}
	return nil
}

// withValues is was, a v1beta1 Cluster's variable entries, with the values the hub computed from
// them (values: was's variables in was's order, then the added ones, see variables.Cache.Default).
// An entry at the same index with the same name keeps all it has but its value (definitionFrom,
// which v1beta2 does not hold); any other is a name and a value.
func withValues(was []v1beta1.ClusterVariable, values []clusterv1.ClusterVariable) []v1beta1.ClusterVariable {
	if values == nil {
		return nil
	}
	out := make([]v1beta1.ClusterVariable, len(values))
	for i, v := range values {
		if i < len(was) && was[i].Name == v.Name {
			out[i] = was[i]
		} else {
			out[i].Name = v.Name
		}
		out[i].Value = v.Value
	}
	return out
}
