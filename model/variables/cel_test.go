package variables

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// celVariables carry x-kubernetes-validations at the root, on a property and on list items.
const celVariables = `
- name: nodeRange
  schema:
    openAPIV3Schema:
      type: object
      properties:
        min: {type: integer}
        max: {type: integer}
      x-kubernetes-validations:
      - rule: self.min <= self.max
        message: min must not exceed max
        fieldPath: .min
- name: zone
  schema:
    openAPIV3Schema:
      type: string
      x-kubernetes-validations:
      - rule: self.startsWith('sim-')
        messageExpression: "'zone ' + self + ' is not a sim zone'"
- name: disks
  schema:
    openAPIV3Schema:
      type: array
      maxItems: 4
      items:
        type: object
        properties:
          sizeGiB: {type: integer}
        x-kubernetes-validations:
        - rule: self.sizeGiB % 10 == 0
          message: sizes are multiples of 10
`

func celCache(t *testing.T, defs string) *Cache {
	t.Helper()
	var vs []clusterv1.ClusterClassVariable
	require.NoError(t, yaml.Unmarshal([]byte(defs), &vs))
	d, err := Definitions(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: vs}})
	require.NoError(t, err)
	return NewCache(d)
}

func TestCELRules(t *testing.T) {
	c := celCache(t, celVariables)
	require.Empty(t, c.CompileAll())
	for _, tc := range []struct {
		name, variable, value string
		want                  string // "" means valid
	}{
		{"root rule holds", "nodeRange", `{"min":1,"max":3}`, ""},
		{"root rule fails, with message and fieldPath", "nodeRange", `{"min":5,"max":3}`,
			"spec.topology.variables[nodeRange].value.min: Invalid value: min must not exceed max"},
		{"messageExpression", "zone", `"aws-1"`, "zone aws-1 is not a sim zone"},
		{"rule holds on a string", "zone", `"sim-1"`, ""},
		{"rule on list items", "disks", `[{"sizeGiB":20},{"sizeGiB":25}]`, "spec.topology.variables[disks].value[1]: Invalid value: sizes are multiples of 10"},
		{"schema errors come first", "disks", `[{"sizeGiB":"x"}]`, "must be of type integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := c.Validate(vars(t, tc.variable, tc.value), topoPath, false)
			if tc.want == "" {
				assert.Empty(t, errs)
				return
			}
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

func TestCELRuleMustCompile(t *testing.T) {
	for _, tc := range []struct{ name, defs, want string }{
		{"syntax", `
- name: x
  schema:
    openAPIV3Schema:
      type: string
      x-kubernetes-validations: [{rule: "self.size( > 1"}]`, "spec.variables[x].schema.openAPIV3Schema.x-kubernetes-validations[0].rule"},
		{"unknown field, nested", `
- name: x
  schema:
    openAPIV3Schema:
      type: object
      properties:
        a:
          type: object
          properties: {b: {type: string}}
          x-kubernetes-validations: [{rule: "self.c == 'd'"}]`, "spec.variables[x].schema.openAPIV3Schema.properties[a].x-kubernetes-validations[0].rule"},
		{"messageExpression", `
- name: x
  schema:
    openAPIV3Schema:
      type: string
      x-kubernetes-validations: [{rule: "true", messageExpression: "1 +"}]`, "x-kubernetes-validations[0].messageExpression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := celCache(t, tc.defs).CompileAll()
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

// BenchmarkValidate measures what each reconcile pass does per Cluster: compile the class's
// definitions and validate the values, with and without CEL rules.
func BenchmarkValidate(b *testing.B) {
	for _, bc := range []struct{ name, defs, variable, value string }{
		{"schema only", classVariables, "httpProxy", `{"url":"http://proxy","noProxy":".svc"}`},
		{"with CEL rules", celVariables, "nodeRange", `{"min":1,"max":3}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var vs []clusterv1.ClusterClassVariable
			require.NoError(b, yaml.Unmarshal([]byte(bc.defs), &vs))
			d, err := Definitions(&clusterv1.ClusterClass{Spec: clusterv1.ClusterClassSpec{Variables: vs}})
			require.NoError(b, err)
			values := []clusterv1.ClusterVariable{{Name: bc.variable, Value: apiextensionsv1.JSON{Raw: []byte(bc.value)}}}
			b.ReportAllocs()
			for b.Loop() {
				if errs := NewCache(d).Validate(values, topoPath, false); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
