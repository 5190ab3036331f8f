package topology

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/desired"
)

// Deletes are what a pass deletes, each once the part that replaces it has been applied, as
// Cluster API's reconcileState does. The apply executes them; the plan prints them.
type Deletes struct {
	// ControlPlane is the control plane's machine template once it was rotated away from
	// (deleted after the control plane points at the new one).
	ControlPlane []corev1.ObjectReference `json:"controlPlane,omitempty"`
	// Workers are the pools and health checks the topology no longer has, then the pools'
	// templates nothing uses any more (deleted after the workers were applied).
	Workers []corev1.ObjectReference `json:"workers,omitempty"`
}

// All lists every delete, in order.
func (d Deletes) All() []corev1.ObjectReference {
	return append(append([]corev1.ObjectReference{}, d.ControlPlane...), d.Workers...)
}

// deletes decides what a pass deletes. A template is kept while something written in this pass,
// a part that waits (State.Kept) or one of the Cluster's MachineSets (its old machines) uses it,
// as Cluster API's topology MachineDeployment and MachineSet controllers keep them.
func deletes(cur desired.Current, state *desired.State, ns string) (Deletes, error) {
	written, err := state.Objects()
	if err != nil {
		return Deletes{}, err
	}
	used := map[string]bool{}
	for _, o := range written {
		used[keyOf(o)] = true
	}
	for _, k := range state.Kept {
		used[k] = true
	}
	var d Deletes
	if cp := cur.ControlPlane; cp != nil {
		if ref, err := contract.ControlPlaneMachineInfrastructureRef(cp); err == nil && ref != nil {
			if t, ok := cur.Templates[desired.RefKeyIn(ref, ns)]; ok && !used[keyOf(t)] {
				d.ControlPlane = append(d.ControlPlane, refTo(t))
			}
		}
	}
	d.Workers = removedPools(cur, state, ns)
	for _, ms := range cur.MachineSets {
		for _, r := range contract.MachineTemplateRefs(ms) {
			used[desired.RefKeyIn(r, ms.GetNamespace())] = true
		}
	}
	templates := append([]*unstructured.Unstructured{}, cur.PoolTemplates...)
	sort.Slice(templates, func(i, j int) bool { return keyOf(templates[i]) < keyOf(templates[j]) })
	for _, t := range templates {
		if !used[keyOf(t)] {
			d.Workers = append(d.Workers, refTo(t))
		}
	}
	return d, nil
}

// removedPools are the MachineDeployments and MachinePools (with a MachinePool's bootstrap config
// and infrastructure pool) the topology no longer has, or that are not created yet, and the
// health checks it no longer has or disabled. A removed MachineDeployment's templates go once
// nothing uses them (the pool templates in deletes).
func removedPools(cur desired.Current, state *desired.State, ns string) []corev1.ObjectReference {
	wantMD, wantMP, wantMHC := map[string]bool{}, map[string]bool{}, map[string]bool{}
	if state.ControlPlaneMachineHealthCheck != nil {
		wantMHC[state.ControlPlaneMachineHealthCheck.Name] = true
	}
	for _, md := range state.MachineDeployments {
		if !md.PendingCreate {
			wantMD[md.Object.Name] = true
			if md.MachineHealthCheck != nil {
				wantMHC[md.MachineHealthCheck.Name] = true
			}
		}
	}
	for _, mp := range state.MachinePools {
		if !mp.PendingCreate {
			wantMP[mp.Object.Name] = true
		}
	}
	var out []corev1.ObjectReference
	for _, name := range desired.SortedKeys(cur.MachineDeployments) {
		if md := cur.MachineDeployments[name]; !wantMD[md.Name] {
			out = append(out, corev1.ObjectReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment", Namespace: ns, Name: md.Name})
		}
	}
	for _, name := range desired.SortedKeys(cur.MachinePools) {
		mp := cur.MachinePools[name]
		if wantMP[mp.Name] {
			continue
		}
		out = append(out, corev1.ObjectReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool", Namespace: ns, Name: mp.Name})
		spec := &mp.Spec.Template.Spec
		for _, r := range []*corev1.ObjectReference{
			cur.RefVersions.Ref("MachinePool", mp.Name, spec.InfrastructureRef, ns),
			cur.RefVersions.Ref("MachinePool", mp.Name, spec.Bootstrap.ConfigRef, ns),
		} {
			if r != nil && r.Name != "" {
				out = append(out, *r)
			}
		}
	}
	for _, m := range cur.MachineHealthChecks {
		if !wantMHC[m.Name] {
			out = append(out, corev1.ObjectReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineHealthCheck", Namespace: ns, Name: m.Name})
		}
	}
	return out
}

func keyOf(u *unstructured.Unstructured) string {
	return u.GetKind() + "/" + u.GetNamespace() + "/" + u.GetName()
}

func refTo(u *unstructured.Unstructured) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}
