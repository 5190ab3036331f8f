package activities

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/plan"
)

// PlanInput reads, without changing anything, what a plan of an existing Cluster needs: the
// same inputs the apply activity computes from, plus the Cluster's current topology objects.
func (a *Activities) PlanInput(ctx context.Context, ref ClusterRef) (*plan.Input, error) {
	l, res, err := a.load(ctx, ref)
	if err != nil {
		return nil, err
	}
	if res != nil {
		switch res.Skip {
		case SkipGone:
			return nil, fmt.Errorf("Cluster %s not found", ref)
		case SkipDeleting:
			return nil, fmt.Errorf("Cluster %s is being deleted", ref)
		case SkipPaused:
			return nil, fmt.Errorf("Cluster %s is paused (spec.paused or annotation cluster.x-k8s.io/paused)", ref)
		}
		return nil, fmt.Errorf("Cluster %s has no spec.topology", ref)
	}
	return a.planInput(ctx, l, l.cluster)
}

// planInput is the plan input of a loaded Cluster, with old as the Cluster stored (the update
// rules' old object): its current topology objects added.
func (a *Activities) planInput(ctx context.Context, l *loaded, old *clusterv1.Cluster) (*plan.Input, error) {
	in := &plan.Input{Desired: l.input, Cluster: l.cluster, Class: l.class, Old: old, Unhandled: a.skipHooks(ctx, l.cluster.Namespace)}
	seen := map[string]bool{}
	add := func(u *unstructured.Unstructured) {
		if u != nil && !seen[u.GetKind()+"/"+u.GetName()] {
			seen[u.GetKind()+"/"+u.GetName()] = true
			in.Current = append(in.Current, u)
		}
	}
	add(l.input.Current.InfrastructureCluster)
	add(l.input.Current.ControlPlane)
	for _, t := range l.input.Current.Templates {
		add(t)
	}
	sel := labels.ClusterName + "=" + l.cluster.Name + "," + labels.TopologyOwned
	for _, gvr := range []schema.GroupVersionResource{kube.V1Beta1MachineDeployments, kube.V1Beta1MachinePools, kube.V1Beta1MachineHealthChecks} {
		items, err := a.Kube.List(ctx, gvr, l.cluster.Namespace, sel)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for i := range items {
			add(&items[i])
		}
	}
	// Objects the current MachinePools point at (their bootstrap config and infrastructure pool).
	for _, mp := range l.currentMPs {
		refs := []*corev1.ObjectReference{&mp.Spec.Template.Spec.InfrastructureRef, mp.Spec.Template.Spec.Bootstrap.ConfigRef}
		for _, r := range refs {
			if r == nil || r.Name == "" {
				continue
			}
			u, err := a.Kube.GetRef(ctx, r, l.cluster.Namespace)
			if err != nil && !kube.IsNotFound(err) {
				return nil, err
			}
			if err == nil {
				add(u)
			}
		}
	}
	return in, nil
}
