//go:build integration

package integration

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// TestOrderedDelete: deleting a managed Cluster tears its topology down in order (workers, then
// the control plane, then the infrastructure cluster, then templates), each step waiting until
// the providers let the previous step's objects go; then the Cluster itself goes.
func TestOrderedDelete(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetAnnotations(map[string]string{provider.DeleteDelay: "2s"})
		}
	})
	c := e.waitReconciled("demo", 90*time.Second)
	assert.Contains(t, c.Finalizers, labels.Finalizer, "topoflow holds the Cluster until its topology is gone")

	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Delete(e.ctx, "demo", metav1.DeleteOptions{}))
	sawDeleting := false
	e.eventually(90*time.Second, "Cluster deleted", func() (bool, string) {
		c := &clusterv1.Cluster{}
		if err := kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, "demo", c); err != nil {
			return kube.IsNotFound(err), err.Error()
		}
		sawDeleting = sawDeleting || c.Status.Phase == clusterv1.ClusterPhaseDeleting
		cond := c.Status.Conditions.Get("TopologyReconciled")
		return false, fmt.Sprintf("phase=%s %v", c.Status.Phase, cond)
	})
	assert.True(t, sawDeleting, "the Cluster showed phase Deleting")

	byKind := map[string][]provider.Deletion{}
	for _, d := range e.sim.Deletions() {
		byKind[d.Kind] = append(byKind[d.Kind], d)
	}
	require.Len(t, byKind["MachineDeployment"], 2)
	require.Len(t, byKind["MachinePool"], 1)
	require.Len(t, byKind["SimControlPlane"], 1)
	require.Len(t, byKind["SimCluster"], 1)
	cp, infra := byKind["SimControlPlane"][0], byKind["SimCluster"][0]
	for _, w := range append(append(byKind["MachineDeployment"], byKind["MachinePool"]...), byKind["SimMachinePool"]...) {
		assert.True(t, w.Released.Before(cp.Requested), "%s %s released (%s) before the control plane's deletion (%s)",
			w.Kind, w.Name, w.Released.Format(time.StampMilli), cp.Requested.Format(time.StampMilli))
	}
	assert.True(t, cp.Released.Before(infra.Requested), "control plane gone before the infrastructure cluster's deletion")

	for _, gvr := range []string{"simmachinetemplates", "simconfigtemplates", "simconfigs", "machinehealthchecks"} {
		group := "infrastructure.cluster.x-k8s.io"
		switch gvr {
		case "simconfigtemplates", "simconfigs":
			group = "bootstrap.cluster.x-k8s.io"
		case "machinehealthchecks":
			group = "cluster.x-k8s.io"
		}
		left := e.list(schemaGVR(group, gvr), labels.ClusterName+"=demo")
		assert.Empty(t, left, "%s of the Cluster left behind", gvr)
	}
	assert.Len(t, e.list(schemaGVR("infrastructure.cluster.x-k8s.io", "simmachinetemplates"), ""), 2, "the class's own templates stay")
}

