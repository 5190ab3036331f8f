package desired

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/patches"
	"github.com/topoflow/topoflow/model/variables"
)

// recordingExtensions answers external patch calls from functions and records the requests.
type recordingExtensions struct {
	calls    []string
	generate func(req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error)
	validate func(req *hooksv1.ValidateTopologyRequest) error
	genReq   *hooksv1.GeneratePatchesRequest
	valReq   *hooksv1.ValidateTopologyRequest
	settings map[string]string
}

func (r *recordingExtensions) GeneratePatches(handler string, settings map[string]string, req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
	r.calls = append(r.calls, "GeneratePatches "+handler)
	r.genReq, r.settings = req, settings
	return r.generate(req)
}

func (r *recordingExtensions) ValidateTopology(handler string, settings map[string]string, req *hooksv1.ValidateTopologyRequest) error {
	r.calls = append(r.calls, "ValidateTopology "+handler)
	r.valReq = req
	if r.validate == nil {
		return nil
	}
	return r.validate(req)
}

func ptrTo[T any](v T) *T { return &v }

// externalInput is the quick-start sample with an external patch "ext" between the inline
// "region" and "imageRepository" patches, and a variable "imageTag" the extension defines.
func externalInput(t *testing.T, ext *recordingExtensions) Input {
	in := sample(t)
	patch := clusterv1.ClusterClassPatch{Name: "ext", External: &clusterv1.ExternalPatchDefinition{
		GeneratePatchesExtension: "generate.test-ext", ValidateTopologyExtension: "validate.test-ext",
		Settings: map[string]string{"mode": "strict"},
	}}
	p := in.Class.Spec.Patches
	in.Class.Spec.Patches = append([]clusterv1.ClusterClassPatch{p[0], patch}, p[1:]...)
	in.Class.Status.Variables = append(variables.StatusVariables(in.Class), clusterv1.ClusterClassStatusVariable{
		Name: "imageTag",
		Definitions: []clusterv1.ClusterClassStatusVariableDefinition{{From: "ext",
			Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}},
	})
	in.Cluster.Spec.Topology.Variables = append(in.Cluster.Spec.Topology.Variables,
		clusterv1.ClusterVariable{Name: "imageTag", Value: apiextensionsv1.JSON{Raw: []byte(`"v2"`)}})
	md1 := &in.Cluster.Spec.Topology.Workers.MachineDeployments[1]
	md1.Variables.Overrides = append(md1.Variables.Overrides, clusterv1.ClusterVariable{Name: "imageTag", Value: apiextensionsv1.JSON{Raw: []byte(`"v3"`)}})
	in.Extensions = ext
	return in
}

// item finds the request item held at fieldPath by the Cluster (topologyName "") or by the pool
// with that topology name.
func item(t *testing.T, items []hooksv1.GeneratePatchesRequestItem, topologyName, fieldPath string) hooksv1.GeneratePatchesRequestItem {
	t.Helper()
	for _, it := range items {
		if it.HolderReference.FieldPath != fieldPath {
			continue
		}
		if topologyName == "" && it.HolderReference.Kind == "Cluster" {
			return it
		}
		var b struct {
			MachineDeployment struct{ TopologyName string } `json:"machineDeployment"`
		}
		if v, ok := variableMap(it.Variables)["builtin"]; ok && json.Unmarshal([]byte(v), &b) == nil && b.MachineDeployment.TopologyName == topologyName {
			return it
		}
	}
	t.Fatalf("no request item for %q at %s", topologyName, fieldPath)
	return hooksv1.GeneratePatchesRequestItem{}
}

func variableMap(vs []hooksv1.Variable) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.Name] = string(v.Value.Raw)
	}
	return out
}

func success() hooksv1.CommonResponse {
	return hooksv1.CommonResponse{Status: hooksv1.ResponseStatusSuccess}
}

