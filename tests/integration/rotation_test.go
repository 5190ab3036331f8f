//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
)

// TestTemplateRotation: a spec change in a class template rotates the Clusters' cloned templates
// (new template, MachineDeployment ref moved, old template deleted); the MachineDeployments keep
// their names. The template edit reaches the Cluster through the watch on the class's template
// kinds: the workflow's resync (10 minutes) is far longer than the test's wait.
func TestTemplateRotation(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	before := e.machineDeployments("demo")
	require.Len(t, before, 2)

	e.applyFile(classFile, onlyKinds("SimMachineTemplate"), func(u *unstructured.Unstructured) {
		if u.GetName() == "quick-start-default-worker-machine" {
			require.NoError(t, unstructured.SetNestedField(u.Object, "ssd", "spec", "template", "spec", "disk"))
		}
	})
	e.eventually(60*time.Second, "worker infrastructure templates rotated", func() (bool, string) {
		after := e.machineDeployments("demo")
		state := ""
		for pool, md := range after {
			old := before[pool]
			newRef := md.Spec.Template.Spec.InfrastructureRef
			if md.Name != old.Name || newRef.Name == old.Spec.Template.Spec.InfrastructureRef.Name {
				return false, fmt.Sprintf("%s still on %s", pool, newRef.Name)
			}
			disk, _, _ := unstructured.NestedString(e.get(&newRef).Object, "spec", "template", "spec", "disk")
			if disk != "ssd" {
				return false, pool + " new template lacks the change"
			}
			if _, err := kc.GetRef(e.ctx, &old.Spec.Template.Spec.InfrastructureRef, e.ns); err == nil {
				return false, pool + " old template still exists"
			}
			state += pool + ":" + newRef.Name + " "
		}
		return len(after) == 2, state
	})
}

func (e *env) machineDeployments(cluster string) map[string]*clusterv1.MachineDeployment {
	e.t.Helper()
	out := map[string]*clusterv1.MachineDeployment{}
	for _, u := range e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"="+cluster) {
		md := &clusterv1.MachineDeployment{}
		require.NoError(e.t, decode.FromUnstructured(&u, md))
		out[md.Labels[labels.MachineDeploymentName]] = md
	}
	return out
}

// TestRotatedTemplateKeptWhileMachineSetUsesIt: a rotated-away MachineDeployment template is
// deleted only once no MachineSet uses it (Cluster API's topology MachineDeployment and MachineSet
// controllers): here a MachineSet, as Cluster API's MachineDeployment controller would leave for
// the old machines, points at md-0's old template; the template stays while the MachineSet
// exists and goes in the pass after it is deleted. md-1's old template, unused, goes at once.
func TestRotatedTemplateKeptWhileMachineSetUsesIt(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	before := e.machineDeployments("demo")
	old0, old1 := before["md-0"].Spec.Template.Spec.InfrastructureRef, before["md-1"].Spec.Template.Spec.InfrastructureRef
	ms := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
		"metadata": map[string]any{"name": before["md-0"].Name + "-old", "namespace": e.ns,
			"labels": map[string]any{labels.ClusterName: "demo", labels.MachineDeploymentName: "md-0"}},
		"spec": map[string]any{"clusterName": "demo", "replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"ms": "old"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"ms": "old"}},
				"spec": map[string]any{"clusterName": "demo", "bootstrap": map[string]any{"dataSecretName": "none"}, "infrastructureRef": map[string]any{
					"apiVersion": old0.APIVersion, "kind": old0.Kind, "name": old0.Name}}}},
	}}
	_, err := kc.Dynamic.Resource(kube.V1Beta1MachineSets).Namespace(e.ns).Create(e.ctx, ms, metav1.CreateOptions{})
	require.NoError(t, err)

	e.applyFile(classFile, onlyKinds("SimMachineTemplate"), func(u *unstructured.Unstructured) {
		if u.GetName() == "quick-start-default-worker-machine" {
			require.NoError(t, unstructured.SetNestedField(u.Object, "ssd", "spec", "template", "spec", "disk"))
		}
	})
	exists := func(ref corev1.ObjectReference) bool {
		_, err := kc.GetRef(e.ctx, &ref, e.ns)
		return err == nil
	}
	e.eventually(60*time.Second, "both pools rotated, md-1's old template deleted", func() (bool, string) {
		after := e.machineDeployments("demo")
		rotated := after["md-0"].Spec.Template.Spec.InfrastructureRef.Name != old0.Name && after["md-1"].Spec.Template.Spec.InfrastructureRef.Name != old1.Name
		return rotated && !exists(old1), fmt.Sprintf("rotated %v, md-1's old template exists %v", rotated, exists(old1))
	})
	// Later passes keep md-0's old template while the MachineSet uses it.
	e.touchPasses("demo", 2, 200*time.Millisecond, func(i int) {
		e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", fmt.Sprint(i))
	})
	require.True(t, exists(old0), "md-0's old template is kept while a MachineSet uses it")

	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1MachineSets).Namespace(e.ns).Delete(e.ctx, ms.GetName(), metav1.DeleteOptions{}))
	e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", "after")
	e.eventually(30*time.Second, "md-0's old template deleted once no MachineSet uses it", func() (bool, string) {
		return !exists(old0), old0.Name
	})
}
