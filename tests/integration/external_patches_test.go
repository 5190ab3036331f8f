//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/workflows"
)

// imagesExtension answers like a real external patch extension: DiscoverVariables defines
// nodeImageTag; GeneratePatches sets every MachineDeployment machine template's image from it and
// the pool's version; ValidateTopology accepts (unless scripted otherwise).
func imagesExtension(t *testing.T) *extension.Server {
	ext, err := extension.Start(hooksv1.DiscoverVariables, hooksv1.GeneratePatches, hooksv1.ValidateTopology)
	require.NoError(t, err)
	t.Cleanup(ext.Close)
	ext.Respond(hooksv1.DiscoverVariables, func(map[string]any) map[string]any {
		return map[string]any{"variables": []any{map[string]any{
			"name": "nodeImageTag", "required": false,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "string", "default": "base", "pattern": "^[a-z0-9.-]+$"}},
		}}}
	})
	ext.Respond(hooksv1.GeneratePatches, func(req map[string]any) map[string]any {
		var r hooksv1.GeneratePatchesRequest
		js, _ := json.Marshal(req)
		if err := json.Unmarshal(js, &r); err != nil {
			return map[string]any{"status": "Failure", "message": err.Error()}
		}
		tag := ""
		for _, v := range r.Variables {
			if v.Name == "nodeImageTag" {
				_ = json.Unmarshal(v.Value.Raw, &tag)
			}
		}
		items := []any{}
		for _, it := range r.Items {
			if it.HolderReference.Kind != "MachineDeployment" || it.HolderReference.FieldPath != "spec.template.spec.infrastructureRef" {
				continue
			}
			var b struct {
				MachineDeployment struct{ Version string } `json:"machineDeployment"`
			}
			for _, v := range it.Variables {
				if v.Name == "builtin" {
					_ = json.Unmarshal(v.Value.Raw, &b)
				}
			}
			ops, _ := json.Marshal([]any{map[string]any{"op": "add", "path": "/spec/template/spec/image",
				"value": fmt.Sprintf("ext-node:%s-%s", tag, b.MachineDeployment.Version)}})
			// patch is []byte on the wire: base64, as Cluster API encodes it.
			items = append(items, map[string]any{"uid": string(it.UID), "patchType": "JSONPatch", "patch": ops})
		}
		return map[string]any{"items": items}
	})
	return ext
}

