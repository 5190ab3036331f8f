package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	"github.com/topoflow/topoflow/internal/kube"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/topology"
)

// DeleteStep is one step of a managed Cluster's ordered teardown.
type DeleteStep string

// Delete steps, in order.
const (
	DeleteWorkers        DeleteStep = "Workers"
	DeleteControlPlane   DeleteStep = "ControlPlane"
	DeleteInfrastructure DeleteStep = "Infrastructure"
	DeleteTemplates      DeleteStep = "Templates"
)

// DeleteSteps lists the teardown steps in order.
var DeleteSteps = []DeleteStep{DeleteWorkers, DeleteControlPlane, DeleteInfrastructure, DeleteTemplates}

// DeleteInput asks for one teardown step.
type DeleteInput struct {
	Cluster ClusterRef `json:"cluster"`
	Step    DeleteStep `json:"step"`
}

// DeleteResult lists the step's objects that still exist ("Kind name"); empty means the step is done.
type DeleteResult struct {
	ClusterGone bool     `json:"clusterGone,omitempty"`
	Remaining   []string `json:"remaining,omitempty"`
}

// DeleteTopologyStep deletes the objects of one teardown step and reports which still exist (their
// providers may take a while to let them go). Deleting again what is already going is harmless,
// so the step can be retried or resumed at any time.
func (a *Activities) DeleteTopologyStep(ctx context.Context, in DeleteInput) (*DeleteResult, error) {
	cluster, err := a.readCluster(ctx, in.Cluster)
	if err != nil {
		if kube.IsNotFound(err) {
			return &DeleteResult{ClusterGone: true}, nil
		}
		return nil, fmt.Errorf("reading Cluster %s: %w", in.Cluster, err)
	}
	if err := a.markOkToDelete(ctx, cluster); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	switch in.Step {
	case DeleteWorkers:
		objs, err = a.workerObjects(ctx, cluster)
	case DeleteControlPlane:
		objs, err = a.contractObjects(ctx, cluster, cluster.Spec.ControlPlaneRef)
		if err == nil {
			// The control plane's health check goes with it.
			var mhcs []*unstructured.Unstructured
			mhcs, err = a.listOwnedUnstructured(ctx, kube.MachineHealthChecks, cluster)
			objs = append(objs, mhcs...)
		}
	case DeleteInfrastructure:
		objs, err = a.contractObjects(ctx, cluster, cluster.Spec.InfrastructureRef)
	case DeleteTemplates:
		objs, err = a.templateObjects(ctx, cluster)
	default:
		return nil, invalid(fmt.Errorf("unknown delete step %q", in.Step))
	}
	if err != nil {
		return nil, err
	}
	res := &DeleteResult{}
	deleting := 0
	defer func() {
		if deleting > 0 {
			a.event(cluster, corev1.EventTypeNormal, "DeleteStep", "Delete step %s: deleting %d object(s)", in.Step, deleting)
		}
	}()
	for _, o := range objs {
		ref := corev1.ObjectReference{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName()}
		if o.GetDeletionTimestamp() == nil {
			if err := a.Kube.DeleteRef(ctx, &ref, o.GetNamespace()); err != nil {
				return nil, err
			}
			deleting++
			a.Log.InfoContext(ctx, "deleting", "cluster", in.Cluster.String(), "step", in.Step, "kind", o.GetKind(), "name", o.GetName())
		}
		// An object without finalizers is gone at once; one held by a provider remains (its
		// removal is a watch event that wakes the workflow).
		if _, err := a.Kube.GetRef(ctx, &ref, o.GetNamespace()); kube.IsNotFound(err) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
		}
		res.Remaining = append(res.Remaining, o.GetKind()+" "+o.GetName())
	}
	sort.Strings(res.Remaining)
	return res, nil
}

