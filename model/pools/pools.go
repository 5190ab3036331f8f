// Package pools reads a ClusterClass's and a Cluster topology's worker pools, MachineDeployments
// and MachinePools, through one view. Where Cluster API's rules for the two are the same (class
// lookup, template references, naming, metadata, the defer and hold annotations) code reads the
// view once; where they differ the view says so: a MachinePool has no health check, and callers
// branch on MachinePool for the rules Cluster API keeps apart (what "rolling out" means, which
// objects are cloned).
package pools

import (
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
)

// Class is a MachineDeploymentClass or a MachinePoolClass.
type Class struct {
	MachinePool bool
	// Index is its place in the class's list of its kind.
	Index int
	Name  string
	// Metadata is the class's template metadata; Bootstrap and Infrastructure its template
	// references.
	Metadata                  clusterv1.ObjectMeta
	Bootstrap, Infrastructure clusterv1.ClusterClassTemplateReference
	// NamingTemplate is the naming template, "" for the default.
	NamingTemplate string
	// HealthCheck is the class's health check (MachineDeployments only: Cluster API has none for
	// MachinePools, whose HealthCheck is nil); zero when the class defines none.
	HealthCheck *clusterv1.MachineDeploymentClassHealthCheck
}

// Classes are the class's MachineDeploymentClasses, then its MachinePoolClasses.
func Classes(cc *clusterv1.ClusterClass) []Class {
	var out []Class
	for i, md := range cc.Spec.Workers.MachineDeployments {
		out = append(out, Class{Index: i, Name: md.Class, Metadata: md.Metadata, Bootstrap: md.Bootstrap.TemplateRef,
			Infrastructure: md.Infrastructure.TemplateRef, NamingTemplate: md.Naming.Template, HealthCheck: &md.HealthCheck})
	}
	for i, mp := range cc.Spec.Workers.MachinePools {
		out = append(out, Class{MachinePool: true, Index: i, Name: mp.Class, Metadata: mp.Metadata, Bootstrap: mp.Bootstrap.TemplateRef,
			Infrastructure: mp.Infrastructure.TemplateRef, NamingTemplate: mp.Naming.Template})
	}
	return out
}

// Topology is a MachineDeploymentTopology or a MachinePoolTopology.
type Topology struct {
	MachinePool bool
	// Index is its place in the topology's list of its kind.
	Index    int
	Name     string
	Class    string
	Metadata clusterv1.ObjectMeta
	Replicas *int32
	// Overrides are its variable overrides.
	Overrides []clusterv1.ClusterVariable
}

// Topologies are the topology's MachineDeployments, then its MachinePools, in topology order.
func Topologies(t *clusterv1.Topology) []Topology {
	if t == nil {
		return nil
	}
	var out []Topology
	for i, md := range t.Workers.MachineDeployments {
		out = append(out, Topology{Index: i, Name: md.Name, Class: md.Class, Metadata: md.Metadata, Replicas: md.Replicas,
			Overrides: md.Variables.Overrides})
	}
	for i, mp := range t.Workers.MachinePools {
		out = append(out, Topology{MachinePool: true, Index: i, Name: mp.Name, Class: mp.Class, Metadata: mp.Metadata, Replicas: mp.Replicas,
			Overrides: mp.Variables.Overrides})
	}
	return out
}

// ClassIn is the pool's class in cc (nil when the class does not define it).
func (t Topology) ClassIn(cc *clusterv1.ClusterClass) *Class {
	for _, c := range Classes(cc) {
		if c.MachinePool == t.MachinePool && c.Name == t.Class {
			return &c
		}
	}
	return nil
}

// Kind is "MachineDeployment" or "MachinePool".
func Kind(machinePool bool) string {
	if machinePool {
		return "MachinePool"
	}
	return "MachineDeployment"
}

// Field is the list's field name: "machineDeployments" or "machinePools".
func Field(machinePool bool) string {
	if machinePool {
		return "machinePools"
	}
	return "machineDeployments"
}

// NameLabel is the label that carries a pool's topology name on its objects.
func NameLabel(machinePool bool) string {
	if machinePool {
		return labels.MachinePoolName
	}
	return labels.MachineDeploymentName
}

// NamesInput is what a pool's naming template may use.
func NamesInput(machinePool bool, cluster, topologyName string) names.Input {
	if machinePool {
		return names.Input{ClusterName: cluster, MachinePoolTopologyName: topologyName}
	}
	return names.Input{ClusterName: cluster, MachineDeploymentTopologyName: topologyName}
}
