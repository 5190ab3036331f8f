package decode

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

func typedFor(kind string) any {
	switch kind {
	case "Cluster":
		return &clusterv1.Cluster{}
	case "ClusterClass":
		return &clusterv1.ClusterClass{}
	case "ClusterEndpoint":
		return &clusterv1.ClusterEndpoint{}
	case "MachineDeployment":
		return &clusterv1.MachineDeployment{}
	}
	return nil
}

// TestSeedExamplesRoundTrip: every v1beta1 example in the seeds decodes strictly into the model
// and re-encodes without losing a value.
func TestSeedExamplesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/seeds/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "proposal-foo") {
			continue // pre-v1beta1 shape; see TestStrictRejectsPreV1beta1Fields
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			docs, err := Documents(bytes.NewReader(data))
			require.NoError(t, err)
			require.NotEmpty(t, docs)
			for _, doc := range docs {
				out := typedFor(doc.GetKind())
				require.NotNil(t, out, "no type for kind %s", doc.GetKind())
				require.NoError(t, FromUnstructured(doc, out))
				again, err := json.Marshal(out)
				require.NoError(t, err)
				var back map[string]any
				require.NoError(t, json.Unmarshal(again, &back))
				assertNoLoss(t, doc.Object, back, "")
			}
		})
	}
}

// assertNoLoss checks that every non-empty value of in is present, equal, in out. Durations
// compare by value ("300s" re-encodes as "5m0s", as Cluster API's Go types do too).
func assertNoLoss(t *testing.T, in, out any, path string) {
	t.Helper()
	switch v := in.(type) {
	case map[string]any:
		om, ok := out.(map[string]any)
		if !assert.True(t, ok, "%s: want an object, got %T", path, out) {
			return
		}
		for k, iv := range v {
			if isEmpty(iv) {
				continue
			}
			ov, present := om[k]
			if assert.True(t, present, "%s.%s lost", path, k) {
				assertNoLoss(t, iv, ov, path+"."+k)
			}
		}
	case []any:
		ol, ok := out.([]any)
		if !assert.True(t, ok, "%s: want a list, got %T", path, out) || !assert.Len(t, ol, len(v), path) {
			return
		}
		for i := range v {
			assertNoLoss(t, v[i], ol[i], path+"[]")
		}
	case string:
		if os, ok := out.(string); ok && os != v {
			di, err1 := time.ParseDuration(v)
			do, err2 := time.ParseDuration(os)
			if err1 == nil && err2 == nil && di == do {
				return
			}
		}
		assert.Equal(t, in, out, path)
	default:
		assert.EqualValues(t, in, out, path)
	}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// TestStrictRejectsPreV1beta1Fields: the proposal's Cluster example predates v1beta1 (labels
// directly under controlPlane and machineDeployments[]); strict decoding names each such field.
func TestStrictRejectsPreV1beta1Fields(t *testing.T) {
	data, err := os.ReadFile("testdata/seeds/proposal-foo-cluster.yaml")
	require.NoError(t, err)
	err = Strict(data, &clusterv1.Cluster{})
	require.Error(t, err)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "Cluster bar/foo", fe.Object)
	msg := err.Error()
	for _, field := range []string{
		`"spec.topology.controlPlane.labels"`,
		`"spec.topology.controlPlane.annotations"`,
		`"spec.topology.workers.machineDeployments[0].labels"`,
	} {
		assert.Contains(t, msg, field)
	}
}

func TestStrict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		yaml    string
		wantErr []string
	}{
		{"valid", "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: a}\nspec: {topology: {class: c, version: v1.30.0}}\n", nil},
		{"typo in topology", "kind: Cluster\nmetadata: {name: a, namespace: ns}\nspec: {topology: {class: c, verison: v1.30.0}}\n",
			[]string{`Cluster ns/a`, `unknown field "spec.topology.verison"`}},
		{"duplicate field", "kind: Cluster\nmetadata: {name: a}\nspec: {paused: true, paused: false}\n", []string{"paused"}},
		{"wrong type", "kind: Cluster\nmetadata: {name: a}\nspec: {topology: {controlPlane: {replicas: three}}}\n", []string{"replicas"}},
		{"not yaml", "kind: [", []string{"not valid YAML"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Strict([]byte(tc.yaml), &clusterv1.Cluster{})
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestDocuments(t *testing.T) {
	in := "# leading comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\n" +
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n"
	docs, err := Documents(strings.NewReader(in))
	require.NoError(t, err)
	var names []string
	for _, d := range docs {
		names = append(names, d.GetName())
	}
	assert.Equal(t, []string{"a", "b", "c"}, names)

	_, err = Documents(strings.NewReader("kind: ConfigMap\n---\nkind: [\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "document 2")
}

// FuzzStrict: decoding arbitrary input never panics, and what decodes re-encodes and decodes again.
func FuzzStrict(f *testing.F) {
	files, _ := filepath.Glob("testdata/seeds/*.yaml")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c clusterv1.ClusterClass
		if err := Strict(data, &c); err != nil {
			return
		}
		js, err := json.Marshal(&c)
		require.NoError(t, err)
		y, err := yaml.JSONToYAML(js)
		require.NoError(t, err)
		var again clusterv1.ClusterClass
		require.NoError(t, Strict(y, &again))
	})
}

// TestLenient: an object read from the API server with a field the types do not know decodes,
// and the field comes back as a warning naming its path; a clean object has no warning.
func TestLenient(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"name": "c", "namespace": "ns"},
		"spec":     map[string]any{"paused": true, "futureField": "x"},
	}}
	var c clusterv1.Cluster
	warning, err := Lenient(u, &c)
	require.NoError(t, err)
	assert.True(t, c.Spec.Paused, "the known fields are decoded")
	require.NotNil(t, warning)
	assert.Contains(t, warning.Error(), `unknown field "spec.futureField"`)

	delete(u.Object["spec"].(map[string]any), "futureField")
	warning, err = Lenient(u, &c)
	require.NoError(t, err)
	assert.Nil(t, warning)
	assert.Error(t, FromUnstructured(&unstructured.Unstructured{Object: map[string]any{"kind": "Cluster", "spec": map[string]any{"futureField": 1}}}, &c), "FromUnstructured stays strict")
}
