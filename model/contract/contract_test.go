package contract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(m map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: m}
	u.SetKind("SimControlPlane")
	u.SetName("cp")
	return u
}

func TestReadControlPlane(t *testing.T) {
	u := obj(map[string]any{
		"metadata": map[string]any{"generation": int64(4)},
		"spec":     map[string]any{"version": "v1.31.0", "replicas": int64(3)},
		"status": map[string]any{
			"version": "v1.30.5", "initialized": true, "ready": true,
			"replicas": int64(3), "updatedReplicas": float64(1), "readyReplicas": int64(3), "unavailableReplicas": int64(0),
			"observedGeneration": int64(4),
		},
	})
	st, err := ReadControlPlane(u)
	require.NoError(t, err)
	assert.Equal(t, "v1.30.5", st.Version)
	assert.Equal(t, "v1.31.0", st.DesiredVersion)
	assert.True(t, st.Initialized)
	assert.EqualValues(t, 1, *st.Updated, "JSON numbers may arrive as float64")
	assert.True(t, st.IsUpgrading())
	assert.True(t, st.IsScaling(), "updated replicas behind spec")
	assert.EqualValues(t, 4, st.ObservedGeneration)

	// A provider without replicas is never scaling; an empty status is not initialized.
	st, err = ReadControlPlane(obj(map[string]any{"spec": map[string]any{"version": "v1.31.0"}}))
	require.NoError(t, err)
	assert.False(t, st.Initialized)
	assert.False(t, st.IsScaling())
	assert.True(t, st.IsUpgrading())
}

func TestContractTypeErrorsNameTheField(t *testing.T) {
	_, err := ReadControlPlane(obj(map[string]any{"status": map[string]any{"initialized": "yes"}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SimControlPlane cp: field .status.initialized is string, want bool")

	_, err = ReadControlPlane(obj(map[string]any{"spec": map[string]any{"replicas": 2.5}}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), ".spec.replicas")
}

func TestReadInfraCluster(t *testing.T) {
	u := obj(map[string]any{
		"spec":   map[string]any{"controlPlaneEndpoint": map[string]any{"host": "h", "port": int64(6443)}},
		"status": map[string]any{"ready": true},
	})
	st, err := ReadInfraCluster(u)
	require.NoError(t, err)
	assert.True(t, st.Ready)
	require.NotNil(t, st.Endpoint)
	assert.Equal(t, EndpointValue{Host: "h", Port: 6443}, *st.Endpoint)

	st, err = ReadInfraCluster(obj(map[string]any{"spec": map[string]any{"controlPlaneEndpoint": map[string]any{"host": "h"}}}))
	require.NoError(t, err)
	assert.Nil(t, st.Endpoint, "an endpoint without a port is not an endpoint")
}

func TestObjectRefAndSet(t *testing.T) {
	u := obj(map[string]any{})
	require.NoError(t, SetRef(u, ControlPlaneInfrastructureRef, &corev1Ref))
	ref, err := ObjectRef(u, ControlPlaneInfrastructureRef)
	require.NoError(t, err)
	assert.Equal(t, corev1Ref, *ref)

	require.NoError(t, Set(u, ControlPlaneInfrastructureRef, map[string]any{"kind": "X"}))
	_, err = ObjectRef(u, ControlPlaneInfrastructureRef)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must have kind and name")
}

var corev1Ref = func() (r corev1.ObjectReference) {
	r.APIVersion, r.Kind, r.Name, r.Namespace = "infrastructure.cluster.x-k8s.io/v1beta1", "SimMachineTemplate", "t", "ns"
	return
}()

// TestReadV1Beta2Contract: providers of the v1beta2 contract (Cluster API v1.11+, such as
// KubeadmControlPlane and DevCluster v1beta2) report readiness under status.initialization and
// count up-to-date and available replicas (Cluster API internal/contract ControlPlaneContract
// Initialized, UpToDateReplicas, AvailableReplicas, IsScaling; InfrastructureClusterContract
// Provisioned).
func TestReadV1Beta2Contract(t *testing.T) {
	cp := func(status map[string]any) ControlPlaneState {
		t.Helper()
		st, err := ReadControlPlane(obj(map[string]any{"spec": map[string]any{"version": "v1.34.0", "replicas": int64(3)}, "status": status}))
		require.NoError(t, err)
		return st
	}
	tests := []struct {
		name                             string
		status                           map[string]any
		initialized, ready, scaling, upd bool
	}{
		{"nothing reported", map[string]any{}, false, false, true, false},
		{"initialized, replicas coming", map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true},
			"replicas": int64(3), "upToDateReplicas": int64(3), "readyReplicas": int64(2), "availableReplicas": int64(2)}, true, false, true, true},
		{"available not reported", map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true},
			"replicas": int64(3), "upToDateReplicas": int64(3), "readyReplicas": int64(3)}, true, false, true, true},
		{"all available", map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true},
			"replicas": int64(3), "upToDateReplicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3)}, true, true, false, true},
		{"v1beta1 fields of a v1beta2 object do not count", map[string]any{"initialization": map[string]any{},
			"initialized": true, "ready": true, "updatedReplicas": int64(3), "replicas": int64(3), "readyReplicas": int64(3), "availableReplicas": int64(3)}, false, false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := cp(tt.status)
			assert.Equal(t, tt.initialized, st.Initialized, "initialized")
			assert.Equal(t, tt.ready, st.Ready, "ready")
			assert.Equal(t, tt.scaling, st.IsScaling(), "scaling")
			assert.Equal(t, tt.upd, st.Updated != nil, "up-to-date replicas read")
		})
	}

	for _, tt := range []struct {
		status map[string]any
		ready  bool
	}{
		{map[string]any{"initialization": map[string]any{"provisioned": true}}, true},
		{map[string]any{"initialization": map[string]any{"provisioned": false}, "ready": true}, false},
		{map[string]any{"ready": true}, true}, // v1beta1
	} {
		st, err := ReadInfraCluster(obj(map[string]any{"status": tt.status}))
		require.NoError(t, err)
		assert.Equal(t, tt.ready, st.Ready, "%v", tt.status)
	}
}
