package conversion

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/v1beta1"
)

// versions answers the reference versions the samples use, as a provider CRD's contract label would.
func versions(group, kind string) (string, error) {
	switch group {
	case "infrastructure.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io":
		return "v1beta1", nil
	}
	return "", fmt.Errorf("no CRD for %s %s", kind, group)
}

func sampleJSON(t *testing.T, kind string) []byte {
	t.Helper()
	class, cluster := servedSample(t)
	var obj any = class
	if kind == "Cluster" {
		cluster.Spec.InfrastructureRef = provisioned(t).Spec.InfrastructureRef
		cluster.Spec.ControlPlaneRef = provisioned(t).Spec.ControlPlaneRef
		obj = cluster
	}
	js, err := json.Marshal(obj)
	require.NoError(t, err)
	return js
}

// servedSample is the sample (deploy/samples) with the class's references in the class's
// namespace, as Cluster API's v1beta1 ClusterClass webhook defaulted them and as v1beta1 serves
// them (validation.DefaultClusterClassV1Beta1, which the tests here cannot call: package
// validation converts through this one). A reference is an object of the class's spec that names
// a kind and a name.
func servedSample(tb testing.TB) (*v1beta1.ClusterClass, *v1beta1.Cluster) {
	tb.Helper()
	class, cluster, err := samples.Typed()
	require.NoError(tb, err)
	spec, err := toMap(&class.Spec)
	require.NoError(tb, err)
	inNamespace(spec, class.Namespace)
	class.Spec = v1beta1.ClusterClassSpec{}
	require.NoError(tb, decode(spec, &class.Spec))
	return class, cluster
}

// inNamespace sets ns as the namespace of every reference in obj that has none.
func inNamespace(obj any, ns string) {
	switch o := obj.(type) {
	case map[string]any:
		_, kind := o["kind"].(string)
		_, name := o["name"].(string)
		if _, set := o["namespace"]; kind && name && !set {
			o["namespace"] = ns
		}
		for _, v := range o {
			inNamespace(v, ns)
		}
	case []any:
		for _, v := range o {
			inNamespace(v, ns)
		}
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	require.NoError(t, err)
	return js
}

// withoutData drops the conversion data, which only the trip through v1beta1 adds.
func withoutData(m map[string]any) map[string]any {
	u := &unstructured.Unstructured{Object: m}
	a := u.GetAnnotations()
	delete(a, DataAnnotation)
	if len(a) == 0 {
		unstructured.RemoveNestedField(m, "metadata", "annotations")
	} else {
		u.SetAnnotations(a)
	}
	return m
}

func plain(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, utiljson.Unmarshal(js, &m)) // whole numbers as int64, as toMap gives them
	return m
}

// unset is a v1beta1 object as written by hand: without what v1beta1's Go types write when nothing
// is set (an empty controlPlaneEndpoint, false status booleans, empty objects), which v1beta2
// cannot hold either and its conversion leaves out.
func unset(m map[string]any) map[string]any {
	if ep, _, _ := unstructured.NestedMap(m, "spec", "controlPlaneEndpoint"); ep["host"] == "" && ep["port"] == int64(0) {
		unstructured.RemoveNestedField(m, "spec", "controlPlaneEndpoint")
	}
	for _, f := range []string{"infrastructureReady", "controlPlaneReady"} {
		if v, found, _ := unstructured.NestedBool(m, "status", f); found && !v {
			unstructured.RemoveNestedField(m, "status", f)
		}
	}
	var prune func(v any) bool
	prune = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if prune(c) {
					delete(x, k)
				}
			}
			return len(x) == 0
		case []any:
			for _, c := range x {
				prune(c)
			}
		}
		return false
	}
	for _, k := range []string{"spec", "status"} {
		if prune(m[k]) {
			delete(m, k)
		}
	}
	return m
}

// v1beta1 -> v1beta2 -> v1beta1 gives back the sample, as written (the conversion data aside).
func TestRoundTripFromV1Beta1(t *testing.T) {
	t.Run("Cluster", func(t *testing.T) {
		in := sampleJSON(t, "Cluster")
		hub, err := ClusterV1Beta2(in)
		require.NoError(t, err)
		back, err := ClusterV1Beta1(mustMarshal(t, hub), versions)
		require.NoError(t, err)
		want := unset(plain(t, in))
		want["apiVersion"], want["kind"] = "cluster.x-k8s.io/v1beta1", "Cluster"
		assert.Equal(t, want, withoutData(back))
	})
	t.Run("ClusterClass", func(t *testing.T) {
		in := sampleJSON(t, "ClusterClass")
		hub, err := ClusterClassV1Beta2(in)
		require.NoError(t, err)
		assert.Equal(t, "cluster.x-k8s.io/v1beta2", hub["apiVersion"])
		_, found, _ := unstructured.NestedMap(hub, "spec", "infrastructure", "templateRef")
		assert.True(t, found, "v1beta2 names templates under templateRef")
		back, err := ClusterClassV1Beta1(mustMarshal(t, hub))
		require.NoError(t, err)
		want := unset(plain(t, in))
		want["apiVersion"], want["kind"] = "cluster.x-k8s.io/v1beta1", "ClusterClass"
		assert.Equal(t, want, withoutData(back))
	})
}

