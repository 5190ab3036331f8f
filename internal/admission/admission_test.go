package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/model/upgrade"
)

// fakeReads answers the webhooks' reads from pure inputs.
type fakeReads struct {
	cluster  *clusterv1.Cluster
	class    *clusterv1.ClusterClass
	running  upgrade.Input
	clusters []clusterv1.Cluster
	strategy *rolloutv1.RolloutStrategy
}

func (f *fakeReads) ClassOf(context.Context, *clusterv1.Cluster) (*clusterv1.ClusterClass, error) {
	return f.class, nil
}
func (f *fakeReads) RunningState(context.Context, *clusterv1.Cluster, *clusterv1.ClusterClass) (upgrade.Input, error) {
	return f.running, nil
}
func (f *fakeReads) ClusterNamed(context.Context, string, string) (*clusterv1.Cluster, error) {
	return f.cluster, nil
}
func (f *fakeReads) ClustersUsing(context.Context, *clusterv1.ClusterClass) ([]clusterv1.Cluster, error) {
	return f.clusters, nil
}
func (f *fakeReads) ClustersMatching(context.Context, []string, *metav1.LabelSelector) ([]clusterv1.Cluster, error) {
	return f.clusters, nil
}
func (f *fakeReads) ClassExists(_ context.Context, _, name string) (bool, error) {
	return f.class != nil && f.class.Name == name, nil
}

func (f *fakeReads) ResolveStrategy(_ context.Context, _ string, spec rolloutv1.RolloutSpec) (rollout.Resolved, error) {
	if f.strategy == nil || spec.StrategyRef == nil || f.strategy.Name != spec.StrategyRef.Name {
		return rollout.Resolved{Spec: spec, Invalid: "not found"}, nil
	}
	return rollout.Resolved{Spec: rollout.Resolve(spec, &f.strategy.Spec)}, nil
}

// sample reads the sample class and Cluster as raw JSON and typed.
func sample(t *testing.T) (*clusterv1.ClusterClass, map[string]any) {
	t.Helper()
	class, typed, err := samples.Typed()
	require.NoError(t, err)
	js, err := json.Marshal(typed)
	require.NoError(t, err)
	var cluster map[string]any
	require.NoError(t, json.Unmarshal(js, &cluster))
	return class, cluster
}

// call posts one AdmissionReview to path and returns the response.
func call(t *testing.T, s *Server, path string, op admissionv1.Operation, obj, old any) *admissionv1.AdmissionResponse {
	t.Helper()
	raw := func(v any) runtime.RawExtension {
		if v == nil {
			return runtime.RawExtension{}
		}
		js, err := json.Marshal(v)
		require.NoError(t, err)
		return runtime.RawExtension{Raw: js}
	}
	in := admissionv1.AdmissionReview{Request: &admissionv1.AdmissionRequest{UID: types.UID("u-1"), Operation: op, Object: raw(obj), OldObject: raw(old)}}
	body, err := json.Marshal(in)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.Equal(t, types.UID("u-1"), out.Response.UID, "the answer carries the request's UID")
	return out.Response
}

func withVersion(obj map[string]any, v string) map[string]any {
	js, _ := json.Marshal(obj)
	var out map[string]any
	_ = json.Unmarshal(js, &out)
	out["spec"].(map[string]any)["topology"].(map[string]any)["version"] = v
	return out
}

// TestMutateCluster: the patch adds the "v", the class's variable defaults and nothing else of
// what the Cluster says; applying it gives the defaulted Cluster, and a second pass has no patch.
func TestMutateCluster(t *testing.T) {
	class, cluster := sample(t)
	cluster["spec"].(map[string]any)["futureField"] = map[string]any{"kept": true}
	s := &Server{Reads: &fakeReads{class: class}}
	obj := withVersion(cluster, "1.31.2")
	resp := call(t, s, PathMutateCluster, admissionv1.Create, obj, nil)
	require.True(t, resp.Allowed)
	require.NotNil(t, resp.PatchType)
	p, err := jsonpatch.DecodePatch(resp.Patch)
	require.NoError(t, err)
	js, _ := json.Marshal(obj)
	out, err := p.Apply(js)
	require.NoError(t, err)
	var got clusterv1.Cluster
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, "v1.31.2", got.Spec.Topology.Version)
	names := []string{}
	for _, v := range got.Spec.Topology.Variables {
		names = append(names, v.Name)
	}
	assert.ElementsMatch(t, []string{"region", "imageRepository", "workerInstanceType"}, names)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(out, &raw))
	assert.Equal(t, map[string]any{"kept": true}, raw["spec"].(map[string]any)["futureField"], "a field topoflow does not know is kept")

	again := call(t, s, PathMutateCluster, admissionv1.Update, raw, raw)
	assert.True(t, again.Allowed)
	assert.Empty(t, string(again.Patch), "defaulting a defaulted Cluster changes nothing")
}