// TestCachedDeleteOfHeldObject: after the worker deletes an object a finalizer holds, its cached
// reads still show it (terminating) until it is really gone. A teardown step decides from those
// reads whether its objects are gone (the soak once saw a SimCluster outlive its Cluster because
// the cache took the delete request for the removal).
func TestCachedDeleteOfHeldObject(t *testing.T) {
	e := newEnv(t, envOptions{noWorker: true, noWatcher: true})
	wk, err := kube.New(kc.Config)
	require.NoError(t, err)
	wk.UseCache(e.ctx, slog.Default(), activities.FieldManagers()...)
	gvr := schemaGVR("infrastructure.cluster.x-k8s.io", "simclusters")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimCluster",
		"metadata": map[string]any{"name": "held", "namespace": e.ns, "finalizers": []any{"test.topoflow.io/hold"}},
	}}
	_, err = kc.Dynamic.Resource(gvr).Namespace(e.ns).Create(e.ctx, obj, metav1.CreateOptions{})
	require.NoError(t, err)
	e.eventually(10*time.Second, "the cache holds the object", func() (bool, string) {
		_, err := wk.Get(e.ctx, gvr, e.ns, "held", 0)
		return err == nil, fmt.Sprint(err)
	})

	require.NoError(t, wk.Delete(e.ctx, gvr, e.ns, "held"))
	got, err := wk.Get(e.ctx, gvr, e.ns, "held", 0)
	require.NoError(t, err, "an object a finalizer holds is still there after the delete request")
	assert.NotNil(t, got.GetDeletionTimestamp(), "and it is terminating")
	require.NoError(t, wk.Delete(e.ctx, gvr, e.ns, "held"), "deleting a terminating object again is harmless")

	_, err = kc.Dynamic.Resource(gvr).Namespace(e.ns).Patch(e.ctx, "held", types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	e.eventually(10*time.Second, "the cache sees the object gone", func() (bool, string) {
		_, err := wk.Get(e.ctx, gvr, e.ns, "held", 0)
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestDeletedInfrastructureClusterStaysGone: an infrastructure cluster deleted from under a
// Cluster is not created again. Cluster API's topology controller reports a referenced object
// that is gone (getCurrentInfrastructureClusterState) and never re-creates an object it read,
// since its apply intent carries the uid read (structuredmerge.NewServerSidePatchHelper); so does
// topoflow (desired.UIDs). The soak once saw a late pass re-create a SimCluster that the
// teardown had already deleted. The Cluster still deletes cleanly afterwards.
func TestDeletedInfrastructureClusterStaysGone(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	c := e.waitReconciled("demo", 90*time.Second)
	e.waitSettled("demo")
	ref := c.Spec.InfrastructureRef
	require.NotNil(t, ref)
	infra, err := kc.GetRef(e.ctx, ref, e.ns)
	require.NoError(t, err)

	// What a pass that read the object before its deletion would send.
	stale := infra.DeepCopy()
	stale.SetManagedFields(nil)
	stale.SetResourceVersion("")
	unstructured.RemoveNestedField(stale.Object, "status")

	require.NoError(t, kc.DeleteRef(e.ctx, ref, e.ns))
	e.eventually(30*time.Second, "infrastructure cluster gone", func() (bool, string) {
		_, err := kc.GetRef(e.ctx, ref, e.ns)
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
	e.eventually(30*time.Second, "the missing infrastructure cluster reported", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		want := fmt.Sprintf("%s %s/%s (spec.infrastructureRef) not found", ref.Kind, e.ns, ref.Name)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Message == want, fmt.Sprint(cond)
	})
	_, err = kc.GetRef(e.ctx, ref, e.ns)
	assert.True(t, kube.IsNotFound(err), "the infrastructure cluster was created again: %v", err)

	// The API server refuses the stale intent rather than create the object again.
	_, err = kc.Apply(e.ctx, stale, labels.FieldManager)
	assert.True(t, apierrors.IsConflict(err), "apply of an intent carrying a deleted object's uid: %v", err)
	_, err = kc.GetRef(e.ctx, ref, e.ns)
	assert.True(t, kube.IsNotFound(err), "the stale apply created the object: %v", err)

	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Delete(e.ctx, "demo", metav1.DeleteOptions{}))
	e.eventually(90*time.Second, "Cluster deleted", func() (bool, string) {
		err := kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, "demo", &clusterv1.Cluster{})
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
	assert.Empty(t, e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo"), "workers left behind")
	_, err = kc.GetRef(e.ctx, ref, e.ns)
	assert.True(t, kube.IsNotFound(err), "the infrastructure cluster came back during the delete: %v", err)
}

// TestLateWriteDoesNotRecreateCluster: a write that arrives after its Cluster was deleted (the
// pending-hooks annotation of an upgrade that was running) finds nothing to write to; it must not
// create an empty Cluster of that name, as a plain server-side apply of the annotation would.
func TestLateWriteDoesNotRecreateCluster(t *testing.T) {
	e := newEnv(t, envOptions{noWorker: true, noWatcher: true})
	acts := activities.New(kc, slog.Default())
	c := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": "gone", "namespace": e.ns},
	}}
	_, err := kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Create(e.ctx, c, metav1.CreateOptions{})
	require.NoError(t, err)
	ref := activities.ClusterRef{Namespace: e.ns, Name: "gone"}
	require.NoError(t, acts.SetPendingHooks(e.ctx, activities.PendingHooksInput{Cluster: ref, Hooks: []string{"AfterClusterUpgrade"}}))
	got := e.cluster("gone")
	assert.Equal(t, "AfterClusterUpgrade", got.Annotations["runtime.cluster.x-k8s.io/pending-hooks"], "written while the Cluster exists")

	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Delete(e.ctx, "gone", metav1.DeleteOptions{}))
	e.eventually(10*time.Second, "Cluster deleted", func() (bool, string) {
		err := kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, "gone", &clusterv1.Cluster{})
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
	require.NoError(t, acts.SetPendingHooks(e.ctx, activities.PendingHooksInput{Cluster: ref}), "nothing to write to is not an error")
	err = kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, "gone", &clusterv1.Cluster{})
	assert.True(t, kube.IsNotFound(err), "the late write created a Cluster: %v", err)
}
