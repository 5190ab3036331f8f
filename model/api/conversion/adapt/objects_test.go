package adapt_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/pools"
)

// Durations become whole seconds (v1beta2.ConvertToSeconds): truncated, capped at MaxInt32; a
// zero duration is 0 (set), none is nil.
func TestDurationsToSeconds(t *testing.T) {
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	in := &v1beta1.MachineDeploymentTopology{Name: "md", Class: "c",
		NodeDrainTimeout: d(1900 * time.Millisecond), NodeVolumeDetachTimeout: d(0), NodeDeletionTimeout: nil,
		MachineHealthCheck: &v1beta1.MachineHealthCheckTopology{MachineHealthCheckClass: v1beta1.MachineHealthCheckClass{
			NodeStartupTimeout:  d(time.Duration(math.MaxInt32+10) * time.Second),
			UnhealthyConditions: []v1beta1.UnhealthyCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 300*time.Second + 999*time.Millisecond}}},
		}}}
	topo := adapt.TopologyToHub(&v1beta1.Topology{Workers: &v1beta1.WorkersTopology{MachineDeployments: []v1beta1.MachineDeploymentTopology{*in}}})
	md := topo.Workers.MachineDeployments[0]
	assert.Equal(t, ptr(int32(1)), md.Deletion.NodeDrainTimeoutSeconds)
	assert.Equal(t, ptr(int32(0)), md.Deletion.NodeVolumeDetachTimeoutSeconds)
	assert.Nil(t, md.Deletion.NodeDeletionTimeoutSeconds)
	assert.Equal(t, ptr(int32(math.MaxInt32)), md.HealthCheck.Checks.NodeStartupTimeoutSeconds)
	assert.Equal(t, ptr(int32(300)), md.HealthCheck.Checks.UnhealthyNodeConditions[0].TimeoutSeconds)
}

// A v1beta1 boolean v1beta2 holds as a pointer is true or unset (false cannot be told from unset
// without conversion data); references become contract references, which name a group; a
// MachineDeployment's v1beta1 counters move to status.deprecated.v1beta1, its v1beta2 ones up.
func TestClusterAndPoolsToHub(t *testing.T) {
	c := &v1beta1.Cluster{Spec: v1beta1.ClusterSpec{
		ControlPlaneRef: &corev1.ObjectReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlane", Name: "cp", Namespace: "ns"},
		Topology:        &v1beta1.Topology{Class: "quick-start", ClassNamespace: "classes", Version: "v1.31.2"},
	}, Status: v1beta1.ClusterStatus{ControlPlaneReady: true}}
	hub, err := adapt.ClusterToHub(c)
	require.NoError(t, err)
	assert.Nil(t, hub.Spec.Paused)
	assert.Equal(t, v1beta2.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "SimControlPlane", Name: "cp"}, hub.Spec.ControlPlaneRef)
	assert.False(t, hub.Spec.InfrastructureRef.IsDefined())
	assert.Equal(t, v1beta2.ClusterClassRef{Name: "quick-start", Namespace: "classes"}, hub.Spec.Topology.ClassRef)
	assert.Equal(t, v1beta2.ClusterInitializationStatus{ControlPlaneInitialized: ptr(true)}, hub.Status.Initialization)

	c.Spec.ControlPlaneRef.APIVersion = "a/b/c"
	_, err = adapt.ClusterToHub(c)
	assert.ErrorContains(t, err, "spec.controlPlaneRef: apiVersion \"a/b/c\"", "as Cluster API's conversion refuses it")

	md := &v1beta1.MachineDeployment{Status: v1beta1.MachineDeploymentStatus{Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 3, UnavailableReplicas: 1,
		V1Beta2: &v1beta1.PoolV1Beta2Status{UpToDateReplicas: ptr(int32(2))}}}
	hubMD, err := adapt.MachineDeploymentToHub(md)
	require.NoError(t, err)
	assert.Equal(t, ptr(int32(3)), hubMD.Status.Replicas)
	assert.Nil(t, hubMD.Status.ReadyReplicas, "v1beta2's readyReplicas is another counter: from status.v1beta2 only")
	assert.Equal(t, ptr(int32(2)), hubMD.Status.UpToDateReplicas)
	assert.Equal(t, &v1beta2.MachineDeploymentV1Beta1DeprecatedStatus{UpdatedReplicas: 2, ReadyReplicas: 3, UnavailableReplicas: 1}, hubMD.Status.Deprecated.V1Beta1)

	mds, err := adapt.MachineDeploymentsToHub(map[string]*v1beta1.MachineDeployment{"md-0": md})
	require.NoError(t, err)
	assert.Equal(t, map[string]*v1beta2.MachineDeployment{"md-0": hubMD}, mds)
	mds, err = adapt.MachineDeploymentsToHub(nil)
	assert.NoError(t, err)
	assert.Nil(t, mds)
}

