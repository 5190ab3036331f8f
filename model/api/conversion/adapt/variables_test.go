package adapt_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

func ptr[T any](v T) *T { return &v }

func value(js string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(js)} }

// definitionFrom has no place in v1beta2: Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable
// drops it ("it was already not possible to set it anymore with v1beta1").
func TestClusterVariablesToHub_DropsDefinitionFrom(t *testing.T) {
	in := []v1beta1.ClusterVariable{{Name: "region", DefinitionFrom: "inline", Value: value(`"eu"`)}, {Name: "size", Value: value(`3`)}}
	got := adapt.ClusterVariablesToHub(in)
	assert.Equal(t, []v1beta2.ClusterVariable{{Name: "region", Value: value(`"eu"`)}, {Name: "size", Value: value(`3`)}}, got)

	// As Cluster API converts it.
	var theirs capiv1beta1.ClusterVariable
	require.NoError(t, json.Unmarshal(mustMarshal(t, in[0]), &theirs))
	var hub capiv1beta2.ClusterVariable
	require.NoError(t, capiv1beta1.Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable(&theirs, &hub, nil))
	assert.JSONEq(t, string(mustMarshal(t, hub)), string(mustMarshal(t, got[0])))

	assert.Nil(t, adapt.ClusterVariablesToHub(nil))
	assert.Equal(t, []v1beta2.ClusterVariable{}, adapt.ClusterVariablesToHub([]v1beta1.ClusterVariable{}))
}

// Back from a computation (defaulting: the values in order, then the added ones), a value keeps
// the definitionFrom its v1beta1 original had; what is new or moved has none.
func TestClusterVariablesFromHub_KeepsDefinitionFrom(t *testing.T) {
	was := []v1beta1.ClusterVariable{{Name: "region", DefinitionFrom: "inline", Value: value(`"eu"`)}, {Name: "size", DefinitionFrom: "x", Value: value(`3`)}}
	hub := []v1beta2.ClusterVariable{{Name: "region", Value: value(`"us"`)}, {Name: "other", Value: value(`1`)}, {Name: "added", Value: value(`true`)}}
	assert.Equal(t, []v1beta1.ClusterVariable{
		{Name: "region", DefinitionFrom: "inline", Value: value(`"us"`)},
		{Name: "other", Value: value(`1`)},
		{Name: "added", Value: value(`true`)},
	}, adapt.ClusterVariablesFromHub(hub, was))
	assert.Equal(t, was, adapt.ClusterVariablesFromHub(adapt.ClusterVariablesToHub(was), was), "a round trip loses nothing")
	assert.Nil(t, adapt.ClusterVariablesFromHub(nil, was))
}

