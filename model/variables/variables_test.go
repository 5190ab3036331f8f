package variables

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// classVariables are definitions from seed 002's examples plus one per schema feature.
const classVariables = `
- name: imageRepository
  required: true
  schema:
    openAPIV3Schema:
      type: string
      default: registry.k8s.io
- name: region
  required: true
  schema:
    openAPIV3Schema:
      type: string
      enum: [us-east-1, eu-west-1]
- name: httpProxy
  schema:
    openAPIV3Schema:
      type: object
      properties:
        url: {type: string, format: uri}
        noProxy: {type: string, default: ".svc"}
        enabled: {type: boolean, default: false}
- name: mdConfig
  schema:
    openAPIV3Schema:
      type: object
      additionalProperties:
        type: object
        properties:
          osImage: {type: string, minLength: 3}
- name: dnsServers
  schema:
    openAPIV3Schema:
      type: array
      maxItems: 3
      uniqueItems: true
      items: {type: string, pattern: '^[0-9.]+$'}
- name: replicas
  schema:
    openAPIV3Schema:
      type: integer
      minimum: 1
      maximum: 5
- name: maxSurge
  schema:
    openAPIV3Schema:
      x-kubernetes-int-or-string: true
- name: freeForm
  schema:
    openAPIV3Schema:
      type: object
      x-kubernetes-preserve-unknown-fields: true
`

func cache(t *testing.T) *Cache {
	t.Helper()
	var vars []clusterv1.ClusterClassVariable
	require.NoError(t, yaml.UnmarshalStrict([]byte(classVariables), &vars))
	class := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: vars}}
	defs, err := Definitions(class)
	require.NoError(t, err)
	return NewCache(defs)
}

func vars(t *testing.T, kv ...string) []clusterv1.ClusterVariable {
	t.Helper()
	var out []clusterv1.ClusterVariable
	for i := 0; i < len(kv); i += 2 {
		out = append(out, clusterv1.ClusterVariable{Name: kv[i], Value: apiextensionsv1.JSON{Raw: []byte(kv[i+1])}})
	}
	return out
}

var topoPath = field.NewPath("spec", "topology", "variables")

func TestDefault(t *testing.T) {
	c := cache(t)
	got, errs := c.Default(vars(t, "region", `"eu-west-1"`, "httpProxy", `{"url":"http://proxy"}`, "imageRepository", `"my.registry"`), topoPath)
	require.Empty(t, errs)
	values, err := Values(got, nil)
	require.NoError(t, err)
	assert.Equal(t, "my.registry", values["imageRepository"], "a set value is kept")
	assert.Equal(t, map[string]any{"url": "http://proxy", "noProxy": ".svc", "enabled": false}, values["httpProxy"], "nested defaults fill a set object")
	assert.NotContains(t, values, "dnsServers", "no default, stays unset")

	got, errs = c.Default(vars(t, "region", `"eu-west-1"`), topoPath)
	require.Empty(t, errs)
	values, _ = Values(got, nil)
	assert.Equal(t, "registry.k8s.io", values["imageRepository"], "top-level default added")
	assert.NotContains(t, values, "httpProxy", "an unset object is not created for its nested defaults")
}

