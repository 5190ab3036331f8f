package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

func planFile(t *testing.T, edit func(string) string) string {
	t.Helper()
	var parts []string
	for _, f := range []string{"clusterclass.yaml", "cluster.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "samples", f))
		require.NoError(t, err)
		parts = append(parts, string(b))
	}
	in := strings.Join(parts, "\n---\n")
	if edit != nil {
		in = edit(in)
	}
	p := filepath.Join(t.TempDir(), "plan.yaml")
	require.NoError(t, os.WriteFile(p, []byte(in), 0o600))
	return p
}

func TestPlanYAMLAndJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, runPlan([]string{"-f", planFile(t, nil), "--seed", "3"}, &out, &errOut))
	var list map[string]any
	require.NoError(t, yaml.Unmarshal(out.Bytes(), &list), "YAML output parses")
	assert.Equal(t, "List", list["kind"])
	assert.Len(t, list["items"], 16, "15 topology objects and the Cluster intent")

	var again bytes.Buffer
	require.NoError(t, runPlan([]string{"-f", planFile(t, nil), "--seed", "3"}, &again, &errOut))
	assert.Equal(t, out.String(), again.String(), "same seed, same plan")

	out.Reset()
	require.NoError(t, runPlan([]string{"-f", planFile(t, nil), "-o", "json"}, &out, &errOut))
	require.NoError(t, json.Unmarshal(out.Bytes(), &list), "JSON output parses")
	assert.Len(t, list["items"], 16)
}

func TestPlanInvalidInputListsEveryError(t *testing.T) {
	path := planFile(t, func(s string) string {
		s = strings.Replace(s, "      value: sim-west-2", "      value: sim-mars-1", 1)
		return strings.Replace(s, "            value: sim.xlarge", "            value: XL", 1)
	})
	var out, errOut bytes.Buffer
	err := runPlan([]string{"-f", path}, &out, &errOut)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "Cluster default/demo is invalid:")
	assert.Contains(t, msg, `spec.topology.variables[region].value: Unsupported value: "sim-mars-1"`)
	assert.Contains(t, msg, "spec.topology.workers.machineDeployments[md-1].variables.overrides[workerInstanceType].value")
	assert.Equal(t, 3, strings.Count(msg, "\n")+1, "a header and one line per error")
	assert.Empty(t, out.String(), "nothing printed on invalid input")
}

func TestPlanFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	assert.ErrorContains(t, runPlan([]string{}, &out, &errOut), "exactly one of -f, --cluster or --class")
	assert.ErrorContains(t, runPlan([]string{"-f", "x", "-o", "xml"}, &out, &errOut), `unknown output format "xml"`)
	assert.ErrorContains(t, runPlan([]string{"--cluster", "noslash"}, &out, &errOut), "want NAMESPACE/NAME")
	assert.ErrorContains(t, runPlan([]string{"-f", filepath.Join(t.TempDir(), "missing.yaml")}, &out, &errOut), "no such file")
}
