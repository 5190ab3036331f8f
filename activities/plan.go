package activities

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
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
	return a.planInput(ctx, l, l.input.Cluster)
}

// planInput is the plan input of a loaded Cluster, with old as the Cluster stored (the update
// rules' old object): its current topology objects added.
func (a *Activities) planInput(ctx context.Context, l *loaded, old *hubv1.Cluster) (*plan.Input, error) {
	in := &plan.Input{Desired: l.input, Old: old, Unhandled: a.skipHooks(ctx, l.input.Cluster.Namespace)}
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
	sel := labels.ClusterName + "=" + l.input.Cluster.Name + "," + labels.TopologyOwned
	// Read on the hub, as the plan compares.
	for _, gvr := range []schema.GroupVersionResource{kube.MachineDeployments, kube.MachinePools, kube.MachineHealthChecks} {
		items, err := a.Kube.List(ctx, gvr, l.input.Cluster.Namespace, sel)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for i := range items {
			add(&items[i])
		}
	}
	// Objects the current MachinePools point at (their bootstrap config and infrastructure pool).
	for _, mp := range l.currentMPs {
		for _, contract := range []hubv1.ContractVersionedObjectReference{mp.Spec.Template.Spec.InfrastructureRef, mp.Spec.Template.Spec.Bootstrap.ConfigRef} {
			r, err := a.contractRef(contract, l.input.Cluster.Namespace)
			if err != nil {
				return nil, err
			}
			if r == nil {
				continue
			}
			u, err := a.Kube.GetRef(ctx, r, l.input.Cluster.Namespace)
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