// The mappings of a definition that differ in meaning: required is always a pointer (generated
// code: v1.Convert_bool_To_Pointer_bool); a schema flag is true or unset, false being unset too
// (the webhook's restoreBoolIntentJSONSchemaProps without conversion data); metadata moves to
// deprecatedV1Beta1Metadata; x-metadata and a rule's reason lose their pointers.
func TestClusterClassVariablesToHub(t *testing.T) {
	var in []v1beta1.ClusterClassVariable
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
- name: a
  required: false
  metadata: {labels: {l: v}}
  schema:
    openAPIV3Schema:
      type: object
      x-kubernetes-preserve-unknown-fields: false
      x-metadata: {annotations: {k: v}}
      properties:
        list:
          type: array
          uniqueItems: true
          items: {type: integer, exclusiveMinimum: false, minimum: 1}
      x-kubernetes-validations: [{rule: "true", reason: FieldValueForbidden}, {rule: "1 == 1"}]
`), &in))
	got := adapt.ClusterClassVariablesToHub(in)
	want := []v1beta2.ClusterClassVariable{{
		Name: "a", Required: ptr(false),
		DeprecatedV1Beta1Metadata: v1beta2.ClusterClassVariableMetadata{Labels: map[string]string{"l": "v"}},
		Schema: v1beta2.VariableSchema{OpenAPIV3Schema: v1beta2.JSONSchemaProps{
			Type:      "object",
			XMetadata: v1beta2.VariableSchemaMetadata{Annotations: map[string]string{"k": "v"}},
			Properties: map[string]v1beta2.JSONSchemaProps{"list": {Type: "array", UniqueItems: ptr(true),
				Items: &v1beta2.JSONSchemaProps{Type: "integer", Minimum: ptr(int64(1))}}},
			XValidations: []v1beta2.ValidationRule{{Rule: "true", Reason: v1beta2.FieldValueForbidden}, {Rule: "1 == 1"}},
		}},
	}}
	assert.Equal(t, want, got)
}

// Status variables: definitionsConflict is true or unset (the webhook's rule), each definition's
// required always a pointer.
func TestClusterClassStatusVariablesToHub(t *testing.T) {
	in := []v1beta1.ClusterClassStatusVariable{
		{Name: "a", Definitions: []v1beta1.ClusterClassStatusVariableDefinition{{From: "inline", Required: true}, {From: "p"}}},
		{Name: "b", DefinitionsConflict: true, Definitions: []v1beta1.ClusterClassStatusVariableDefinition{{From: "inline", Metadata: v1beta1.ClusterClassVariableMetadata{Labels: map[string]string{"l": "v"}}}}},
	}
	assert.Equal(t, []v1beta2.ClusterClassStatusVariable{
		{Name: "a", Definitions: []v1beta2.ClusterClassStatusVariableDefinition{{From: "inline", Required: ptr(true)}, {From: "p", Required: ptr(false)}}},
		{Name: "b", DefinitionsConflict: ptr(true), Definitions: []v1beta2.ClusterClassStatusVariableDefinition{{From: "inline", Required: ptr(false),
			DeprecatedV1Beta1Metadata: v1beta2.ClusterClassVariableMetadata{Labels: map[string]string{"l": "v"}}}}},
	}, adapt.ClusterClassStatusVariablesToHub(in))
}

// Status variables go back to v1beta1 as Cluster API's conversion takes them there, so that what
// the v1beta1 class said comes back: a round trip keeps it, but for the two things v1beta2 cannot
// say, an empty x-metadata and an empty reason, which are gone (as through Cluster API).
func TestClusterClassStatusVariablesFromHub(t *testing.T) {
	var in []v1beta1.ClusterClassStatusVariable
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
- name: a
  definitionsConflict: true
  definitions:
  - from: inline
    required: true
    metadata: {annotations: {k: v}}
    schema:
      openAPIV3Schema:
        type: object
        x-metadata: {labels: {l: v}}
        x-kubernetes-preserve-unknown-fields: true
        additionalProperties: {type: string, x-kubernetes-int-or-string: true, enum: ["a"]}
        x-kubernetes-validations: [{rule: "true", reason: FieldValueRequired, fieldPath: .x}]
        allOf: [{required: [x]}]
  - from: p
    schema: {openAPIV3Schema: {type: string, default: "x"}}
- name: b
  definitions: []
`), &in))
	assert.Equal(t, in, adapt.ClusterClassStatusVariablesFromHub(adapt.ClusterClassStatusVariablesToHub(in)))

	// As Cluster API converts v1beta2 status variables to v1beta1 (the JSON of its v1beta1 type
	// writes definitionsConflict: false and an empty list as null, hence the first only).
	hub := adapt.ClusterClassStatusVariablesToHub(in[:1])
	var theirs []capiv1beta2.ClusterClassStatusVariable
	require.NoError(t, json.Unmarshal(mustMarshal(t, hub), &theirs))
	var back []capiv1beta1.ClusterClassStatusVariable
	for i := range theirs {
		var v capiv1beta1.ClusterClassStatusVariable
		require.NoError(t, capiv1beta1.Convert_v1beta2_ClusterClassStatusVariable_To_v1beta1_ClusterClassStatusVariable(&theirs[i], &v, nil))
		back = append(back, v)
	}
	assert.JSONEq(t, string(mustMarshal(t, back)), string(mustMarshal(t, adapt.ClusterClassStatusVariablesFromHub(hub))))

	lossy := []v1beta1.ClusterClassStatusVariable{{Name: "c", Definitions: []v1beta1.ClusterClassStatusVariableDefinition{{From: "inline",
		Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "string", XMetadata: &v1beta1.VariableSchemaMetadata{},
			XValidations: []v1beta1.ValidationRule{{Rule: "true", Reason: ptr("")}}}}}}}}
	s := adapt.ClusterClassStatusVariablesFromHub(adapt.ClusterClassStatusVariablesToHub(lossy))[0].Definitions[0].Schema.OpenAPIV3Schema
	assert.Nil(t, s.XMetadata)
	assert.Nil(t, s.XValidations[0].Reason)
}

// A patch's optional strings become plain strings, empty meaning unset (v1.Convert_Pointer_string_To_string;
// Cluster API's v1beta1 schema refuses them empty), the external handlers take their v1beta2
// names, and matchResources' booleans are true or unset.
func TestClusterClassPatchesToHub(t *testing.T) {
	var in []v1beta1.ClusterClassPatch
	require.NoError(t, yaml.UnmarshalStrict([]byte(`
- name: inline
  enabledIf: "{{ .on }}"
  definitions:
  - selector:
      apiVersion: v1
      kind: T
      matchResources: {controlPlane: true, infrastructureCluster: false, machineDeploymentClass: {names: ["*"]}}
    jsonPatches:
    - {op: add, path: /spec/a, valueFrom: {variable: a}}
    - {op: add, path: /spec/b, value: 1}
- name: external
  external: {generateExtension: gen.ext, validateExtension: val.ext, settings: {k: v}}
`), &in))
	assert.Equal(t, []v1beta2.ClusterClassPatch{
		{Name: "inline", EnabledIf: "{{ .on }}", Definitions: []v1beta2.PatchDefinition{{
			Selector: v1beta2.PatchSelector{APIVersion: "v1", Kind: "T", MatchResources: v1beta2.PatchSelectorMatch{ControlPlane: ptr(true),
				MachineDeploymentClass: &v1beta2.PatchSelectorMatchClasses{Names: []string{"*"}}}},
			JSONPatches: []v1beta2.JSONPatch{{Op: "add", Path: "/spec/a", ValueFrom: &v1beta2.JSONPatchValue{Variable: "a"}}, {Op: "add", Path: "/spec/b", Value: ptr(value(`1`))}},
		}}},
		{Name: "external", External: &v1beta2.ExternalPatchDefinition{GeneratePatchesExtension: "gen.ext", ValidateTopologyExtension: "val.ext", Settings: map[string]string{"k": "v"}}},
	}, adapt.ClusterClassPatchesToHub(in))

	empty := []v1beta1.ClusterClassPatch{{Name: "e", EnabledIf: ptr("")}}
	assert.Empty(t, adapt.ClusterClassPatchesToHub(empty)[0].EnabledIf)
}
