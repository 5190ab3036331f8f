package activities

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// ErrWorkloadCluster: the workload cluster, whose Nodes tell whether a MachinePool is upgrading,
// could not be read. The pass reports it and is tried again, as Cluster API's reconcile is.
const ErrWorkloadCluster = "WorkloadClusterUnreachable"

// workloadTimeout bounds one request to a workload cluster (Cluster API's ClusterCache uses 10s).
const workloadTimeout = 10 * time.Second

// workloadClients keeps one client per workload cluster, built from the kubeconfig Secret
// "<cluster>-kubeconfig" (key "value") that Cluster API's control plane providers write, as
// Cluster API's ClusterCache does. A client that fails is dropped, so a rotated kubeconfig is read
// again on the next pass.
type workloadClients struct {
	mu      sync.Mutex
	clients map[string]kubernetes.Interface
}

func (w *workloadClients) get(ctx context.Context, k *kube.Client, cluster *hubv1.Cluster) (kubernetes.Interface, error) {
	key := cluster.Namespace + "/" + cluster.Name
	w.mu.Lock()
	c, ok := w.clients[key]
	w.mu.Unlock()
	if ok {
		return c, nil
	}
	// Built outside the lock: a slow read for one Cluster holds up no other.
	name := cluster.Name + "-kubeconfig"
	s, err := k.Dynamic.Resource(secrets).Namespace(cluster.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig Secret %s/%s: %w", cluster.Namespace, name, err)
	}
	encoded, _, _ := unstructured.NestedString(s.Object, "data", "value")
	raw, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("the kubeconfig Secret %s/%s has no data.value", cluster.Namespace, name)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig Secret %s/%s: %w", cluster.Namespace, name, err)
	}
	cfg.Timeout = workloadTimeout
	c, err = kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.clients == nil {
		w.clients = map[string]kubernetes.Interface{}
	}
	w.clients[key] = c
	return c, nil
}

// drop forgets a Cluster's client: it failed, or the Cluster is gone.
func (w *workloadClients) drop(namespace, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.clients, namespace+"/"+name)
}

// nodeVersions reads the kubelet versions of the Nodes of every MachinePool that has some
// (status.nodeRefs) from the workload cluster: what Cluster API's IsMachinePoolUpgrading reads.
// Like Cluster API it connects only when a MachinePool has Nodes (none while the Cluster is
// created); its errors are worded as Cluster API's.
func (a *Activities) nodeVersions(ctx context.Context, cluster *hubv1.Cluster, mps []hubv1.MachinePool) (upgrade.NodeVersions, error) {
	var withNodes []*hubv1.MachinePool
	for i := range mps {
		if len(mps[i].Status.NodeRefs) > 0 {
			withNodes = append(withNodes, &mps[i])
		}
	}
	if len(withNodes) == 0 {
		return nil, nil
	}
	c, err := a.workload.get(ctx, a.Kube, cluster)
	if err != nil {
		return nil, err
	}
	out := upgrade.NodeVersions{}
	for _, mp := range withNodes {
		for _, ref := range mp.Status.NodeRefs {
			node, err := c.CoreV1().Nodes().Get(ctx, ref.Name, metav1.GetOptions{})
			if err != nil {
				a.workload.drop(cluster.Namespace, cluster.Name)
				return nil, fmt.Errorf("failed to check if MachinePool %s is upgrading: failed to get Node %s: %w", mp.Name, ref.Name, err)
			}
			out[mp.Name] = append(out[mp.Name], node.Status.NodeInfo.KubeletVersion)
		}
	}
	return out, nil
}

// workloadFailed is a pass that could not tell whether a MachinePool upgrades: reported in
// TopologyReconciled as Cluster API's reconcile reports it, and tried again.
func workloadFailed(err error) error {
	err = fmt.Errorf("error computing the desired state of the Cluster topology: failed to check if any MachinePool is upgrading: %w", err)
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrWorkloadCluster, err)
}
