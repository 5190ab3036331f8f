package activities

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/upgrade"
)

// The reads topoflow's admission webhooks make (see internal/admission): the same objects
// Cluster API's webhooks read, from the API server, without changing anything.

// ClusterNamed reads a Cluster from the API server itself, not the informer (nil, nil when it
// does not exist): the delete hold must see a deletion at once.
func (a *Activities) ClusterNamed(ctx context.Context, ns, name string) (*clusterv1.Cluster, error) {
	return readUncached[clusterv1.Cluster](ctx, a, kube.V1Beta1Clusters, ns, name)
}

// readUncached reads one Cluster from the API server itself, not the worker's cache, decoded in
// the version gvr names (nil, nil when it does not exist).
func readUncached[T any](ctx context.Context, a *Activities, gvr schema.GroupVersionResource, ns, name string) (*T, error) {
	u, err := a.Kube.GetUncached(ctx, gvr, ns, name)
	if kube.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	c := new(T)
	if err := a.Kube.Decode(u, c); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	return c, nil
}

// ClassOf reads the ClusterClass a Cluster names (nil, nil when it does not exist).
func (a *Activities) ClassOf(ctx context.Context, c *clusterv1.Cluster) (*clusterv1.ClusterClass, error) {
	if c.Spec.Topology == nil || c.Spec.Topology.Class == "" {
		return nil, nil
	}
	class := &clusterv1.ClusterClass{}
	ns := c.ClassNamespace()
	if err := a.Kube.GetTyped(ctx, kube.V1Beta1ClusterClasses, ns, c.Spec.Topology.Class, class); err != nil {
		if kube.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading ClusterClass %s/%s: %w", ns, c.Spec.Topology.Class, err)
	}
	return class, nil
}

// RunningState reads what a Cluster runs now (its control plane and pools) as the upgrade input,
// for the checks of a version change against it (validation.VersionAgainstRunning). The Cluster
// and class come as admission decoded them (v1beta1), and are read on the hub.
func (a *Activities) RunningState(ctx context.Context, cluster *clusterv1.Cluster, class *clusterv1.ClusterClass) (upgrade.Input, error) {
	c, err := conversion.ClusterToHub(cluster)
	if err != nil {
		return upgrade.Input{}, err
	}
	hubClass, err := conversion.ClusterClassToHub(class)
	if err != nil {
		return upgrade.Input{}, fmt.Errorf("reading ClusterClass %s/%s: %w", class.Namespace, class.Name, err)
	}
	return a.runningOf(ctx, c, hubClass)
}

// runningOf is what a Cluster runs now, read on the hub: its control plane, pools, Machines and
// MachinePool Nodes as the upgrade input (what the version checks and rollout.Settled read).
func (a *Activities) runningOf(ctx context.Context, c *hubv1.Cluster, class *hubv1.ClusterClass) (upgrade.Input, error) {
	cpRef, err := a.contractRef(c.Spec.ControlPlaneRef, c.Namespace)
	if err != nil {
		return upgrade.Input{}, err
	}
	cp, err := a.getIfExists(ctx, cpRef, c.Namespace, "spec.controlPlaneRef")
	if err != nil {
		return upgrade.Input{}, err
	}
	mds, err := listOwned[hubv1.MachineDeployment](ctx, a, kube.MachineDeployments, c)
	if err != nil {
		return upgrade.Input{}, err
	}
	mps, err := listOwned[hubv1.MachinePool](ctx, a, kube.MachinePools, c)
	if err != nil {
		return upgrade.Input{}, err
	}
	byMD := map[string]*hubv1.MachineDeployment{}
	for i := range mds {
		byMD[mds[i].Labels[labels.MachineDeploymentName]] = &mds[i]
	}
	byMP := map[string]*hubv1.MachinePool{}
	for i := range mps {
		byMP[mps[i].Labels[labels.MachinePoolName]] = &mps[i]
	}
	machines, err := a.machineVersions(ctx, c)
	if err != nil {
		return upgrade.Input{}, err
	}
	nodes, err := a.nodeVersions(ctx, c, mps)
	if err != nil {
		return upgrade.Input{}, fmt.Errorf("failed to check if MachinePools are upgrading: %w", err)
	}
	return upgrade.InputFrom(c, class, cp, byMD, byMP, machines, nodes)
}

// ClustersUsing lists the Clusters, in every namespace, whose topology names the class.
func (a *Activities) ClustersUsing(ctx context.Context, class *clusterv1.ClusterClass) ([]clusterv1.Cluster, error) {
	items, err := a.Kube.List(ctx, kube.V1Beta1Clusters, "", "")
	if err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	var out []clusterv1.Cluster
	for i := range items {
		c := clusterv1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &c); err != nil {
			continue // a Cluster that cannot be read cannot be using the class as far as we know
		}
		if c.Spec.Topology != nil && c.Spec.Topology.Class == class.Name && c.ClassNamespace() == class.Namespace {
			out = append(out, c)
		}
	}
	return out, nil
}

// clustersUsing lists the Clusters, in every namespace, whose topology names the class ns/name,
// on the hub.
func (a *Activities) clustersUsing(ctx context.Context, ns, name string) ([]hubv1.Cluster, error) {
	items, err := a.Kube.List(ctx, kube.Clusters, "", "")
	if err != nil {
		return nil, fmt.Errorf("listing Clusters: %w", err)
	}
	var out []hubv1.Cluster
	for i := range items {
		c := hubv1.Cluster{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items[i].Object, &c); err != nil {
			continue // a Cluster that cannot be read cannot be using the class as far as we know
		}
		if c.Spec.Topology.ClassRef.Name == name && c.ClassNamespace() == ns {
			out = append(out, c)
		}
	}
	return out, nil
}