// v1beta2 -> v1beta1 -> v1beta2 loses nothing, even what v1beta1 cannot say: a false written
// explicitly where v1beta2 holds a pointer (Cluster API's conversion data brings it back).
func TestRoundTripFromV1Beta2(t *testing.T) {
	t.Run("Cluster", func(t *testing.T) {
		hub, err := ClusterV1Beta2(sampleJSON(t, "Cluster"))
		require.NoError(t, err)
		require.NoError(t, unstructured.SetNestedField(hub, false, "spec", "paused"))
		require.NoError(t, unstructured.SetNestedField(hub, false, "status", "initialization", "infrastructureProvisioned"))
		require.NoError(t, unstructured.SetNestedField(hub, true, "status", "initialization", "controlPlaneInitialized"))
		spoke, err := ClusterV1Beta1(mustMarshal(t, hub), versions)
		require.NoError(t, err)
		assert.Equal(t, "infrastructure.cluster.x-k8s.io/v1beta1", spoke["spec"].(map[string]any)["infrastructureRef"].(map[string]any)["apiVersion"])
		paused, _, _ := unstructured.NestedBool(spoke, "spec", "paused")
		assert.False(t, paused, "v1beta1 cannot tell an explicit false from none")
		back, err := ClusterV1Beta2(mustMarshal(t, spoke))
		require.NoError(t, err)
		assert.Equal(t, hub, back)

		// Without the conversion data a false is not known to be intended: it is left unset.
		delete(spoke["metadata"].(map[string]any), "annotations")
		lossy, err := ClusterV1Beta2(mustMarshal(t, spoke))
		require.NoError(t, err)
		_, found, _ := unstructured.NestedFieldNoCopy(lossy, "spec", "paused")
		assert.False(t, found)
	})
	t.Run("ClusterClass", func(t *testing.T) {
		hub, err := ClusterClassV1Beta2(sampleJSON(t, "ClusterClass"))
		require.NoError(t, err)
		patches, _, _ := unstructured.NestedSlice(hub, "spec", "patches")
		require.NotEmpty(t, patches)
		defs := patches[0].(map[string]any)["definitions"].([]any)
		sel := defs[0].(map[string]any)["selector"].(map[string]any)
		sel["matchResources"].(map[string]any)["controlPlane"] = false
		vars, _, _ := unstructured.NestedSlice(hub, "spec", "variables")
		require.NotEmpty(t, vars)
		schema := vars[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)
		schema["x-kubernetes-preserve-unknown-fields"] = false
		require.NoError(t, unstructured.SetNestedSlice(hub, patches, "spec", "patches"))
		require.NoError(t, unstructured.SetNestedSlice(hub, vars, "spec", "variables"))

		spoke, err := ClusterClassV1Beta1(mustMarshal(t, hub))
		require.NoError(t, err)
		back, err := ClusterClassV1Beta2(mustMarshal(t, spoke))
		require.NoError(t, err)
		assert.Equal(t, hub, back)
	})
}

func TestClusterV1Beta1NeedsReferenceVersions(t *testing.T) {
	hub, err := ClusterV1Beta2(sampleJSON(t, "Cluster"))
	require.NoError(t, err)
	_, err = ClusterV1Beta1(mustMarshal(t, hub), func(group, kind string) (string, error) {
		return "", fmt.Errorf("no CRD for %s %s", kind, group)
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.infrastructureRef: no CRD for SimCluster infrastructure.cluster.x-k8s.io")
}

// TestWholeNumbersAreInt64: converted objects read like objects from the API server: generation
// and replicas are int64, so unstructured's accessors see them (a float64 reads as absent).
func TestWholeNumbersAreInt64(t *testing.T) {
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster",`+
		`"metadata":{"name":"c","namespace":"ns","generation":4},"spec":{"topology":{"classRef":{"name":"x"},"version":"v1.31.2","controlPlane":{"replicas":3}}}}`)))
	got, err := ToV1Beta1(u, nil)
	require.NoError(t, err)
	assert.EqualValues(t, 4, got.GetGeneration())
	replicas, found, err := unstructured.NestedInt64(got.Object, "spec", "topology", "controlPlane", "replicas")
	require.NoError(t, err)
	assert.True(t, found)
	assert.EqualValues(t, 3, replicas)
	back, _, err := ToV1Beta2(got)
	require.NoError(t, err)
	assert.EqualValues(t, 4, back.GetGeneration())
}
