// Package conversion turns topoflow's v1beta1 objects into the cluster.x-k8s.io/v1beta2 shape
// Cluster API v1.11+ stores and, since v1.13, sends to Runtime Extensions. The field-by-field
// rules are Cluster API's own: its API module (sigs.k8s.io/cluster-api/api, which needs nothing
// but the Kubernetes API libraries) is the authority for the v1beta2 types and their generated
// conversions, so topoflow depends on it here instead of restating about a hundred fields. What
// Cluster API's conversion webhook adds on top of the generated code (core/webhooks/conversion,
// ConvertClusterV1Beta1ToHub) is done here, with the same rules.
package conversion

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// DataAnnotation is where Cluster API's conversion webhook keeps, on an object served as
// v1beta1, the v1beta2 values v1beta1 cannot hold (util/conversion.DataAnnotation).
const DataAnnotation = "cluster.x-k8s.io/conversion-data"

// V1Beta2GroupVersion is cluster.x-k8s.io/v1beta2.
var V1Beta2GroupVersion = capiv1beta2.GroupVersion

// ClusterV1Beta2 converts a Cluster written as cluster.x-k8s.io/v1beta1 JSON into the
// cluster.x-k8s.io/v1beta2 JSON Cluster API's controllers hold for it. Fields the v1beta1 JSON
// carries that Cluster API's v1beta1 type does not know are dropped, as its webhook drops them.
func ClusterV1Beta2(v1beta1JSON []byte) (map[string]any, error) {
	in, err := parse(v1beta1JSON)
	if err != nil {
		return nil, err
	}
	return clusterV1Beta2(in)
}

func clusterV1Beta2(in map[string]any) (map[string]any, error) {
	src := &capiv1beta1.Cluster{}
	if err := decode(in, src); err != nil {
		return nil, fmt.Errorf("decoding the v1beta1 Cluster: %w", err)
	}
	dst := &capiv1beta2.Cluster{}
	if err := capiv1beta1.Convert_v1beta1_Cluster_To_v1beta2_Cluster(src, dst, nil); err != nil {
		return nil, fmt.Errorf("converting Cluster %s/%s to v1beta2: %w", src.Namespace, src.Name, err)
	}
	// The generated code leaves the contract references empty: v1beta2 names a group, not a version.
	var err error
	if dst.Spec.InfrastructureRef, err = contractReference(src.Spec.InfrastructureRef); err != nil {
		return nil, fmt.Errorf("Cluster %s/%s spec.infrastructureRef: %w", src.Namespace, src.Name, err)
	}
	if dst.Spec.ControlPlaneRef, err = contractReference(src.Spec.ControlPlaneRef); err != nil {
		return nil, fmt.Errorf("Cluster %s/%s spec.controlPlaneRef: %w", src.Namespace, src.Name, err)
	}

	// Values v1beta1 holds as plain booleans become pointers: true stays true, false is kept only
	// where the conversion data says it was written as false, otherwise it is unset.
	restored := &capiv1beta2.Cluster{}
	hasRestored, err := takeData(&dst.ObjectMeta, restored)
	if err != nil {
		return nil, fmt.Errorf("Cluster: %w", err)
	}
	capiv1beta2.Convert_bool_To_Pointer_bool(src.Spec.Paused, hasRestored, restored.Spec.Paused, &dst.Spec.Paused)
	initialization := capiv1beta2.ClusterInitializationStatus{}
	capiv1beta2.Convert_bool_To_Pointer_bool(src.Status.ControlPlaneReady, hasRestored,
		restored.Status.Initialization.ControlPlaneInitialized, &initialization.ControlPlaneInitialized)
	capiv1beta2.Convert_bool_To_Pointer_bool(src.Status.InfrastructureReady, hasRestored,
		restored.Status.Initialization.InfrastructureProvisioned, &initialization.InfrastructureProvisioned)
	if !reflect.DeepEqual(initialization, capiv1beta2.ClusterInitializationStatus{}) {
		dst.Status.Initialization = initialization
	}

	dst.APIVersion, dst.Kind = capiv1beta2.GroupVersion.String(), "Cluster"
	return withoutFillers(in, dst, nil)
}

