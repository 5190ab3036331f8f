package conversion

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

func ptrTo[T any](v T) *T { return &v }

// TestTypedDurationsToSeconds: durations become whole seconds (v1beta2.ConvertToSeconds):
// truncated, capped at MaxInt32; a zero duration is 0 (set), none is nil.
func TestTypedDurationsToSeconds(t *testing.T) {
	d := func(x time.Duration) *metav1.Duration { return &metav1.Duration{Duration: x} }
	in := v1beta1.MachineDeploymentTopology{Name: "md", Class: "c",
		NodeDrainTimeout: d(1900 * time.Millisecond), NodeVolumeDetachTimeout: d(0), NodeDeletionTimeout: nil,
		MachineHealthCheck: &v1beta1.MachineHealthCheckTopology{MachineHealthCheckClass: v1beta1.MachineHealthCheckClass{
			NodeStartupTimeout:  d(time.Duration(math.MaxInt32+10) * time.Second),
			UnhealthyConditions: []v1beta1.UnhealthyCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Timeout: metav1.Duration{Duration: 300*time.Second + 999*time.Millisecond}}},
		}}}
	hub, err := ClusterToHub(&v1beta1.Cluster{Spec: v1beta1.ClusterSpec{Topology: &v1beta1.Topology{Class: "c", Version: "v1.31.2",
		Workers: &v1beta1.WorkersTopology{MachineDeployments: []v1beta1.MachineDeploymentTopology{in}}}}})
	require.NoError(t, err)
	md := hub.Spec.Topology.Workers.MachineDeployments[0]
	assert.Equal(t, ptrTo(int32(1)), md.Deletion.NodeDrainTimeoutSeconds)
	assert.Equal(t, ptrTo(int32(0)), md.Deletion.NodeVolumeDetachTimeoutSeconds)
	assert.Nil(t, md.Deletion.NodeDeletionTimeoutSeconds)
	assert.Equal(t, ptrTo(int32(math.MaxInt32)), md.HealthCheck.Checks.NodeStartupTimeoutSeconds)
	assert.Equal(t, ptrTo(int32(300)), md.HealthCheck.Checks.UnhealthyNodeConditions[0].TimeoutSeconds)
}

// TestTypedClusterAndPoolsToHub: a v1beta1 boolean v1beta2 holds as a pointer is true or unset;
// references become contract references, which name a group; a MachineDeployment's v1beta1
// counters move to status.deprecated.v1beta1, its v1beta2 ones up.
func TestTypedClusterAndPoolsToHub(t *testing.T) {
	c := &v1beta1.Cluster{Spec: v1beta1.ClusterSpec{
		ControlPlaneRef: &corev1.ObjectReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlane", Name: "cp", Namespace: "ns"},
		Topology:        &v1beta1.Topology{Class: "quick-start", ClassNamespace: "classes", Version: "v1.31.2"},
	}, Status: v1beta1.ClusterStatus{ControlPlaneReady: true}}
	hub, err := ClusterToHub(c)
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta2", hub.APIVersion)
	assert.Nil(t, hub.Spec.Paused)
	assert.Equal(t, v1beta2.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "SimControlPlane", Name: "cp"}, hub.Spec.ControlPlaneRef)
	assert.False(t, hub.Spec.InfrastructureRef.IsDefined())
	assert.Equal(t, v1beta2.ClusterClassRef{Name: "quick-start", Namespace: "classes"}, hub.Spec.Topology.ClassRef)
	assert.Equal(t, v1beta2.ClusterInitializationStatus{ControlPlaneInitialized: ptrTo(true)}, hub.Status.Initialization)

	c.Spec.ControlPlaneRef.APIVersion = "a/b/c"
	_, err = ClusterToHub(c)
	assert.ErrorContains(t, err, "spec.controlPlaneRef", "as Cluster API's conversion refuses it")

	md := &v1beta1.MachineDeployment{Status: v1beta1.MachineDeploymentStatus{Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 3, UnavailableReplicas: 1,
		V1Beta2: &v1beta1.PoolV1Beta2Status{UpToDateReplicas: ptrTo(int32(2))}}}
	hubMD, err := MachineDeploymentToHub(md)
	require.NoError(t, err)
	assert.Equal(t, ptrTo(int32(3)), hubMD.Status.Replicas)
	assert.Nil(t, hubMD.Status.ReadyReplicas, "v1beta2's readyReplicas is another counter: from status.v1beta2 only")
	assert.Equal(t, ptrTo(int32(2)), hubMD.Status.UpToDateReplicas)
	assert.Equal(t, &v1beta2.MachineDeploymentV1Beta1DeprecatedStatus{UpdatedReplicas: 2, ReadyReplicas: 3, UnavailableReplicas: 1}, hubMD.Status.Deprecated.V1Beta1)
}

// TestTypedRoundTrip: the sample class and Cluster come back from the hub as they were.
func TestTypedRoundTrip(t *testing.T) {
	class, cluster := servedSample(t)
	cluster.Spec.InfrastructureRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimCluster", Name: "demo-abcde", Namespace: cluster.Namespace}

	hubClass, err := ClusterClassToHub(class)
	require.NoError(t, err)
	assert.Equal(t, class.Spec.Infrastructure.Ref.Name, hubClass.Spec.Infrastructure.TemplateRef.Name)
	backClass := &v1beta1.ClusterClass{}
	fromHub(t, hubClass, "ClusterClass", nil, backClass)
	assert.Equal(t, class.Spec, backClass.Spec)

	hubCluster, err := ClusterToHub(cluster)
	require.NoError(t, err)
	back := &v1beta1.Cluster{}
	fromHub(t, hubCluster, "Cluster", versions, back)
	assert.Equal(t, cluster.Spec, back.Spec)
	assert.Empty(t, back.Annotations[DataAnnotation], "no conversion data")
}

