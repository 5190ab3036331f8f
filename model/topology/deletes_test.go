package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/desired"
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
	topo := &w.in.Desired.Cluster.Spec.Topology
	var kept = topo.Workers.MachineDeployments[:0]
	for _, md := range topo.Workers.MachineDeployments {
		if md.Name != name {
			kept = append(kept, md)
		}
	}
	topo.Workers.MachineDeployments = kept
}

// TestDeletes_machinePoolObjectsAtReadVersions: a removed MachinePool goes with its bootstrap
// config and infrastructure pool, deleted at the API versions its references carry as read in
// v1beta1 (desired.Current.RefVersions: the hub's contract references have no version).
func TestDeletes_machinePoolObjectsAtReadVersions(t *testing.T) {
	w := sampleWorld(t)
	mp := w.in.Desired.Current.MachinePools["mp-0"]
	require.NotNil(t, mp)
	spec := mp.Spec.Template.Spec
	w.in.Desired.Current.RefVersions = desired.RefVersions{}
	w.in.Desired.Current.RefVersions.Add("MachinePool", mp.Name,
		&corev1.ObjectReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha9", Kind: spec.Bootstrap.ConfigRef.Kind},
		&corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: spec.InfrastructureRef.Kind})
	w.in.Desired.Cluster.Spec.Topology.Workers.MachinePools = nil
	dec := w.decide(t)
	got := map[string]string{}
	for _, r := range dec.Deletes.Workers {
		got[r.Kind+" "+r.Name] = r.APIVersion
	}
	assert.Equal(t, map[string]string{
		"MachinePool " + mp.Name: "cluster.x-k8s.io/v1beta1",
		spec.InfrastructureRef.Kind + " " + spec.InfrastructureRef.Name:     "infrastructure.cluster.x-k8s.io/v1beta1",
		spec.Bootstrap.ConfigRef.Kind + " " + spec.Bootstrap.ConfigRef.Name: "bootstrap.cluster.x-k8s.io/v1alpha9",
	}, got)
}