// TestClusterWithoutVersion: a Cluster whose topology has no version (what server-side apply
// leaves when the only manager of the version stops naming it) is not given the version "v":
// defaulting patches none in, and validation says the version is required.
func TestClusterWithoutVersion(t *testing.T) {
	class, cluster := sample(t)
	s := &Server{Reads: &fakeReads{class: class}}
	obj := withVersion(cluster, "")
	delete(obj["spec"].(map[string]any)["topology"].(map[string]any), "version")

	resp := call(t, s, PathMutateCluster, admissionv1.Update, obj, withVersion(cluster, "v1.31.2"))
	require.True(t, resp.Allowed, "%v", resp.Result)
	defaulted, _ := json.Marshal(obj)
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		require.NoError(t, err)
		defaulted, err = p.Apply(defaulted)
		require.NoError(t, err)
	}
	var got clusterv1.Cluster
	require.NoError(t, json.Unmarshal(defaulted, &got))
	assert.Empty(t, got.Spec.Topology.Version, "no version made up")

	var raw map[string]any
	require.NoError(t, json.Unmarshal(defaulted, &raw))
	resp = call(t, s, PathValidateCluster, admissionv1.Update, raw, withVersion(cluster, "v1.31.2"))
	require.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "spec.topology.version: Required value")
	assert.NotContains(t, resp.Result.Message, `"v"`)
}

// TestValidateCluster: Cluster API's rules with the old object; an absent class warns on create
// and refuses on update.
func TestValidateCluster(t *testing.T) {
	class, cluster := sample(t)
	reads := &fakeReads{class: class}
	s := &Server{Reads: reads}
	old := withVersion(cluster, "v1.31.2")

	resp := call(t, s, PathValidateCluster, admissionv1.Create, old, nil)
	assert.True(t, resp.Allowed, "%v", resp.Result)

	resp = call(t, s, PathValidateCluster, admissionv1.Update, withVersion(cluster, "v1.33.0"), old)
	require.False(t, resp.Allowed)
	assert.EqualValues(t, 422, resp.Result.Code)
	assert.Contains(t, resp.Result.Message, `spec.topology.version: Invalid value: "v1.33.0": version can be increased by at most one minor`)

	// A version change while the control plane still rolls out the old one.
	reads.running = upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.9"}}
	resp = call(t, s, PathValidateCluster, admissionv1.Update, withVersion(cluster, "v1.32.0"), old)
	require.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "control plane is still completing a previous upgrade")
	reads.running = upgrade.Input{}

	reads.class = nil
	resp = call(t, s, PathValidateCluster, admissionv1.Create, old, nil)
	assert.True(t, resp.Allowed)
	require.Len(t, resp.Warnings, 1)
	assert.Contains(t, resp.Warnings[0], "this ClusterClass does not exist")
	resp = call(t, s, PathValidateCluster, admissionv1.Update, old, old)
	require.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `spec.topology.class: Invalid value: "quick-start": ClusterClass default/quick-start not found`)
}