// TestExternalPatches runs a ClusterClass whose external patch discovers its variable, patches the
// workers' machine templates and validates the topology, all through a real HTTPS extension.
func TestExternalPatches(t *testing.T) {
	e := newEnv(t, envOptions{timing: workflows.Timing{WaitResync: 3 * time.Second}})
	ext := imagesExtension(t)
	e.registerExtension(ext)
	handler := func(hook string) string { return strings.ToLower(hook) + "-handler.ext-" + e.ns }

	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() != "ClusterClass" {
			return
		}
		patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "patches")
		patches = append(patches, map[string]any{"name": "images", "external": map[string]any{
			"generateExtension":          handler(hooksv1.GeneratePatches),
			"validateExtension":          handler(hooksv1.ValidateTopology),
			"discoverVariablesExtension": handler(hooksv1.DiscoverVariables),
			"settings":                   map[string]any{"registry": "reg.example"},
		}})
		require.NoError(t, unstructured.SetNestedSlice(u.Object, patches, "spec", "patches"))
	})
	e.eventually(30*time.Second, "the discovered variable in the class status", func() (bool, string) {
		var class clusterv1.ClusterClass
		require.NoError(t, kc.GetTyped(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", &class))
		for _, v := range class.Status.Variables {
			if v.Name == "nodeImageTag" {
				return len(v.Definitions) == 1 && v.Definitions[0].From == "images", fmt.Sprintf("%+v", v)
			}
		}
		return false, fmt.Sprintf("%+v", class.Status)
	})
	require.NotEmpty(t, ext.Calls(hooksv1.DiscoverVariables))
	assert.Equal(t, map[string]string{"owner": "integration-test", "registry": "reg.example"}, ext.Calls(hooksv1.DiscoverVariables)[0].Settings,
		"the patch's settings merged over the ExtensionConfig's")

	// The first validation fails: the Cluster shows it, and the next attempt (no event needed) passes.
	ext.Script(hooksv1.ValidateTopology, extension.Answer{Status: "Failure", Message: "md-1 needs an approved image"})
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			vars, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "variables")
			vars = append(vars, map[string]any{"name": "nodeImageTag", "value": "v7"})
			require.NoError(t, unstructured.SetNestedSlice(u.Object, vars, "spec", "topology", "variables"))
		}
	})
	// Worded as Cluster API v1.14 shows an extension's error (#13813).
	e.eventually(30*time.Second, "the validation failure on the Cluster", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Reason == "TopologyReconcileFailed" &&
			strings.HasPrefix(cond.Message, "error computing the desired state of the Cluster topology: failed to apply patches: validation of patch ") &&
			strings.HasSuffix(cond.Message, `": got failure response with message: md-1 needs an approved image`), fmt.Sprint(cond)
	})
	e.waitReconciled("demo", 90*time.Second)

	images := func() map[string]string {
		out := map[string]string{}
		for _, md := range e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo") {
			ref, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
			tmpl := e.get(&corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimMachineTemplate", Name: ref})
			img, _, _ := unstructured.NestedString(tmpl.Object, "spec", "template", "spec", "image")
			out[md.GetLabels()[labels.MachineDeploymentName]] = img
		}
		return out
	}
	assert.Equal(t, map[string]string{"md-0": "ext-node:v7-v1.31.2", "md-1": "ext-node:v7-v1.31.2"}, images(),
		"the external patch, listed after the inline image patch, wins")

	gen := ext.Calls(hooksv1.GeneratePatches)
	require.NotEmpty(t, gen)
	var req hooksv1.GeneratePatchesRequest
	js, _ := json.Marshal(gen[len(gen)-1].Body)
	require.NoError(t, json.Unmarshal(js, &req))
	assert.Equal(t, "GeneratePatchesRequest", req.Kind)
	var global []string
	for _, v := range req.Variables {
		global = append(global, v.Name)
	}
	assert.Equal(t, []string{"nodeImageTag", "builtin"}, global, "only the variables the patch defines, then builtin")
	assert.Len(t, req.Items, 9)
	assert.GreaterOrEqual(t, len(ext.Calls(hooksv1.ValidateTopology)), 2)

	// Operators see each external patch's answer in the workflow history (the apply's result).
	var noted bool
	iter := tc.GetWorkflowHistory(e.ctx, workflows.WorkflowID(e.ns, "demo"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() && !noted {
		ev, err := iter.Next()
		require.NoError(t, err)
		// A regular activity's result, or a local activity's (its marker's details).
		payloads := ev.GetActivityTaskCompletedEventAttributes().GetResult().GetPayloads()
		for _, d := range ev.GetMarkerRecordedEventAttributes().GetDetails() {
			payloads = append(payloads, d.GetPayloads()...)
		}
		for _, p := range payloads {
			noted = noted || strings.Contains(string(p.GetData()), "GeneratePatches "+handler(hooksv1.GeneratePatches)+": 2 patch(es)")
		}
	}
	assert.True(t, noted, "the history shows the GeneratePatches answer")

	// One decision per pass (#20): passes over the unchanged topology (woken by a change to the
	// class's metadata) ask the extension once each, as Cluster API asks once per reconcile; a
	// pass that decided twice would ask twice.
	// (The Cluster's annotations are builtin.cluster.metadata: wait until the pending-hooks
	// annotation is gone, or its removal is a real change.)
	e.eventually(10*time.Second, "no hook pending", func() (bool, string) {
		v, ok := e.cluster("demo").Annotations["runtime.cluster.x-k8s.io/pending-hooks"]
		return !ok, v
	})
	touch := func(i int) {
		e.annotate(clusterv1.GroupVersion.String(), "ClusterClass", "quick-start", "example.com/touched", fmt.Sprint(i))
	}
	e.touchPasses("demo", 1, 0, touch)
	before, start := len(ext.Calls(hooksv1.GeneratePatches)), e.passes("demo")
	e.touchPasses("demo", 3, 200*time.Millisecond, func(i int) { touch(i + 1) })
	e.eventually(10*time.Second, "one GeneratePatches call per pass", func() (bool, string) {
		calls, passes := len(ext.Calls(hooksv1.GeneratePatches))-before, e.passes("demo")-start
		return passes >= 3 && calls == passes, fmt.Sprintf("%d calls in %d passes", calls, passes)
	})

	// Day 2: a new tag rotates the workers' machine templates.
	e.applyFile(clusterFile, onlyKinds("Cluster"), func(u *unstructured.Unstructured) {
		vars, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "variables")
		vars = append(vars, map[string]any{"name": "nodeImageTag", "value": "v8"})
		require.NoError(t, unstructured.SetNestedSlice(u.Object, vars, "spec", "topology", "variables"))
	})
	e.eventually(60*time.Second, "images follow the variable", func() (bool, string) {
		got := images()
		return got["md-0"] == "ext-node:v8-v1.31.2" && got["md-1"] == "ext-node:v8-v1.31.2", fmt.Sprint(got)
	})
}

