package adapt

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/pools"
)

// The pools of a class and a topology, for the callers that read them as v1beta1 values and keep
// computing with those: the validation of a v1beta1 class as written and the desired state. What
// pools answers are the hub's values (template references, naming template, health check,
// overrides), and converting them back would lose what v1beta1 tells apart and Cluster API's
// v1beta2 does not (a reference written empty and none, an empty naming template and none, a
// timeout's fraction of a second, an override's definitionFrom). So these views are pools'
// views of the hub form, in pools' order and with its lookups, holding beside it the v1beta1
// values at the same place. Their own fields shadow pools' fields of the same names (which stay
// reachable through the embedded view).

// PoolClass is pools.Class with the v1beta1 class's values.
type PoolClass struct {
	pools.Class
	Metadata                  v1beta1.ObjectMeta
	Bootstrap, Infrastructure *corev1.ObjectReference
	// NamingTemplate is the naming strategy's template, nil for the default.
	NamingTemplate *string
	// HealthCheck is a MachineDeploymentClass's machineHealthCheck (nil for MachinePoolClasses).
	HealthCheck *v1beta1.MachineHealthCheckClass
}

// PoolClasses is pools.Classes of a v1beta1 class.
func PoolClasses(cc *v1beta1.ClusterClass) []PoolClass {
	var out []PoolClass
	for _, c := range pools.Classes(ClusterClassToHub(cc)) {
		out = append(out, poolClass(cc, c))
	}
	return out
}

func poolClass(cc *v1beta1.ClusterClass, c pools.Class) PoolClass {
	out := PoolClass{Class: c}
	if c.MachinePool {
		mp := &cc.Spec.Workers.MachinePools[c.Index]
		out.Metadata, out.Bootstrap, out.Infrastructure = mp.Template.Metadata, mp.Template.Bootstrap.Ref, mp.Template.Infrastructure.Ref
		if ns := mp.NamingStrategy; ns != nil {
			out.NamingTemplate = ns.Template
		}
		return out
	}
	md := &cc.Spec.Workers.MachineDeployments[c.Index]
	out.Metadata, out.Bootstrap, out.Infrastructure = md.Template.Metadata, md.Template.Bootstrap.Ref, md.Template.Infrastructure.Ref
	if ns := md.NamingStrategy; ns != nil {
		out.NamingTemplate = ns.Template
	}
	out.HealthCheck = md.MachineHealthCheck
	return out
}

// PoolTopology is pools.Topology with the v1beta1 topology's values.
type PoolTopology struct {
	pools.Topology
	Metadata  v1beta1.ObjectMeta
	Overrides []v1beta1.ClusterVariable
}

// PoolTopologies is pools.Topologies of a v1beta1 topology.
func PoolTopologies(t *v1beta1.Topology) []PoolTopology {
	if t == nil {
		return nil
	}
	hub := TopologyToHub(t)
	var out []PoolTopology
	for _, p := range pools.Topologies(&hub) {
		o := PoolTopology{Topology: p}
		if p.MachinePool {
			mp := &t.Workers.MachinePools[p.Index]
			o.Metadata = mp.Metadata
			if mp.Variables != nil {
				o.Overrides = mp.Variables.Overrides
			}
		} else {
			md := &t.Workers.MachineDeployments[p.Index]
			o.Metadata = md.Metadata
			if md.Variables != nil {
				o.Overrides = md.Variables.Overrides
			}
		}
		out = append(out, o)
	}
	return out
}

// ClassIn is pools.Topology.ClassIn in a v1beta1 class.
func (t PoolTopology) ClassIn(cc *v1beta1.ClusterClass) *PoolClass {
	c := t.Topology.ClassIn(ClusterClassToHub(cc))
	if c == nil {
		return nil
	}
	out := poolClass(cc, *c)
	return &out
}
