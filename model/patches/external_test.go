package patches

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// answering is an extension that answers GeneratePatches with one patch for the first item.
type answering struct {
	patchType hooksv1.PatchType
	patch     []byte
}

func (a answering) GeneratePatches(_ string, _ map[string]string, req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
	return &hooksv1.GeneratePatchesResponse{
		CommonResponse: hooksv1.CommonResponse{Status: hooksv1.ResponseStatusSuccess},
		Items:          []hooksv1.GeneratePatchesResponseItem{{UID: req.Items[0].UID, PatchType: a.patchType, Patch: a.patch}},
	}, nil
}

func (answering) ValidateTopology(string, map[string]string, *hooksv1.ValidateTopologyRequest) error {
	return nil
}

func externalPatch() []clusterv1.ClusterClassPatch {
	return []clusterv1.ClusterClassPatch{{Name: "ext", External: &clusterv1.ExternalPatchDefinition{GeneratePatchesExtension: "gen.ext"}}}
}

// TestExternalAnswerTakesSpecOnly: a merge patch may touch anything, only spec changes are kept.
func TestExternalAnswerTakesSpecOnly(t *testing.T) {
	target := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.0", "", nil)}
	name := target.Template.GetName()
	ext := &External{Extensions: answering{hooksv1.JSONMergePatchType, []byte(`{"metadata":{"name":"other"},"spec":{"template":{"spec":{"x":1}}}}`)}}
	require.NoError(t, Apply(externalPatch(), []*Target{target}, ext))
	assert.Equal(t, name, target.Template.GetName())
	assert.EqualValues(t, 1, target.Template.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["x"])
}

func TestExternalAnswerKeepsSpecAnObject(t *testing.T) {
	target := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.0", "", nil)}
	err := Apply(externalPatch(), []*Target{target}, &External{Extensions: answering{hooksv1.JSONMergePatchType, []byte(`{"spec":"nope"}`)}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `patch "ext" on KubeadmControlPlaneTemplate`)
	assert.Contains(t, err.Error(), "the patched spec is not an object")
	_, isObject := target.Template.Object["spec"].(map[string]any)
	assert.True(t, isObject, "the template is left as it was")
}

// FuzzExternalAnswer: whatever an extension answers, the engine returns an error or a patched
// template, never panics.
func FuzzExternalAnswer(f *testing.F) {
	f.Add(true, []byte(`[{"op":"add","path":"/spec/template/spec/x","value":1}]`))
	f.Add(false, []byte(`{"spec":{"template":null}}`))
	f.Add(true, []byte(`[{"op":"move","from":"/spec","path":"/metadata/x"}]`))
	f.Add(false, []byte(`{"spec":"nope"}`))
	f.Fuzz(func(t *testing.T, jsonPatch bool, patch []byte) {
		pt := hooksv1.JSONMergePatchType
		if jsonPatch {
			pt = hooksv1.JSONPatchType
		}
		target := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.0", "", nil)}
		_ = Apply(externalPatch(), []*Target{target}, &External{Extensions: answering{pt, patch}})
	})
}