func TestValidate(t *testing.T) {
	c := cache(t)
	for _, tc := range []struct {
		name   string
		values []clusterv1.ClusterVariable
		want   []string // substrings, one per expected error
	}{
		{"valid", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "dnsServers", `["1.1.1.1"]`, "maxSurge", `"25%"`, "freeForm", `{"any":{"thing":1}}`), nil},
		{"required missing", vars(t, "imageRepository", `"r"`), []string{"spec.topology.variables[region]: Required value"}},
		{"enum", vars(t, "imageRepository", `"r"`, "region", `"mars-1"`), []string{`spec.topology.variables[region].value: Unsupported value: "mars-1"`}},
		{"wrong type", vars(t, "imageRepository", `42`, "region", `"us-east-1"`), []string{"spec.topology.variables[imageRepository].value: Invalid value"}},
		{"undefined variable", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "colour", `"red"`), []string{"spec.topology.variables[colour]: Invalid value: \"colour\": variable is not defined"}},
		{"duplicate", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "region", `"eu-west-1"`), []string{"spec.topology.variables[region]: Duplicate value"}},
		{"unknown nested field", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "httpProxy", `{"url":"http://p","port":8080}`), []string{"fields not declared in the schema: port"}},
		{"map values validated", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "mdConfig", `{"default-worker":{"osImage":"ab"}}`), []string{"spec.topology.variables[mdConfig].value.default-worker.osImage"}},
		{"array pattern, uniqueness and length", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "dnsServers", `["a","1.1.1.1","1.1.1.1","2.2.2.2"]`),
			[]string{"spec.topology.variables[dnsServers].value[0]: Invalid value: \"a\"", "shouldn't contain duplicates", "Too many: 4"}},
		{"integer bounds", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "replicas", `9`), []string{"should be less than or equal to 5"}},
		{"int-or-string rejects bool", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "maxSurge", `true`), []string{"spec.topology.variables[maxSurge].value"}},
		{"format", vars(t, "imageRepository", `"r"`, "region", `"us-east-1"`, "httpProxy", `{"url":"::not a uri"}`), []string{"spec.topology.variables[httpProxy].value.url", "must be of type uri"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := c.Validate(tc.values, topoPath, true)
			if tc.want == nil {
				assert.Empty(t, errs)
				return
			}
			all := errs.ToAggregate().Error()
			for _, w := range tc.want {
				assert.Contains(t, all, w)
			}
		})
	}
}

func TestOverridesDoNotRequireAll(t *testing.T) {
	c := cache(t)
	p := field.NewPath("spec", "topology", "workers", "machineDeployments").Index(0).Child("variables", "overrides")
	assert.Empty(t, c.Validate(vars(t, "region", `"eu-west-1"`), p, false))
	errs := c.Validate(vars(t, "region", `"nowhere"`), p, false)
	require.Len(t, errs, 1)
	assert.True(t, strings.HasPrefix(errs[0].Error(), "spec.topology.workers.machineDeployments[0].variables.overrides[region].value"), errs[0].Error())
}

func TestValuesOverridesWin(t *testing.T) {
	v, err := Values(vars(t, "a", `1`, "b", `"x"`), vars(t, "b", `"y"`))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"a": float64(1), "b": "y"}, v)
}

func TestInvalidSchemaIsReported(t *testing.T) {
	bad := clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: []clusterv1.ClusterClassVariable{
		{Name: "x", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object", Properties: map[string]clusterv1.JSONSchemaProps{"a": {}}}}},
	}}}
	defs, err := Definitions(&bad)
	require.NoError(t, err)
	errs := NewCache(defs).Validate(vars(t, "x", `{"a":1}`), topoPath, true)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs.ToAggregate().Error(), "spec.variables[x].schema.openAPIV3Schema")
}

func TestStatusVariables(t *testing.T) {
	var vs []clusterv1.ClusterClassVariable
	require.NoError(t, yaml.Unmarshal([]byte(classVariables), &vs))
	st := StatusVariables(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: vs}})
	require.Len(t, st, len(vs))
	assert.Equal(t, "dnsServers", st[0].Name, "sorted by name")
	for _, v := range st {
		require.Len(t, v.Definitions, 1)
		assert.Equal(t, "inline", v.Definitions[0].From)
	}
	js, _ := json.Marshal(st[0])
	assert.Contains(t, string(js), `"from":"inline"`)
}

