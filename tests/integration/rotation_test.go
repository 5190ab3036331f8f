//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities/kube"
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
	for _, u := range e.list(kube.MachineDeployments, labels.ClusterName+"="+cluster) {
		md := &clusterv1.MachineDeployment{}
		require.NoError(e.t, decode.FromUnstructured(&u, md))
		out[md.Labels[labels.MachineDeploymentName]] = md
	}
	return out
}