// TestVariableDiscoveryFailure: while the DiscoverVariables handler fails, the ClusterClass says
// so (VariablesReconciled=False, VariableDiscoveryFailed, the extension's message) and discovery
// is retried until it succeeds; no event is needed.
func TestVariableDiscoveryFailure(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext := imagesExtension(t)
	e.registerExtension(ext)
	ext.Script(hooksv1.DiscoverVariables,
		extension.Answer{Status: "Failure", Message: "variable catalog unavailable"},
		extension.Answer{Status: "Failure", Message: "variable catalog unavailable"},
		extension.Answer{Status: "Failure", Message: "variable catalog unavailable"})
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() != "ClusterClass" {
			return
		}
		patches, _, _ := unstructured.NestedSlice(u.Object, "spec", "patches")
		patches = append(patches, map[string]any{"name": "images", "external": map[string]any{
			"generateExtension":          "generatepatches-handler.ext-" + e.ns,
			"discoverVariablesExtension": "discovervariables-handler.ext-" + e.ns,
		}})
		require.NoError(t, unstructured.SetNestedSlice(u.Object, patches, "spec", "patches"))
	})
	class := func() clusterv1.ClusterClass {
		var c clusterv1.ClusterClass
		require.NoError(t, kc.GetTyped(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", &c))
		return c
	}
	e.eventually(20*time.Second, "the failure on the class", func() (bool, string) {
		c := class().Status.Conditions.Get("VariablesReconciled")
		return c != nil && c.Status == "False" && c.Reason == "VariableDiscoveryFailed" &&
				c.Message == `VariableDiscovery failed: failed to call DiscoverVariables for patch images: failed to call extension handler "discovervariables-handler.ext-`+e.ns+`": got failure response with message: variable catalog unavailable`,
			fmt.Sprint(c)
	})
	e.eventually(30*time.Second, "discovered once the extension answers", func() (bool, string) {
		c := class()
		cond := c.Status.Conditions.Get("VariablesReconciled")
		for _, v := range c.Status.Variables {
			if v.Name == "nodeImageTag" {
				return cond != nil && cond.Status == "True", fmt.Sprint(cond)
			}
		}
		return false, fmt.Sprint(cond)
	})
	assert.GreaterOrEqual(t, len(ext.Calls(hooksv1.DiscoverVariables)), 4, "three failures, then success")
}
