package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestVersionOf follows Cluster API v1.14.2's contract.GetContractVersionForVersion: the contract
// is the suffix of the "cluster.x-k8s.io/<contract>" label whose value (versions joined by "_")
// holds the API version.
func TestVersionOf(t *testing.T) {
	labels := map[string]string{
		"cluster.x-k8s.io/v1beta1":  "v1beta1",
		"cluster.x-k8s.io/v1beta2":  "v1alpha4_v1beta2",
		"cluster.x-k8s.io/provider": "control-plane-kubeadm",
		"app":                       "v1beta3",
	}
	for _, tc := range []struct{ version, want string }{
		{"v1beta1", V1Beta1},
		{"v1beta2", V1Beta2},
		{"v1alpha4", V1Beta2},
		{"v1beta3", ""},
	} {
		assert.Equal(t, tc.want, VersionOf(labels, tc.version), tc.version)
	}
	assert.Empty(t, VersionOf(nil, "v1beta1"), "a CRD without contract labels")
}

// TestControlPlaneMachineInfrastructureRef reads the control plane's machine template reference
// by either contract (Cluster API's ControlPlaneMachineTemplate InfrastructureV1Beta1Ref and
// InfrastructureRef).
func TestControlPlaneMachineInfrastructureRef(t *testing.T) {
	v1beta1 := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"machineTemplate": map[string]any{
		"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerMachineTemplate", "name": "t1"}}}}}
	v1beta2 := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"machineTemplate": map[string]any{"spec": map[string]any{
		"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "DockerMachineTemplate", "name": "t2"}}}}}}
	for _, tc := range []struct {
		name string
		cp   *unstructured.Unstructured
		want *corev1.ObjectReference
	}{
		{"v1beta1 contract", v1beta1, &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "DockerMachineTemplate", Name: "t1"}},
		{"v1beta2 contract: the group alone", v1beta2, &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachineTemplate", Name: "t2"}},
		{"none", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}, nil},
		{"no control plane", nil, nil},
	} {
		got, err := ControlPlaneMachineInfrastructureRef(tc.cp)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
}