// TestValidateClusterClass: a class in use cannot be deleted (Cluster API's message); one not in
// use can; a pool class in use cannot be removed.
func TestValidateClusterClass(t *testing.T) {
	class, _ := sample(t)
	inUse := clusterv1.Cluster{}
	inUse.Namespace, inUse.Name = "default", "demo"
	inUse.Spec.Topology = &clusterv1.Topology{Class: "quick-start", Version: "v1.31.2", Workers: &clusterv1.WorkersTopology{
		MachineDeployments: []clusterv1.MachineDeploymentTopology{{Name: "md-0", Class: "default-worker"}}}}
	reads := &fakeReads{clusters: []clusterv1.Cluster{inUse}}
	s := &Server{Reads: reads}

	resp := call(t, s, PathValidateClusterClass, admissionv1.Delete, nil, class)
	require.False(t, resp.Allowed)
	assert.EqualValues(t, 403, resp.Result.Code)
	assert.Contains(t, resp.Result.Message, "ClusterClass cannot be deleted because it is used by Cluster(s): default/demo")

	changed := class.DeepCopy()
	changed.Spec.Workers.MachineDeployments = nil
	resp = call(t, s, PathValidateClusterClass, admissionv1.Update, changed, class)
	require.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, "spec.workers.machineDeployments")

	reads.clusters = nil
	assert.True(t, call(t, s, PathValidateClusterClass, admissionv1.Delete, nil, class).Allowed)
	assert.True(t, call(t, s, PathValidateClusterClass, admissionv1.Create, class, nil).Allowed)
}

// TestDiff: changed leaves are replaced, new keys added, empty lists dropped, unknown kept.
func TestDiff(t *testing.T) {
	have := map[string]any{"a": "1", "b": []any{}, "c": map[string]any{"x/y": 1.0}, "unknown": "u"}
	want := map[string]any{"a": "2", "c": map[string]any{"x/y": 2.0}, "d": true}
	assert.Equal(t, []op{
		{Op: "replace", Path: "/spec/a", Value: "2"},
		{Op: "replace", Path: "/spec/c/x~1y", Value: 2.0},
		{Op: "add", Path: "/spec/d", Value: true},
		{Op: "remove", Path: "/spec/b"},
	}, diff("/spec", have, want, nil, false))

	// Leaving out empty values: a new key holding nothing is not added; a change still is.
	want["e"] = map[string]any{"metadata": map[string]any{}, "f": ""}
	want["a"] = ""
	assert.Equal(t, []op{
		{Op: "replace", Path: "/spec/a", Value: ""},
		{Op: "replace", Path: "/spec/c/x~1y", Value: 2.0},
		{Op: "add", Path: "/spec/d", Value: true},
		{Op: "remove", Path: "/spec/b"},
	}, diff("/spec", have, want, nil, true))
}

// TestMutateClusterAsConverted: a defaulted Cluster as the conversion from v1beta2 serves it as
// v1beta1 (without the empty fields Cluster API's v1beta1 types write, such as
// spec.topology.controlPlane.metadata: {}) gets no patch: a v1beta1 write that changes nothing
// changes nothing (no new generation).
func TestMutateClusterAsConverted(t *testing.T) {
	class, cluster := sample(t)
	s := &Server{Reads: &fakeReads{class: class}}
	resp := call(t, s, PathMutateCluster, admissionv1.Create, cluster, nil)
	require.True(t, resp.Allowed)
	defaulted, _ := json.Marshal(cluster)
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		require.NoError(t, err)
		defaulted, err = p.Apply(defaulted)
		require.NoError(t, err)
	}
	hub, err := conversion.ClusterV1Beta2(defaulted)
	require.NoError(t, err)
	hubJSON, _ := json.Marshal(hub)
	served, err := conversion.ClusterV1Beta1(hubJSON, func(string, string) (string, error) { return "v1beta1", nil })
	require.NoError(t, err)
	topo := served["spec"].(map[string]any)["topology"].(map[string]any)
	md1 := topo["workers"].(map[string]any)["machineDeployments"].([]any)[1].(map[string]any)
	require.NotContains(t, md1, "metadata", "the conversion serves no empty metadata (md-1 has none)")
	resp = call(t, s, PathMutateCluster, admissionv1.Update, served, served)
	require.True(t, resp.Allowed)
	assert.Empty(t, string(resp.Patch), "nothing to default")
}

// TestDeployedConfigurations: deploy/webhook/webhooks.yaml registers exactly what
// Configurations makes for the in-cluster Service (its CA annotations aside).
func TestDeployedConfigurations(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "webhook", "webhooks.yaml"))
	require.NoError(t, err)
	docs, err := decode.Documents(bytes.NewReader(data))
	require.NoError(t, err)
	m, v := Configurations(admissionregv1.WebhookClientConfig{Service: &admissionregv1.ServiceReference{Namespace: "topoflow-system", Name: "topoflow-webhook"}}, nil, "")
	var seen int
	for _, d := range docs {
		d.SetAnnotations(nil)
		switch d.GetKind() {
		case "MutatingWebhookConfiguration":
			got := &admissionregv1.MutatingWebhookConfiguration{}
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, got))
			assert.Equal(t, m, got)
			seen++
		case "ValidatingWebhookConfiguration":
			got := &admissionregv1.ValidatingWebhookConfiguration{}
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(d.Object, got))
			assert.Equal(t, v, got)
			seen++
		}
	}
	assert.Equal(t, 2, seen)
}

