package desired

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestAtWriteVersion: current objects are read in the version of the class template of their
// group (KubeadmControlPlane at its KubeadmControlPlaneTemplate's, a cloned template at its own),
// whatever version a reference on the Cluster or a pool names.
func TestAtWriteVersion(t *testing.T) {
	class := sample(t).Class // SimClusterTemplate, SimControlPlaneTemplate, SimMachineTemplate... at v1beta1
	for _, tc := range []struct {
		name, apiVersion, kind, want string
	}{
		{"object of a template kind, newer version", "infrastructure.cluster.x-k8s.io/v1beta2", "SimCluster", "infrastructure.cluster.x-k8s.io/v1beta1"},
		{"cloned template, newer version", "infrastructure.cluster.x-k8s.io/v1beta2", "SimMachineTemplate", "infrastructure.cluster.x-k8s.io/v1beta1"},
		{"already the write version", "controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "controlplane.cluster.x-k8s.io/v1beta1"},
		{"a kind the class does not clone", "infrastructure.cluster.x-k8s.io/v1beta2", "OtherCluster", "infrastructure.cluster.x-k8s.io/v1beta2"},
		{"another group", "infra.example.com/v2", "SimCluster", "infra.example.com/v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := &corev1.ObjectReference{APIVersion: tc.apiVersion, Kind: tc.kind, Name: "x"}
			got := AtWriteVersion(class, ref)
			if got.APIVersion != tc.want || got.Kind != tc.kind || got.Name != "x" {
				t.Errorf("AtWriteVersion = %+v, want apiVersion %s", got, tc.want)
			}
			if ref.APIVersion != tc.apiVersion {
				t.Error("the given reference was changed")
			}
		})
	}
	if AtWriteVersion(class, nil) != nil {
		t.Error("nil reference")
	}
}