// UpgradePending reads the metadata alone, so a Cluster whose references would not convert
// still answers.
func TestUpgradePending(t *testing.T) {
	c := &v1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{runtimev1.PendingHooksAnnotation: hooksv1.AfterClusterUpgrade}},
		Spec: v1beta1.ClusterSpec{ControlPlaneRef: &corev1.ObjectReference{APIVersion: "a/b/c"}}}
	assert.True(t, adapt.UpgradePending(c, hooksv1.AfterClusterUpgrade))
	assert.False(t, adapt.UpgradePending(c, hooksv1.AfterControlPlaneInitialized))
}

// PoolObjectToHub converts a v1beta1 MachineDeployment or MachinePool and leaves anything else.
func TestPoolObjectToHub(t *testing.T) {
	md := &v1beta1.MachineDeployment{TypeMeta: metav1.TypeMeta{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "md"}, Status: v1beta1.MachineDeploymentStatus{UpdatedReplicas: 2}}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(md)
	require.NoError(t, err)
	hub, err := adapt.PoolObjectToHub(&unstructured.Unstructured{Object: m})
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta2", hub.GetAPIVersion())
	n, _, _ := unstructured.NestedInt64(hub.Object, "status", "deprecated", "v1beta1", "updatedReplicas")
	assert.Equal(t, int64(2), n)

	for _, u := range []*unstructured.Unstructured{
		{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment"}},
		{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine"}},
	} {
		got, err := adapt.PoolObjectToHub(u)
		require.NoError(t, err)
		assert.Same(t, u, got)
	}
}

// The pools views of a v1beta1 class and topology are pools' views of their hub forms, with the
// v1beta1 values at the same place.
func TestPoolViews(t *testing.T) {
	class, cluster, err := samples.Typed()
	require.NoError(t, err)
	cls := adapt.PoolClasses(class)
	hub := pools.Classes(adapt.ClusterClassToHub(class))
	require.Len(t, cls, len(hub))
	require.NotEmpty(t, cls)
	for i, pc := range cls {
		assert.Equal(t, hub[i], pc.Class)
		if pc.MachinePool {
			mp := class.Spec.Workers.MachinePools[pc.Index]
			assert.Equal(t, mp.Template.Bootstrap.Ref, pc.Bootstrap)
			assert.Nil(t, pc.HealthCheck)
			assert.Nil(t, pc.Class.HealthCheck)
			continue
		}
		md := class.Spec.Workers.MachineDeployments[pc.Index]
		assert.Equal(t, md.Template.Metadata, pc.Metadata)
		assert.Equal(t, md.Template.Infrastructure.Ref, pc.Infrastructure)
		assert.Equal(t, md.MachineHealthCheck, pc.HealthCheck)
	}

	topos := adapt.PoolTopologies(cluster.Spec.Topology)
	require.Len(t, topos, len(cluster.Spec.Topology.Workers.MachineDeployments)+len(cluster.Spec.Topology.Workers.MachinePools))
	for _, pt := range topos {
		pc := pt.ClassIn(class)
		require.NotNil(t, pc, pt.Name)
		assert.Equal(t, pt.Class, pc.Name)
		assert.Equal(t, pt.MachinePool, pc.MachinePool)
		if !pt.MachinePool {
			md := cluster.Spec.Topology.Workers.MachineDeployments[pt.Index]
			assert.Equal(t, md.Metadata, pt.Metadata)
			if md.Variables != nil {
				assert.Equal(t, md.Variables.Overrides, pt.Overrides)
			}
		}
	}
	assert.Nil(t, adapt.PoolTopologies(nil))
	missing := adapt.PoolTopology{Topology: pools.Topology{Class: "nope"}}
	assert.Nil(t, missing.ClassIn(class))
}