// TestHoldTopologyDelete: deleting an object of a Cluster's topology is refused while the Cluster
// is being deleted and BeforeClusterDelete has not passed (topology.DeleteHeld), with a message
// naming the Cluster and the hook; otherwise it is allowed.
func TestHoldTopologyDelete(t *testing.T) {
	now := metav1.Now()
	kcp := map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
		"metadata": map[string]any{"name": "demo-cp", "namespace": "default", "labels": map[string]any{labels.ClusterName: "demo", labels.TopologyOwned: ""}}}
	cluster := func(deleting, okToDelete bool) *clusterv1.Cluster {
		c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "default"},
			Spec: clusterv1.ClusterSpec{Topology: &clusterv1.Topology{Class: "c", Version: "v1.31.0"}}}
		if deleting {
			c.DeletionTimestamp = &now
		}
		if okToDelete {
			c.Annotations = map[string]string{runtimev1.OkToDeleteAnnotation: ""}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		cluster *clusterv1.Cluster
		allowed bool
	}{
		{"Cluster deleting, hook not passed", cluster(true, false), false},
		{"Cluster deleting, hook passed", cluster(true, true), true},
		{"Cluster not deleting", cluster(false, false), true},
		{"Cluster gone", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{Reads: &fakeReads{cluster: tc.cluster}}
			resp := call(t, s, PathHoldTopologyDelete, admissionv1.Delete, nil, kcp)
			assert.Equal(t, tc.allowed, resp.Allowed)
			if !tc.allowed {
				assert.Contains(t, resp.Result.Message, "Cluster default/demo, which waits for its BeforeClusterDelete hook")
			}
		})
	}
}

// TestExtensionConfigWebhooks: Cluster API's ExtensionConfig defaults are written as a JSON
// patch (fields topoflow does not know kept), and an invalid ExtensionConfig is refused naming
// the field.
func TestExtensionConfigWebhooks(t *testing.T) {
	s := &Server{}
	cfg := map[string]any{"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": "ext"},
		"spec": map[string]any{"clientConfig": map[string]any{"service": map[string]any{"namespace": "ext-system", "name": "ext"}},
			"futureField": "kept"}}
	resp := call(t, s, PathMutateExtensionConfig, admissionv1.Create, cfg, nil)
	require.True(t, resp.Allowed)
	var ops []map[string]any
	require.NoError(t, json.Unmarshal(resp.Patch, &ops))
	assert.ElementsMatch(t, []map[string]any{
		{"op": "add", "path": "/spec/clientConfig/service/port", "value": float64(443)},
		{"op": "add", "path": "/spec/namespaceSelector", "value": map[string]any{}},
	}, ops)

	resp = call(t, s, PathValidateExtensionConfig, admissionv1.Create, cfg, nil)
	assert.False(t, resp.Allowed, "namespaceSelector missing (the mutating webhook sets it)")
	assert.Contains(t, resp.Result.Message, "spec.namespaceSelector: Required value")

	cfg["spec"] = map[string]any{"clientConfig": map[string]any{"url": "http://127.0.0.1:8443"}, "namespaceSelector": map[string]any{}}
	resp = call(t, s, PathValidateExtensionConfig, admissionv1.Update, cfg, cfg)
	assert.False(t, resp.Allowed)
	assert.Contains(t, resp.Result.Message, `ExtensionConfig.runtime.cluster.x-k8s.io "ext" is invalid: spec.clientConfig.url: Invalid value: "http://127.0.0.1:8443": 'https' is the only allowed URL scheme`)

	cfg["spec"] = map[string]any{"clientConfig": map[string]any{"url": "https://127.0.0.1:8443"}, "namespaceSelector": map[string]any{}}
	assert.True(t, call(t, s, PathValidateExtensionConfig, admissionv1.Create, cfg, nil).Allowed)
}
