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

// TestPlanDefaultsToClusterAPI114: without --cluster-api, `starter plan -f` plans for a Cluster
// API v1.14 management cluster, whose topology controller writes the topology and the owner
// references to the Cluster as cluster.x-k8s.io/v1beta2 (Cluster API v1.14.2:
// computeMachineDeployment, computeControlPlaneInfrastructureMachineTemplate); --cluster-api
// v1.10 names a management cluster that has only v1beta1.
func TestPlanDefaultsToClusterAPI114(t *testing.T) {
	versions := func(args ...string) (objects, owners map[string]bool) {
		t.Helper()
		var out, errOut bytes.Buffer
		require.NoError(t, runPlan(append([]string{"-f", planFile(t, nil), "-o", "json"}, args...), &out, &errOut))
		var list struct {
			Items []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					OwnerReferences []struct{ APIVersion, Kind string } `json:"ownerReferences"`
				} `json:"metadata"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal(out.Bytes(), &list))
		objects, owners = map[string]bool{}, map[string]bool{}
		for _, o := range list.Items {
			if strings.HasPrefix(o.APIVersion, "cluster.x-k8s.io/") {
				objects[o.APIVersion] = true
			}
			for _, r := range o.Metadata.OwnerReferences {
				if r.Kind == "Cluster" {
					owners[r.APIVersion] = true
				}
			}
		}
		return objects, owners
	}
	objects, owners := versions()
	assert.Equal(t, map[string]bool{"cluster.x-k8s.io/v1beta2": true}, objects, "the default: Cluster API v1.14")
	assert.Equal(t, map[string]bool{"cluster.x-k8s.io/v1beta2": true}, owners)
	objects, owners = versions("--cluster-api", "v1.10", "--api-version", "v1beta1")
	assert.Equal(t, map[string]bool{"cluster.x-k8s.io/v1beta1": true}, objects, "--cluster-api v1.10")
	assert.Equal(t, map[string]bool{"cluster.x-k8s.io/v1beta1": true}, owners)
}