// markOkToDelete records on the Cluster that its teardown may start (BeforeClusterDelete passed,
// or no hooks run), as Cluster API's topology controller does (hooks.MarkAsOkToDelete): Cluster
// API core waits for it with its gates on, and topoflow's delete hold lets deletes through once it
// is there (topology.DeleteHeld).
func (a *Activities) markOkToDelete(ctx context.Context, cluster *hubv1.Cluster) error {
	if _, ok := cluster.Annotations[runtimev1.OkToDeleteAnnotation]; ok {
		return nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:""}}}`, runtimev1.OkToDeleteAnnotation)
	if _, err := a.Kube.MergePatch(ctx, kube.Clusters, cluster.Namespace, cluster.Name, []byte(patch), StatusFieldManager); err != nil && !kube.IsNotFound(err) {
		return fmt.Errorf("marking Cluster %s/%s ok to delete: %w", cluster.Namespace, cluster.Name, err)
	}
	return nil
}

// workerObjects are the Cluster's MachineDeployments and MachinePools (with the bootstrap configs
// and infrastructure pools the MachinePools point at) and their health checks.
func (a *Activities) workerObjects(ctx context.Context, cluster *hubv1.Cluster) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	mds, err := a.listOwnedUnstructured(ctx, kube.MachineDeployments, cluster)
	if err != nil {
		return nil, err
	}
	out = append(out, mds...)
	mps, err := listOwned[hubv1.MachinePool](ctx, a, kube.MachinePools, cluster)
	if err != nil {
		return nil, err
	}
	for i := range mps {
		mp := &mps[i]
		objs, err := a.refObjects(ctx, cluster, &corev1.ObjectReference{APIVersion: kube.MachinePools.GroupVersion().String(), Kind: "MachinePool", Name: mp.Name})
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		for _, r := range []hubv1.ContractVersionedObjectReference{mp.Spec.Template.Spec.InfrastructureRef, mp.Spec.Template.Spec.Bootstrap.ConfigRef} {
			objs, err := a.contractObjects(ctx, cluster, r)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	mhcs, err := a.listOwnedUnstructured(ctx, kube.MachineHealthChecks, cluster)
	if err != nil {
		return nil, err
	}
	for _, m := range mhcs {
		if cp := cluster.Spec.ControlPlaneRef; !cp.IsDefined() || m.GetName() != cp.Name {
			out = append(out, m)
		}
	}
	return out, nil
}

// contractObjects returns the object a contract reference points at, if it exists.
func (a *Activities) contractObjects(ctx context.Context, cluster *hubv1.Cluster, ref hubv1.ContractVersionedObjectReference) ([]*unstructured.Unstructured, error) {
	r, err := a.contractRef(ref, cluster.Namespace)
	if err != nil {
		return nil, err
	}
	return a.refObjects(ctx, cluster, r)
}

// refObjects returns the referenced object if it exists.
func (a *Activities) refObjects(ctx context.Context, cluster *hubv1.Cluster, ref *corev1.ObjectReference) ([]*unstructured.Unstructured, error) {
	if ref == nil || ref.Name == "" {
		return nil, nil
	}
	u, err := a.Kube.GetRef(ctx, ref, cluster.Namespace)
	if kube.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	return []*unstructured.Unstructured{u}, nil
}

func (a *Activities) listOwnedUnstructured(ctx context.Context, gvr schema.GroupVersionResource, cluster *hubv1.Cluster) ([]*unstructured.Unstructured, error) {
	sel := labels.ClusterName + "=" + cluster.Name + "," + labels.TopologyOwned
	items, err := a.Kube.List(ctx, gvr, cluster.Namespace, sel)
	if kube.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s of Cluster %s/%s: %w", gvr.Resource, cluster.Namespace, cluster.Name, err)
	}
	out := make([]*unstructured.Unstructured, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out, nil
}

// templateObjects finds the Cluster's cloned templates by label, across every template kind of
// the Cluster API provider groups (*.cluster.x-k8s.io): the ClusterClass may be gone by now.
func (a *Activities) templateObjects(ctx context.Context, cluster *hubv1.Cluster) ([]*unstructured.Unstructured, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(a.Kube.Config)
	if err != nil {
		return nil, err
	}
	lists, err := disco.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering template kinds: %w", err)
	}
	var out []*unstructured.Unstructured
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || !strings.HasSuffix(gv.Group, "cluster.x-k8s.io") {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.HasSuffix(r.Kind, "Template") || strings.Contains(r.Name, "/") {
				continue
			}
			objs, err := a.listOwnedUnstructured(ctx, gv.WithResource(r.Name), cluster)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

// RemoveFinalizer releases the Cluster once its topology is gone.
func (a *Activities) RemoveFinalizer(ctx context.Context, ref ClusterRef) error {
	return a.setFinalizer(ctx, ref, false)
}

// setFinalizer adds or removes topoflow's finalizer with a merge patch of the finalizers on the
// resourceVersion read (the API server rejects a conflicting write, and the retry reads again).
// Only metadata is sent: it means the same in every version the Cluster is served in.
func (a *Activities) setFinalizer(ctx context.Context, ref ClusterRef, want bool) error {
	u, err := a.Kube.Get(ctx, kube.Clusters, ref.Namespace, ref.Name, 0)
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Cluster %s: %w", ref, err)
	}
	fins := u.GetFinalizers()
	has := false
	kept := []string{}
	for _, f := range fins {
		if f == labels.Finalizer {
			has = true
			continue
		}
		kept = append(kept, f)
	}
	if has == want {
		return nil
	}
	if want {
		kept = append(slices.Clone(fins), labels.Finalizer)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": kept, "resourceVersion": u.GetResourceVersion()}})
	if err != nil {
		return err
	}
	if _, err := a.Kube.MergePatch(ctx, kube.Clusters, ref.Namespace, ref.Name, patch, StatusFieldManager); err != nil && !kube.IsNotFound(err) {
		return fmt.Errorf("updating the finalizers of Cluster %s: %w", ref, err)
	}
	return nil
}

// releaseTopologyFinalizers lets Cluster API's topology finalizer go from the Cluster's deleting
// MachineDeployments and MachineSets (topology.Releases), each write on the resourceVersion read.
func (a *Activities) releaseTopologyFinalizers(ctx context.Context, ns string, cur desired.Current) error {
	for _, r := range topology.Releases(cur) {
		gvr := kube.V1Beta1MachineSets
		if r.Kind == "MachineDeployment" {
			gvr = kube.MachineDeployments
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": r.Kept, "resourceVersion": r.ResourceVersion}})
		if err != nil {
			return err
		}
		if _, err := a.Kube.MergePatch(ctx, gvr, ns, r.Name, patch, StatusFieldManager); err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("releasing %s %s/%s from finalizer %s: %w", r.Kind, ns, r.Name, r.Finalizer, err)
		}
		a.Log.InfoContext(ctx, "released a deleting pool object from Cluster API's topology finalizer", "kind", r.Kind, "namespace", ns, "name", r.Name)
	}
	return nil
}
