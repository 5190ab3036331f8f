//go:build v1beta2

// Package v1beta2 runs topoflow on a stack whose Cluster and ClusterClass CRDs store v1beta2, as
// Cluster API v1.11+ does, converted by topoflow's own webhook (deploy/crds-v1beta2; TOPOFLOW_CRDS=
// v1beta2 deploy/stack/run.sh, which also applies the sample class). tests/v1beta2.sh runs it.
package v1beta2

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/tests/stacktest"
)

var (
	clustersV1Beta2 = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
	classesV1Beta2  = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusterclasses"}
	simCPs          = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Resource: "simcontrolplanes"}
)

// TestLifecycleOnV1Beta2Storage: a Cluster written as v1beta2 is created, upgraded by a v1beta2
// edit and deleted by topoflow (which reads and writes v1beta1 through its conversion webhook);
// what only v1beta2 can say (an explicit paused: false) survives topoflow's v1beta1 writes; each
// version reads in its own shape; a two-minor jump written as v1beta2 is refused at admission.
func TestLifecycleOnV1Beta2Storage(t *testing.T) {
	k := stacktest.Client(t, "tests/v1beta2.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	for _, name := range []string{"clusters.cluster.x-k8s.io", "clusterclasses.cluster.x-k8s.io"} {
		crd, err := k.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
		assert.Equal(t, []string{"v1beta2"}, stored, "%s stores v1beta2", name)
		url, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "url")
		assert.True(t, strings.HasSuffix(url, "/convert"), "%s is converted by topoflow's webhook (clientConfig.url %q)", name, url)
	}

	name := "v2-" + strings.ToLower(rand.String(5))
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
				"services": map[string]any{"cidrBlocks": []any{"10.128.0.0/12"}}, "serviceDomain": "cluster.local"},
			"paused": false,
			"topology": map[string]any{
				"classRef": map[string]any{"name": "quick-start"}, "version": "v1.31.2",
				"controlPlane": map[string]any{"replicas": int64(1)},
				"workers": map[string]any{"machineDeployments": []any{
					map[string]any{"class": "default-worker", "name": "md-0", "replicas": int64(1)}}},
				"variables": []any{map[string]any{"name": "region", "value": "sim-west-2"}},
			},
		},
	}}
	_, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Create(ctx, cluster, metav1.CreateOptions{FieldManager: "kubectl"})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	})

	read := func(gvr schema.GroupVersionResource) *unstructured.Unstructured {
		u, err := k.Dynamic.Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	settled := func(version string) func() (bool, string) {
		return func() (bool, string) {
			c := read(clustersV1Beta2)
			phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
			cp, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
			// Provisioned comes with the infrastructure and the endpoint; the control plane's
			// initialization can follow a moment later.
			initialized, _, _ := unstructured.NestedBool(c.Object, "status", "initialization", "controlPlaneInitialized")
			if phase != "Provisioned" || cp == "" || !initialized {
				return false, fmt.Sprintf("phase=%q controlPlaneRef=%q controlPlaneInitialized=%v", phase, cp, initialized)
			}
			sc, err := k.Dynamic.Resource(simCPs).Namespace("default").Get(ctx, cp, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			v, _, _ := unstructured.NestedString(sc.Object, "spec", "version")
			return v == version, "control plane at " + v
		}
	}
	stacktest.WaitFor(t, 2*time.Minute, "the Cluster Provisioned at v1.31.2", settled("v1.31.2"))

	hub := read(clustersV1Beta2)
	paused, found, _ := unstructured.NestedBool(hub.Object, "spec", "paused")
	assert.True(t, found && !paused, "paused: false written as v1beta2 survives topoflow's v1beta1 writes (the conversion data)")
	class, _, _ := unstructured.NestedString(hub.Object, "spec", "topology", "classRef", "name")
	assert.Equal(t, "quick-start", class)
	group, _, _ := unstructured.NestedString(hub.Object, "spec", "infrastructureRef", "apiGroup")
	assert.Equal(t, "infrastructure.cluster.x-k8s.io", group)
	assert.NotContains(t, hub.GetAnnotations(), conversion.DataAnnotation, "v1beta2 carries no conversion data")

	spoke := read(kube.Clusters)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", spoke.GetAPIVersion())
	class, _, _ = unstructured.NestedString(spoke.Object, "spec", "topology", "class")
	assert.Equal(t, "quick-start", class)
	apiVersion, _, _ := unstructured.NestedString(spoke.Object, "spec", "infrastructureRef", "apiVersion")
	assert.Equal(t, "infrastructure.cluster.x-k8s.io/v1beta1", apiVersion)
	ready, _, _ := unstructured.NestedBool(spoke.Object, "status", "controlPlaneReady")
	assert.True(t, ready, "v1beta2's status.initialization.controlPlaneInitialized reads as v1beta1's controlPlaneReady")

	cc, err := k.Dynamic.Resource(classesV1Beta2).Namespace("default").Get(ctx, "quick-start", metav1.GetOptions{})
	require.NoError(t, err)
	tmpl, _, _ := unstructured.NestedString(cc.Object, "spec", "infrastructure", "templateRef", "name")
	assert.Equal(t, "quick-start-cluster", tmpl, "the ClusterClass reads as v1beta2")

	_, err = k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.33.0"}}}`), metav1.PatchOptions{FieldManager: "kubectl"})
	require.Error(t, err, "a two-minor jump written as v1beta2 is refused")
	assert.Contains(t, err.Error(), "spec.topology.version")

	_, err = k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Patch(ctx, name, types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.32.0"}}}`), metav1.PatchOptions{FieldManager: "kubectl"})
	require.NoError(t, err)
	stacktest.WaitFor(t, 2*time.Minute, "the control plane at v1.32.0", settled("v1.32.0"))

	require.NoError(t, k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Delete(ctx, name, metav1.DeleteOptions{}))
	stacktest.WaitFor(t, 2*time.Minute, "the Cluster gone", func() (bool, string) {
		_, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if kube.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprint("still there: ", err)
	})
}
