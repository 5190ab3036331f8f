package activities

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
)

var secrets = corev1.SchemeGroupVersion.WithResource("secrets")

// ensureShim creates the Cluster's shim Secret (desired.Shim), or reads it when it exists, and
// returns the owner reference to it. Like Cluster API, it creates rather than applies: the shim
// is a temporary object only the topology controller touches.
func (a *Activities) ensureShim(ctx context.Context, cluster *hubv1.Cluster, clusterAPIVersion string) (metav1.OwnerReference, error) {
	u, err := toUnstructured(desired.Shim(cluster, clusterAPIVersion))
	if err != nil {
		return metav1.OwnerReference{}, err
	}
	got, err := a.Kube.Create(ctx, secrets, u, labels.FieldManager)
	if kube.IsAlreadyExists(err) {
		got, err = a.Kube.Get(ctx, secrets, cluster.Namespace, u.GetName(), 0)
	}
	if err != nil {
		return metav1.OwnerReference{}, fmt.Errorf("creating the cluster shim Secret %s/%s: %w", cluster.Namespace, u.GetName(), err)
	}
	return desired.ShimOwner(cluster, string(got.GetUID())), nil
}

// deleteShim deletes the Cluster's shim Secret once the Cluster owns what the shim guarded
// (desired.ShimDeletable); an absent shim is fine.
func (a *Activities) deleteShim(ctx context.Context, cluster *hubv1.Cluster) error {
	// Without a garbage collector (the local stack) the infrastructure cluster and control plane
	// keep their owner reference to the deleted shim, and every pass finds it deletable again;
	// the client remembers the delete and does not send it again.
	if err := a.Kube.Delete(ctx, secrets, cluster.Namespace, desired.ShimName(cluster.Name)); err != nil {
		return fmt.Errorf("deleting the cluster shim Secret: %w", err)
	}
	return nil
}

func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
