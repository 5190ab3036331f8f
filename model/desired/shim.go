package desired

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// The cluster shim is the temporary owner Cluster API's topology controller gives the
// infrastructure cluster and the control plane while it creates them: the topology controller
// itself never makes the Cluster their owner (the Cluster controller does, once the Cluster
// points at them). The shim is a Secret owned by the Cluster; should the Cluster never come to
// reference the new objects, collecting the shim collects them too. See Cluster API's
// reconcileClusterShim and internal/topology/clustershim.

// ClusterSecretType is the type of Secrets Cluster API's core components create.
const ClusterSecretType corev1.SecretType = "cluster.x-k8s.io/secret"

// ShimName is the name of a Cluster's shim Secret.
func ShimName(cluster string) string { return cluster + "-shim" }

// Shim is the shim Secret of a Cluster, owned by the Cluster (an owner reference in
// clusterAPIVersion, see Input.ClusterAPIVersion).
func Shim(cluster *clusterv1.Cluster, clusterAPIVersion string) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            ShimName(cluster.Name),
			Namespace:       cluster.Namespace,
			OwnerReferences: []metav1.OwnerReference{ClusterOwner(cluster, clusterAPIVersion)},
		},
		Type: ClusterSecretType,
	}
}

// ShimOwner is the owner reference to a shim Secret with the given UID.
func ShimOwner(cluster *clusterv1.Cluster, uid string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "v1", Kind: "Secret", Name: ShimName(cluster.Name), UID: types.UID(uid)}
}

// AddShimOwner makes the shim an owner of the desired infrastructure cluster and control plane
// (replacing an owner reference to a Secret of the same name).
func (s *State) AddShimOwner(ref metav1.OwnerReference) {
	for _, o := range []*unstructured.Unstructured{s.InfrastructureCluster, s.ControlPlane} {
		if o != nil {
			o.SetOwnerReferences(ensureOwner(o.GetOwnerReferences(), ref))
		}
	}
}

// ShimDeletable reports whether the shim has done its job: both objects exist, the Cluster owns
// both, and the shim still owns at least one (Cluster API deletes the shim then). A class without
// an infrastructure cluster only needs the control plane.
func ShimDeletable(cluster *clusterv1.Cluster, infra, cp *unstructured.Unstructured, hasInfra bool) bool {
	if cp == nil || (hasInfra && infra == nil) {
		return false
	}
	objs := []*unstructured.Unstructured{cp}
	if hasInfra {
		objs = append(objs, infra)
	}
	clusterOwnsAll, shimOwnsOne := true, false
	for _, o := range objs {
		clusterOwnsAll = clusterOwnsAll && hasOwner(o, "Cluster", cluster.Name)
		shimOwnsOne = shimOwnsOne || hasOwner(o, "Secret", ShimName(cluster.Name))
	}
	return clusterOwnsAll && shimOwnsOne
}

// shimOwnerOf returns the current object's owner reference to the shim, if it has one: the
// topology controller keeps it in its intent so that applying does not remove it.
func shimOwnerOf(current *unstructured.Unstructured, cluster string) []metav1.OwnerReference {
	if current == nil {
		return nil
	}
	for _, o := range current.GetOwnerReferences() {
		if o.Kind == "Secret" && o.Name == ShimName(cluster) {
			return []metav1.OwnerReference{o}
		}
	}
	return nil
}

func hasOwner(o *unstructured.Unstructured, kind, name string) bool {
	for _, r := range o.GetOwnerReferences() {
		if r.Kind == kind && r.Name == name {
			return true
		}
	}
	return false
}

// ensureOwner adds ref to refs, replacing a reference to the same kind and name (Cluster API's
// util.EnsureOwnerRef).
func ensureOwner(refs []metav1.OwnerReference, ref metav1.OwnerReference) []metav1.OwnerReference {
	out := append([]metav1.OwnerReference(nil), refs...)
	for i := range out {
		if out[i].Kind == ref.Kind && out[i].Name == ref.Name {
			out[i] = ref
			return out
		}
	}
	return append(out, ref)
}