// fromHub reads a typed hub object back as a v1beta1 client does (ToV1Beta1), into out, without
// the conversion data.
func fromHub(t *testing.T, in any, kind string, versionOf APIVersionOf, out any) {
	t.Helper()
	u, err := typedObject(in, V1Beta2GroupVersion.String(), kind)
	require.NoError(t, err)
	served, err := ToV1Beta1(u, versionOf)
	require.NoError(t, err)
	dropData(served)
	require.NoError(t, decode(served.Object, out))
}

// TestTypedVariablesToHub: variable values and definitions convert as in their Cluster and
// ClusterClass: a value's definitionFrom is dropped, a definition's required becomes a pointer
// and its metadata moves to deprecatedV1Beta1Metadata; a value that is not JSON does not convert.
func TestTypedVariablesToHub(t *testing.T) {
	values := []v1beta1.ClusterVariable{
		{Name: "region", DefinitionFrom: "inline", Value: apiextensionsv1.JSON{Raw: []byte(`"west"`)}},
		{Name: "sizes", Value: apiextensionsv1.JSON{Raw: []byte(`{"a":1}`)}},
	}
	hub, err := ClusterVariablesToHub(values)
	require.NoError(t, err)
	assert.Equal(t, []v1beta2.ClusterVariable{
		{Name: "region", Value: apiextensionsv1.JSON{Raw: []byte(`"west"`)}},
		{Name: "sizes", Value: apiextensionsv1.JSON{Raw: []byte(`{"a":1}`)}},
	}, hub)
	hub, err = ClusterVariablesToHub(nil)
	require.NoError(t, err)
	assert.Nil(t, hub)
	values[1].Value.Raw = []byte(`{`)
	_, err = ClusterVariablesToHub(values)
	assert.Error(t, err)

	defs := []v1beta1.ClusterClassVariable{{Name: "region", Required: true,
		Metadata: v1beta1.ClusterClassVariableMetadata{Labels: map[string]string{"a": "b"}},
		Schema:   v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "string"}}}}
	hubDefs, err := ClusterClassVariablesToHub(defs)
	require.NoError(t, err)
	require.Len(t, hubDefs, 1)
	assert.Equal(t, ptrTo(true), hubDefs[0].Required)
	assert.Equal(t, v1beta2.ClusterClassVariableMetadata{Labels: map[string]string{"a": "b"}}, hubDefs[0].DeprecatedV1Beta1Metadata)
	assert.Equal(t, "string", hubDefs[0].Schema.OpenAPIV3Schema.Type)

	class, _ := servedSample(t)
	hubClass, err := ClusterClassToHub(class)
	require.NoError(t, err)
	hubDefs, err = ClusterClassVariablesToHub(class.Spec.Variables)
	require.NoError(t, err)
	assert.Equal(t, hubClass.Spec.Variables, hubDefs, "as in the class")
}

// TestTypedClusterClassVariablesToHub: v1beta1 variable definitions (a DiscoverVariables answer)
// convert as a class's spec.variables do: required a pointer, always set; the metadata under
// deprecatedV1Beta1Metadata; a schema flag true where it was true, unset where it was false.
func TestTypedClusterClassVariablesToHub(t *testing.T) {
	in := []v1beta1.ClusterClassVariable{
		{Name: "tag", Metadata: v1beta1.ClusterClassVariableMetadata{Labels: map[string]string{"team": "nodes"}},
			Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"v1"`)}}}},
		{Name: "cfg", Required: true, Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: true,
			Properties: map[string]v1beta1.JSONSchemaProps{"n": {Type: "integer", Minimum: ptrTo(int64(1))}}}}},
	}
	out, err := ClusterClassVariablesToHub(in)
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, "tag", out[0].Name)
	assert.Equal(t, ptrTo(false), out[0].Required)
	assert.Equal(t, v1beta2.ClusterClassVariableMetadata{Labels: map[string]string{"team": "nodes"}}, out[0].DeprecatedV1Beta1Metadata)
	assert.JSONEq(t, `"v1"`, string(out[0].Schema.OpenAPIV3Schema.Default.Raw))
	assert.Nil(t, out[0].Schema.OpenAPIV3Schema.XPreserveUnknownFields)
	assert.Equal(t, ptrTo(true), out[1].Required)
	assert.Equal(t, ptrTo(true), out[1].Schema.OpenAPIV3Schema.XPreserveUnknownFields)
	assert.Equal(t, ptrTo(int64(1)), out[1].Schema.OpenAPIV3Schema.Properties["n"].Minimum)

	class, err := ClusterClassToHub(&v1beta1.ClusterClass{Spec: v1beta1.ClusterClassSpec{Variables: in}})
	require.NoError(t, err)
	assert.Equal(t, class.Spec.Variables, out, "as the class's own")

	none, err := ClusterClassVariablesToHub(nil)
	require.NoError(t, err)
	assert.Nil(t, none)
}
