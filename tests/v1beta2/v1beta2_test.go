//go:build v1beta2

// Package v1beta2 runs topoflow on a stack whose Cluster and ClusterClass CRDs store v1beta2, as
// Cluster API v1.11+ does, converted by topoflow's own webhook (deploy/crds-v1beta2; TOPOFLOW_CRDS=
// v1beta2 deploy/stack/run.sh, which also applies the sample class). tests/v1beta2.sh runs it.
package v1beta2

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
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
	"k8s.io/client-go/util/jsonpath"

	"github.com/topoflow/topoflow/internal/kube"
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

	spoke := read(kube.V1Beta1Clusters)
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

// TestClusterV1Beta2Status: on the default stack (no Cluster API core: topoflow's Cluster
// controller role writes the Cluster's status), a v1beta2 client sees a Provisioned Cluster's
// status.conditions (Available and the conditions it summarizes all True, the simulated
// MachineDeployments and control plane reporting as Cluster API v1.14's controllers do) and its
// control plane and worker replica counters equal to the topology's; a change of the topology's
// replicas alone moves the counters. The v1beta2 printer columns show them, to kubectl (`kubectl
// get clusters`, which prefers v1beta2) as evaluated from the CRD.
func TestClusterV1Beta2Status(t *testing.T) {
	k := stacktest.Client(t, "tests/v1beta2.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	name := "v2s-" + strings.ToLower(rand.String(5))
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
				"services": map[string]any{"cidrBlocks": []any{"10.128.0.0/12"}}, "serviceDomain": "cluster.local"},
			"topology": map[string]any{
				"classRef": map[string]any{"name": "quick-start"}, "version": "v1.31.2",
				"controlPlane": map[string]any{"replicas": int64(1)},
				"workers": map[string]any{"machineDeployments": []any{
					map[string]any{"class": "default-worker", "name": "md-0", "replicas": int64(2)},
					map[string]any{"class": "default-worker", "name": "md-1", "replicas": int64(1)}}},
				"variables": []any{map[string]any{"name": "region", "value": "sim-west-2"}},
			},
		},
	}}
	clusters := k.Dynamic.Resource(clustersV1Beta2).Namespace("default")
	_, err := clusters.Create(ctx, cluster, metav1.CreateOptions{FieldManager: "kubectl"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = clusters.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	read := func() *unstructured.Unstructured {
		u, err := clusters.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return u
	}
	// available waits for the Cluster, read as v1beta2, Provisioned and Available with counters cp
	// and workers (desired, available and up to date alike).
	available := func(cp, workers int64) func() (bool, string) {
		return func() (bool, string) {
			c := read()
			var why []string
			if phase, _, _ := unstructured.NestedString(c.Object, "status", "phase"); phase != "Provisioned" {
				why = append(why, fmt.Sprintf("phase %q", phase))
			}
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, t := range []string{"Available", "InfrastructureReady", "ControlPlaneInitialized", "ControlPlaneAvailable",
				"WorkersAvailable", "TopologyReconciled"} {
				if st, reason := conditionOf(conds, t); st != "True" {
					why = append(why, fmt.Sprintf("%s=%s (%s)", t, st, reason))
				}
			}
			for part, want := range map[string]int64{"controlPlane": cp, "workers": workers} {
				for _, f := range []string{"desiredReplicas", "availableReplicas", "upToDateReplicas"} {
					if n, found, _ := unstructured.NestedInt64(c.Object, "status", part, f); !found || n != want {
						why = append(why, fmt.Sprintf("%s.%s=%v (found %v), want %d", part, f, n, found, want))
					}
				}
			}
			return len(why) == 0, strings.Join(why, "; ")
		}
	}
	stacktest.WaitFor(t, 2*time.Minute, "the Cluster Provisioned and Available, 1 control plane and 3 worker replicas", available(1, 3))

	c := read()
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
	_, reason := conditionOf(conds, "WorkersAvailable")
	assert.Equal(t, "Available", reason, "the MachineDeployments' Available conditions aggregated")
	_, reason = conditionOf(conds, "ControlPlaneAvailable")
	assert.Equal(t, "Available", reason, "the control plane's Available condition mirrored")
	versions, _, _ := unstructured.NestedSlice(c.Object, "status", "controlPlane", "versions")
	assert.Equal(t, []any{map[string]any{"version": "v1.31.2", "replicas": int64(1)}}, versions, "the control plane's status.versions")
	checkColumns(t, k, name, map[string]string{"Available": "True", "CP Desired": "1", "CP Available": "1", "CP Up-to-date": "1",
		"W Desired": "3", "W Available": "3", "W Up-to-date": "3", "Phase": "Provisioned"})

	// Only replicas change: the control plane scales up, a MachineDeployment down.
	_, err = clusters.Patch(ctx, name, types.JSONPatchType, []byte(`[
		{"op":"replace","path":"/spec/topology/controlPlane/replicas","value":3},
		{"op":"replace","path":"/spec/topology/workers/machineDeployments/0/replicas","value":1}]`),
		metav1.PatchOptions{FieldManager: "kubectl"})
	require.NoError(t, err)
	stacktest.WaitFor(t, 2*time.Minute, "the counters at 3 control plane and 2 worker replicas", available(3, 2))
	checkColumns(t, k, name, map[string]string{"Available": "True", "CP Desired": "3", "CP Available": "3", "CP Up-to-date": "3",
		"W Desired": "2", "W Available": "2", "W Up-to-date": "2"})
}

// conditionOf is the status and reason of the condition of type t in a v1beta2 conditions list.
func conditionOf(conds []any, t string) (status, reason string) {
	for _, item := range conds {
		if m, _ := item.(map[string]any); m["type"] == t {
			status, _ = m["status"].(string)
			reason, _ = m["reason"].(string)
			return status, reason
		}
	}
	return "(none)", ""
}

// checkColumns checks the Cluster's v1beta2 printer columns: evaluated from the CRD's
// additionalPrinterColumns against the object read as v1beta2, and, when the stack script names
// its kubectl ($KUBECTL), as `kubectl get clusters -o wide` prints them.
func checkColumns(t *testing.T, k *kube.Client, name string, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	crd, err := k.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, "clusters.cluster.x-k8s.io", metav1.GetOptions{})
	require.NoError(t, err)
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var columns []any
	for _, v := range versions {
		if m, _ := v.(map[string]any); m["name"] == "v1beta2" {
			columns, _ = m["additionalPrinterColumns"].([]any)
		}
	}
	require.NotEmpty(t, columns, "the v1beta2 version has printer columns")
	obj, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	got := map[string]string{}
	for _, col := range columns {
		m, _ := col.(map[string]any)
		colName, _ := m["name"].(string)
		path, _ := m["jsonPath"].(string)
		jp := jsonpath.New(colName).AllowMissingKeys(true)
		require.NoError(t, jp.Parse("{"+path+"}"), "column %s", colName)
		var buf bytes.Buffer
		require.NoError(t, jp.Execute(&buf, obj.Object), "column %s", colName)
		got[colName] = buf.String()
	}
	for col, v := range want {
		assert.Equal(t, v, got[col], "printer column %s (CRD jsonPath)", col)
	}

	kubectl := os.Getenv("KUBECTL")
	if kubectl == "" {
		t.Log("no $KUBECTL: kubectl's columns not checked")
		return
	}
	out, err := exec.CommandContext(ctx, kubectl, "get", "clusters", name, "-n", "default", "-o", "wide").CombinedOutput()
	require.NoError(t, err, "kubectl get clusters: %s", out)
	printed := kubectlColumns(t, string(out))
	for col, v := range want {
		assert.Equal(t, v, printed[strings.ToUpper(col)], "kubectl get clusters column %s:\n%s", col, out)
	}
}

// kubectlColumns reads kubectl's one-row table: each column's value starts where its header does.
func kubectlColumns(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 2, "kubectl printed one Cluster:\n%s", out)
	header, row := lines[0], lines[1]
	// Headers are separated by at least two spaces (a header may hold one: "CP DESIRED").
	starts := regexp.MustCompile(`\S+( \S+)*`).FindAllStringIndex(header, -1)
	cols := map[string]string{}
	for _, s := range starts {
		v := ""
		if s[0] < len(row) && row[s[0]] != ' ' {
			v = strings.Fields(row[s[0]:])[0]
		}
		cols[header[s[0]:s[1]]] = v
	}
	return cols
}