func TestExternalPatches(t *testing.T) {
	ext := &recordingExtensions{}
	ext.generate = func(req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
		cp := item(t, req.Items, "", "spec.controlPlaneRef")
		md1 := item(t, req.Items, "md-1", "spec.template.spec.infrastructureRef")
		return &hooksv1.GeneratePatchesResponse{CommonResponse: success(), Items: []hooksv1.GeneratePatchesResponseItem{
			{UID: cp.UID, PatchType: hooksv1.JSONPatchType, Patch: []byte(`[
				{"op":"replace","path":"/spec/template/spec/imageRepository","value":"ext.example.com"},
				{"op":"add","path":"/spec/template/spec/imageTag","value":"from-ext"},
				{"op":"add","path":"/metadata/labels","value":{"ignored":"true"}}]`)},
			{UID: md1.UID, PatchType: hooksv1.JSONMergePatchType, Patch: []byte(`{"spec":{"template":{"spec":{"disk":"100G"}}},"metadata":{"name":"renamed"}}`)},
			// A second patch for the same template applies on top of the first.
			{UID: md1.UID, PatchType: hooksv1.JSONPatchType, Patch: []byte(`[{"op":"add","path":"/spec/template/spec/diskType","value":"ssd"}]`)},
		}}, nil
	}
	s, err := Compute(externalInput(t, ext))
	require.NoError(t, err)
	assert.Equal(t, []string{"GeneratePatches generate.test-ext", "ValidateTopology validate.test-ext"}, ext.calls, "generate in patch order, then validate")
	assert.Equal(t, map[string]string{"mode": "strict"}, ext.settings, "the patch's settings are passed")

	// The request: every template with its holder; only the variables the patch defines.
	req := ext.genReq
	assert.Len(t, req.Items, 9, "infrastructure cluster, control plane and its machine template, 2 per pool")
	global := variableMap(req.Variables)
	assert.Equal(t, `"v2"`, global["imageTag"])
	assert.NotContains(t, global, "region", "region is defined inline only: not sent to the external patch")
	assert.JSONEq(t, `"demo"`, mustField(t, global["builtin"], "cluster", "name"))
	infra := item(t, req.Items, "", "spec.infrastructureRef")
	assert.Empty(t, infra.Variables, "the infrastructure cluster has no template variables")
	assert.Contains(t, string(infra.Object.Raw), `"region":"sim-west-2"`, "the inline patch listed before ran first")
	md1 := item(t, req.Items, "md-1", "spec.template.spec.infrastructureRef")
	assert.Equal(t, `"v3"`, variableMap(md1.Variables)["imageTag"], "the pool's override")
	assert.Equal(t, "MachineDeployment", md1.HolderReference.Kind)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", md1.HolderReference.APIVersion, "holder references stay in topoflow's v1beta1")
	assert.Equal(t, "default", md1.HolderReference.Namespace)
	assert.Equal(t, s.MachineDeployments[1].Object.Name, md1.HolderReference.Name)
	var cpInfra *hooksv1.GeneratePatchesRequestItem
	for i := range req.Items {
		if req.Items[i].HolderReference.FieldPath == "spec.machineTemplate.infrastructureRef" {
			cpInfra = &req.Items[i]
		}
	}
	require.NotNil(t, cpInfra, "the control plane machine template is held by the control plane")
	assert.Equal(t, hooksv1.HolderReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlane",
		Namespace: "default", Name: s.ControlPlane.GetName(), FieldPath: "spec.machineTemplate.infrastructureRef"}, cpInfra.HolderReference)
	assert.Contains(t, variableMap(cpInfra.Variables)["builtin"], `"controlPlane"`)
	uids := map[string]bool{}
	for _, it := range req.Items {
		uids[string(it.UID)] = true
	}
	assert.Len(t, uids, 9, "UIDs are unique")

	// The answer: spec changes kept, metadata changes dropped; later inline patches apply on top.
	spec := func(u *unstructured.Unstructured, f string) any {
		v, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", f)
		return v
	}
	assert.Equal(t, "from-ext", spec(s.ControlPlane, "imageTag"))
	assert.Equal(t, "registry.k8s.io", spec(s.ControlPlane, "imageRepository"), "the inline patch listed after the external one wins")
	assert.NotContains(t, s.ControlPlane.GetLabels(), "ignored")
	mdInfra := s.MachineDeployments[1].InfraTemplate
	tmplSpec, _, _ := unstructured.NestedMap(mdInfra.Object, "spec", "template", "spec")
	assert.Equal(t, "100G", tmplSpec["disk"])
	assert.Equal(t, "ssd", tmplSpec["diskType"])
	assert.NotEqual(t, "renamed", mdInfra.GetName())
	other, _, _ := unstructured.NestedMap(s.MachineDeployments[0].InfraTemplate.Object, "spec", "template", "spec")
	assert.NotContains(t, other, "disk", "md-0 was not patched")

	// Validation sees the final templates.
	require.NotNil(t, ext.valReq)
	require.Len(t, ext.valReq.Items, 9)
	var validated bool
	for _, it := range ext.valReq.Items {
		if it.HolderReference.FieldPath == "spec.controlPlaneRef" {
			validated = true
			assert.Contains(t, string(it.Object.Raw), `"imageRepository":"registry.k8s.io"`)
			assert.Contains(t, string(it.Object.Raw), `"imageTag":"from-ext"`)
		}
	}
	assert.True(t, validated)
}