// APIVersionOf names the API version a v1beta1 reference uses for an object of a group and kind
// (a v1beta2 contract reference names only the group): Cluster API reads it from the provider's
// CRD and its contract label.
type APIVersionOf func(group, kind string) (string, error)

// ClusterV1Beta1 converts a cluster.x-k8s.io/v1beta2 Cluster JSON into the v1beta1 JSON Cluster
// API's conversion webhook serves for it (core/webhooks/conversion.ConvertClusterHubToV1Beta1),
// with the v1beta2 object kept in DataAnnotation so that converting back loses nothing. A field
// the v1beta2 object does not have is not in the v1beta1 one either (see dropFillers), so a
// partial object stays partial.
func ClusterV1Beta1(v1beta2JSON []byte, versionOf APIVersionOf) (map[string]any, error) {
	in, err := parse(v1beta2JSON)
	if err != nil {
		return nil, err
	}
	return clusterV1Beta1(in, versionOf)
}

func clusterV1Beta1(in map[string]any, versionOf APIVersionOf) (map[string]any, error) {
	src := &capiv1beta2.Cluster{}
	if err := decode(in, src); err != nil {
		return nil, fmt.Errorf("decoding the v1beta2 Cluster: %w", err)
	}
	dst := &capiv1beta1.Cluster{}
	if err := capiv1beta1.Convert_v1beta2_Cluster_To_v1beta1_Cluster(src, dst, nil); err != nil {
		return nil, fmt.Errorf("converting Cluster %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
	}
	for _, r := range []struct {
		field string
		ref   capiv1beta2.ContractVersionedObjectReference
		out   **corev1.ObjectReference
	}{
		{"spec.infrastructureRef", src.Spec.InfrastructureRef, &dst.Spec.InfrastructureRef},
		{"spec.controlPlaneRef", src.Spec.ControlPlaneRef, &dst.Spec.ControlPlaneRef},
	} {
		if !r.ref.IsDefined() {
			continue
		}
		version, err := versionOf(r.ref.APIGroup, r.ref.Kind)
		if err != nil {
			return nil, fmt.Errorf("Cluster %s/%s %s: %w", src.Namespace, src.Name, r.field, err)
		}
		*r.out = &corev1.ObjectReference{APIVersion: schema.GroupVersion{Group: r.ref.APIGroup, Version: version}.String(),
			Kind: r.ref.Kind, Namespace: src.Namespace, Name: r.ref.Name}
	}
	if n := dst.Spec.ClusterNetwork; n != nil && n.APIServerPort != nil && *n.APIServerPort == 0 {
		n.APIServerPort = nil
	}
	if t := dst.Spec.Topology; t != nil {
		if m := t.ControlPlane.MachineHealthCheck; m != nil && m.RemediationTemplate != nil {
			m.RemediationTemplate.Namespace = dst.Namespace
		}
		if t.Workers != nil {
			for i := range t.Workers.MachineDeployments {
				md := &t.Workers.MachineDeployments[i]
				if md.MachineHealthCheck != nil && md.MachineHealthCheck.RemediationTemplate != nil {
					md.MachineHealthCheck.RemediationTemplate.Namespace = dst.Namespace
				}
				dropEmpty(&md.FailureDomain)
			}
		}
	}
	hub := src.DeepCopy()
	hub.ObjectMeta = metav1.ObjectMeta{}
	if err := putData(hub, &dst.ObjectMeta); err != nil {
		return nil, err
	}
	dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), "Cluster"
	return withoutFillers(in, dst, clusterFillers)
}

// contractReference is a v1beta1 object reference as v1beta2 holds it: API group, kind, name
// (the namespace is the Cluster's, the version the one the group's contract names).
func contractReference(ref *corev1.ObjectReference) (capiv1beta2.ContractVersionedObjectReference, error) {
	if ref == nil {
		return capiv1beta2.ContractVersionedObjectReference{}, nil
	}
	var group string
	if ref.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return capiv1beta2.ContractVersionedObjectReference{}, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
		}
		group = gv.Group
	}
	return capiv1beta2.ContractVersionedObjectReference{APIGroup: group, Kind: ref.Kind, Name: ref.Name}, nil
}
