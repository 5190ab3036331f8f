//go:build integration

package integration

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

var nodes = corev1.SchemeGroupVersion.WithResource("nodes")

// TestMachinePoolUpgradingFromNodes: a MachinePool with Nodes (status.nodeRefs) upgrades until
// every Node's kubelet reports its version, as Cluster API's IsMachinePoolUpgrading reads them
// from the workload cluster (here the test's own API server, named by the kubeconfig Secret
// <cluster>-kubeconfig); its replica counts do not end the upgrade. While the workload cluster
// cannot be read the pass says so in TopologyReconciled, worded as Cluster API's, and is tried
// again.
func TestMachinePoolUpgradingFromNodes(t *testing.T) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: time.Second}, timing: workflows.Timing{WaitResync: 3 * time.Second}})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	// The MachinePool gets a Node before the workload cluster can be read.
	old := e.node("n1", "v1.31.2")
	mp := e.list(kube.V1Beta1MachinePools, labels.ClusterName+"=demo")
	require.Len(t, mp, 1)
	mpName := mp[0].GetName()
	e.setNodeRefs(mpName, old)
	e.eventually(60*time.Second, "the unreadable workload cluster reported", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Reason == "TopologyReconcileFailed" &&
			strings.HasPrefix(cond.Message, "error computing the desired state of the Cluster topology: failed to check if any MachinePool is upgrading: "), fmt.Sprint(cond)
	})
	kubeconfig, err := os.ReadFile(os.Getenv("KUBECONFIG"))
	require.NoError(t, err)
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "demo-kubeconfig", "namespace": e.ns},
		"data":     map[string]any{"value": b64(kubeconfig)},
	}}
	_, err = kc.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace(e.ns).Create(e.ctx, secret, metav1.CreateOptions{})
	require.NoError(t, err)
	e.waitReconciled("demo", 60*time.Second)

	// The upgrade: the MachinePool's rollout ends by its replica counts, but its Node still runs
	// the old kubelet, so the upgrade is not over.
	e.setVersion("demo", "v1.32.0")
	e.eventually(90*time.Second, "every pool rolled out to v1.32.0", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.32.0")
		return at["md-0"] && at["md-1"] && at["mp-0"], fmt.Sprintf("%v %q", at, msg)
	})
	e.runPasses("demo")
	cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
	require.NotNil(t, cond)
	require.Equal(t, "ClusterUpgrading", cond.Reason, cond.Message)
	require.Equal(t, "Cluster is upgrading to v1.32.0\n  * Worker pools upgrading: mp-0", cond.Message)

	// A Node on the new kubelet replaces the old one: the upgrade ends.
	e.setNodeRefs(mpName, e.node("n2", "v1.32.0"))
	e.waitReconciled("demo", 60*time.Second)
}

// node creates a Node (cluster-scoped: named after the test's namespace) whose kubelet reports
// version, and returns its name.
func (e *env) node(name, version string) string {
	e.t.Helper()
	name = e.ns + "-" + name
	n := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name},
	}}
	created, err := kc.Dynamic.Resource(nodes).Create(e.ctx, n, metav1.CreateOptions{})
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = kc.Dynamic.Resource(nodes).Delete(e.ctx, name, metav1.DeleteOptions{}) })
	require.NoError(e.t, unstructured.SetNestedField(created.Object, version, "status", "nodeInfo", "kubeletVersion"))
	_, err = kc.Dynamic.Resource(nodes).UpdateStatus(e.ctx, created, metav1.UpdateOptions{})
	require.NoError(e.t, err)
	return name
}

// setNodeRefs sets a MachinePool's status.nodeRefs, as Cluster API's MachinePool controller does,
// under the test's own field manager (the client's default would be topoflow's, an echo).
func (e *env) setNodeRefs(mp string, nodeNames ...string) {
	e.t.Helper()
	var refs []string
	for _, n := range nodeNames {
		refs = append(refs, fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","name":%q}`, n))
	}
	patch := fmt.Sprintf(`{"status":{"nodeRefs":[%s]}}`, strings.Join(refs, ","))
	_, err := kc.Dynamic.Resource(kube.V1Beta1MachinePools).Namespace(e.ns).Patch(e.ctx, mp, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "integration-test"}, "status")
	require.NoError(e.t, err)
}