func mustField(t *testing.T, js string, path ...string) string {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(js), &v))
	for _, p := range path {
		m, ok := v.(map[string]any)
		require.True(t, ok, "no object at %s in %s", p, js)
		v = m[p]
	}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

func TestExternalPatchErrors(t *testing.T) {
	cases := []struct {
		name     string
		generate func(req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error)
		validate func(req *hooksv1.ValidateTopologyRequest) error
		noExt    bool
		want     string
	}{
		// An extension's error reads as in Cluster API v1.14 (#13813): generator.Generate wraps
		// engine.Apply's "failed to generate patches for patch" or "validation of patch ... failed".
		{name: "extension fails", generate: func(*hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
			return nil, errors.New(`failed to call extension handler "h.ext": got failure response with message: no image for v1.31.2`)
		}, want: `error computing the desired state of the Cluster topology: failed to apply patches: failed to generate patches for patch "ext": ` +
			`failed to call extension handler "h.ext": got failure response with message: no image for v1.31.2`},
		{name: "unknown uid", generate: func(*hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
			return &hooksv1.GeneratePatchesResponse{CommonResponse: success(), Items: []hooksv1.GeneratePatchesResponseItem{{UID: "nope", PatchType: hooksv1.JSONPatchType, Patch: []byte(`[]`)}}}, nil
		}, want: `answer items[0] has uid "nope", which is not in the request`},
		{name: "bad patch type", generate: func(req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
			return &hooksv1.GeneratePatchesResponse{CommonResponse: success(), Items: []hooksv1.GeneratePatchesResponseItem{{UID: req.Items[0].UID, PatchType: "StrategicMerge", Patch: []byte(`{}`)}}}, nil
		}, want: `patchType "StrategicMerge" is neither JSONPatch nor JSONMergePatch`},
		{name: "patch does not apply", generate: func(req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
			return &hooksv1.GeneratePatchesResponse{CommonResponse: success(), Items: []hooksv1.GeneratePatchesResponseItem{{UID: req.Items[0].UID, PatchType: hooksv1.JSONPatchType, Patch: []byte(`[{"op":"replace","path":"/spec/nothere/x","value":1}]`)}}}, nil
		}, want: `patch "ext" on SimClusterTemplate quick-start-cluster (InfrastructureCluster): answer items[0]: applying JSON patch`},
		{name: "validation fails", generate: func(*hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
			return &hooksv1.GeneratePatchesResponse{CommonResponse: success()}, nil
		}, validate: func(*hooksv1.ValidateTopologyRequest) error {
			return errors.New(`failed to call extension handler "v.ext": got failure response with message: too few replicas`)
		},
			want: `error computing the desired state of the Cluster topology: failed to apply patches: validation of patch "ext" failed: ` +
				`failed to call extension handler "v.ext": got failure response with message: too few replicas`},
		{name: "no extensions (offline)", noExt: true, want: `patch "ext" on the topology: external patches need Runtime Extensions`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ext := &recordingExtensions{generate: tc.generate, validate: tc.validate}
			in := externalInput(t, ext)
			if tc.noExt {
				in.Extensions = nil
			}
			_, err := Compute(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var ce *patches.CallError
			if !errors.As(err, &ce) {
				assert.Contains(t, err.Error(), "ClusterClass default/quick-start")
			}
		})
	}
}

// TestExternalPatchIgnored: a handler that failed under failurePolicy Ignore gives no answer;
// the topology is computed without its patches.
func TestExternalPatchIgnored(t *testing.T) {
	ext := &recordingExtensions{generate: func(*hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) { return nil, nil }}
	with, err := Compute(externalInput(t, ext))
	require.NoError(t, err)
	without, err := Compute(sample(t))
	require.NoError(t, err)
	assert.Equal(t, without.ControlPlane.Object["spec"], with.ControlPlane.Object["spec"])
}