// TestStatusVariablesDiscovered: discovered definitions join the inline ones under the patch's
// name; equal definitions agree, a differing schema or required flag is a conflict that the
// Cluster side refuses to use.
func TestStatusVariablesDiscovered(t *testing.T) {
	str := clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}
	class := &clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: []clusterv1.ClusterClassVariable{
		{Name: "region", Required: ptrTo(true), Schema: str}, {Name: "proxy", Schema: str},
	}}}
	st := StatusVariables(class,
		Discovered{Patch: "lb", Variables: []clusterv1.ClusterClassVariable{{Name: "proxy", Schema: str}, {Name: "etcdTag", Schema: str}}},
		Discovered{Patch: "sec", Variables: []clusterv1.ClusterClassVariable{{Name: "region", Schema: str}}},
	)
	byName := map[string]clusterv1.ClusterClassStatusVariable{}
	var names []string
	for _, v := range st {
		byName[v.Name] = v
		names = append(names, v.Name)
	}
	assert.Equal(t, []string{"etcdTag", "proxy", "region"}, names)
	assert.Equal(t, "lb", byName["etcdTag"].Definitions[0].From)
	assert.Equal(t, ptrTo(false), byName["proxy"].DefinitionsConflict, "equal definitions agree")
	assert.Equal(t, []string{"inline", "lb"}, []string{byName["proxy"].Definitions[0].From, byName["proxy"].Definitions[1].From})
	assert.Equal(t, ptrTo(true), byName["region"].DefinitionsConflict, "required differs")

	class.Status.Variables = st
	defs, err := Definitions(class)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "variables with conflicting definitions: region")
	assert.Contains(t, defs, "etcdTag", "a discovered variable is usable")
}

// TestFalseFlagsMeanUnset: v1beta2 holds a schema's flags as pointers, and a flag set to false
// means what an unset one means. Such a schema compiles (the CRD schema libraries refuse
// x-kubernetes-preserve-unknown-fields: false, which Cluster API's
// convertToAPIExtensionsJSONSchemaProps therefore sets only when true), and definitions that differ
// only so agree (dropFalsePtrBool in Cluster API's addDefinitionToExistingStatusVariable).
func TestFalseFlagsMeanUnset(t *testing.T) {
	no := ptrTo(false)
	explicit := clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: no, Properties: map[string]clusterv1.JSONSchemaProps{
		"a": {Type: "array", UniqueItems: no, Items: &clusterv1.JSONSchemaProps{Type: "integer", ExclusiveMinimum: no, Minimum: ptrTo(int64(1))}}}}}
	unset := clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object", Properties: map[string]clusterv1.JSONSchemaProps{
		"a": {Type: "array", Items: &clusterv1.JSONSchemaProps{Type: "integer", Minimum: ptrTo(int64(1))}}}}}

	defs, err := Definitions(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: []clusterv1.ClusterClassVariable{{Name: "x", Schema: explicit}}}})
	require.NoError(t, err)
	c := NewCache(defs)
	require.Empty(t, c.CompileAll())
	assert.Empty(t, c.Validate(vars(t, "x", `{"a":[1,1]}`), topoPath, false), "uniqueItems: false, exclusiveMinimum: false")
	errs := c.Validate(vars(t, "x", `{"b":1}`), topoPath, false)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "fields not declared in the schema: b", "x-kubernetes-preserve-unknown-fields: false")

	st := StatusVariables(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: []clusterv1.ClusterClassVariable{{Name: "x", Schema: explicit}}}},
		Discovered{Patch: "p", Variables: []clusterv1.ClusterClassVariable{{Name: "x", Schema: unset}}})
	require.Len(t, st, 1)
	assert.Equal(t, ptrTo(false), st[0].DefinitionsConflict)
	assert.Equal(t, explicit, st[0].Definitions[0].Schema, "the definitions are kept as written")
}

// FuzzValidate: validation of arbitrary values never panics.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{`"x"`, `{"url":"u"}`, `[1,2]`, `{"a":{"b":[{}]}}`, `null`, `1e999`} {
		f.Add("httpProxy", s)
		f.Add("dnsServers", s)
	}
	var defs []clusterv1.ClusterClassVariable
	if err := yaml.Unmarshal([]byte(classVariables), &defs); err != nil {
		f.Fatal(err)
	}
	d, _ := Definitions(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: defs}})
	c := NewCache(d)
	f.Fuzz(func(t *testing.T, name, value string) {
		vs := []clusterv1.ClusterVariable{{Name: name, Value: apiextensionsv1.JSON{Raw: []byte(value)}}}
		_ = c.Validate(vs, topoPath, false)
		_, _ = c.Default(vs, topoPath)
	})
}
