package activities

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/desired"
)

// topoflow plays two roles. The topology role writes exactly what Cluster API's topology
// controller writes (field manager capi-topology). The Cluster controller role stands in for
// Cluster API's core controllers where none run beside topoflow: the Cluster's phase, readiness
// and endpoint, and the owner references that let the garbage collector follow the Cluster. It
// writes under its own field manager (StatusFieldManager), and is off when Activities.ClusterController
// is false, leaving that work to Cluster API.

// servedVersion is the apiVersion the API server serves a cluster.x-k8s.io kind in (its
// preferred one): what owner references to a Cluster name, and what the pools are written in;
// v1beta1 when discovery cannot tell.
func (a *Activities) servedVersion(kind string) string {
	gv := clusterv1.GroupVersion
	if v, err := a.Kube.PreferredVersion(gv.Group, kind); err == nil {
		gv.Version = v
	}
	return gv.String()
}

// ownByCluster makes the Cluster an owner of obj, as Cluster API's controllers do for the objects
// the topology creates: the Cluster controller for the infrastructure cluster and the control plane
// (as controller), the MachineDeployment and MachinePool controllers for the pools. Only the owner
// reference is sent, and nothing when it is there already.
func (a *Activities) ownByCluster(ctx context.Context, l *loaded, obj *unstructured.Unstructured, controller bool) error {
	if !a.ClusterController || obj == nil {
		return nil
	}
	cluster := l.cluster
	want := desired.ClusterOwner(cluster, l.input.ClusterAPIVersion)
	if controller {
		yes := true
		want.Controller = &yes
	}
	for _, o := range obj.GetOwnerReferences() {
		if o.UID == want.UID && (o.Controller != nil && *o.Controller) == controller {
			return nil
		}
	}
	intent := &unstructured.Unstructured{Object: map[string]any{}}
	intent.SetAPIVersion(obj.GetAPIVersion())
	intent.SetKind(obj.GetKind())
	intent.SetName(obj.GetName())
	intent.SetNamespace(obj.GetNamespace())
	intent.SetOwnerReferences([]metav1.OwnerReference{want})
	intent.SetUID(obj.GetUID()) // never a create: an object deleted since stays deleted
	if _, err := a.Kube.Apply(ctx, intent, StatusFieldManager); err != nil {
		return fmt.Errorf("making Cluster %s/%s an owner of %s %s: %w", cluster.Namespace, cluster.Name, obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// coreProviderLabel is the label clusterctl (and deploy/capi/up.sh) puts on Cluster API core's
// CRDs; topoflow's own CRDs do not carry it.
const coreProviderLabel = "cluster.x-k8s.io/provider"

// ClusterAPICoreInstalled says whether Cluster API core is installed in the management cluster:
// its Clusters CRD carries the provider label "cluster-api". Then its controllers own the Cluster
// controller role and topoflow leaves it to them.
func ClusterAPICoreInstalled(ctx context.Context, k *kube.Client) (bool, error) {
	crd, err := k.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, "clusters."+clusterv1.GroupVersion.Group, metav1.GetOptions{})
	if kube.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Clusters CRD: %w", err)
	}
	return crd.GetLabels()[coreProviderLabel] == "cluster-api", nil
}
