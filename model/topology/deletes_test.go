package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func refNames(d Deletes) (cp, workers []string) {
	for _, r := range d.ControlPlane {
		cp = append(cp, r.Kind+" "+r.Name)
	}
	for _, r := range d.Workers {
		workers = append(workers, r.Kind+" "+r.Name)
	}
	return cp, workers
}

// TestDeletes: what a pass deletes is part of its decision (the apply executes it, the plan
// prints it), as Cluster API's reconcileMachineDeployments and the MachineSet controller decide:
// a pool the topology no longer has goes with its health check and, once nothing uses them, its
// templates; a template a MachineSet still uses stays; templates a pool waiting for its version
// still uses stay.
func TestDeletes(t *testing.T) {
	for _, tt := range []struct {
		name        string
		change      func(t *testing.T, w *world)
		wantWorkers func(w *world) []string
	}{
		{"settled", func(*testing.T, *world) {}, func(*world) []string { return nil }},
		{"pool removed", func(_ *testing.T, w *world) { removePool(w, "md-1") }, func(w *world) []string {
			md := w.in.Desired.Current.MachineDeployments["md-1"]
			spec := md.Spec.Template.Spec
			return []string{"MachineDeployment " + md.Name, "MachineHealthCheck " + md.Name,
				spec.Bootstrap.ConfigRef.Kind + " " + spec.Bootstrap.ConfigRef.Name, spec.InfrastructureRef.Kind + " " + spec.InfrastructureRef.Name}
		}},
		{"pool removed, its MachineSet keeps the template", func(t *testing.T, w *world) {
			removePool(w, "md-1")
			md := w.in.Desired.Current.MachineDeployments["md-1"]
			ms := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
				"metadata": map[string]any{"name": md.Name + "-abc", "namespace": md.Namespace}}}
			require.NoError(t, unstructured.SetNestedMap(ms.Object, map[string]any{"kind": md.Spec.Template.Spec.InfrastructureRef.Kind,
				"name": md.Spec.Template.Spec.InfrastructureRef.Name}, "spec", "template", "spec", "infrastructureRef"))
			w.in.Desired.Current.MachineSets = append(w.in.Desired.Current.MachineSets, ms)
		}, func(w *world) []string {
			md := w.in.Desired.Current.MachineDeployments["md-1"]
			ref := md.Spec.Template.Spec.Bootstrap.ConfigRef
			return []string{"MachineDeployment " + md.Name, "MachineHealthCheck " + md.Name, ref.Kind + " " + ref.Name}
		}},
		{"pools pending an upgrade keep their templates", func(_ *testing.T, w *world) {
			w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
		}, func(*world) []string { return nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := sampleWorld(t)
			tt.change(t, w)
			dec := w.decide(t)
			cp, workers := refNames(dec.Deletes)
			assert.Empty(t, cp)
			assert.ElementsMatch(t, tt.wantWorkers(w), workers)
		})
	}
}

// removePool takes a MachineDeployment out of the Cluster's topology.
func removePool(w *world, name string) {
	topo := w.in.Desired.Cluster.Spec.Topology
	var kept = topo.Workers.MachineDeployments[:0]
	for _, md := range topo.Workers.MachineDeployments {
		if md.Name != name {
			kept = append(kept, md)
		}
	}
	topo.Workers.MachineDeployments = kept
}
