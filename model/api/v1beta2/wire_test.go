package v1beta2_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
)

// kinds pairs each kind of the package with Cluster API's type of that kind.
var kinds = map[string]struct {
	ours, capi func() any
}{
	"Cluster":            {func() any { return &v1beta2.Cluster{} }, func() any { return &capiv1beta2.Cluster{} }},
	"ClusterClass":       {func() any { return &v1beta2.ClusterClass{} }, func() any { return &capiv1beta2.ClusterClass{} }},
	"MachineDeployment":  {func() any { return &v1beta2.MachineDeployment{} }, func() any { return &capiv1beta2.MachineDeployment{} }},
	"MachinePool":        {func() any { return &v1beta2.MachinePool{} }, func() any { return &capiv1beta2.MachinePool{} }},
	"MachineHealthCheck": {func() any { return &v1beta2.MachineHealthCheck{} }, func() any { return &capiv1beta2.MachineHealthCheck{} }},
	"MachineSet":         {func() any { return &v1beta2.MachineSet{} }, func() any { return &capiv1beta2.MachineSet{} }},
	"Machine":            {func() any { return &v1beta2.Machine{} }, func() any { return &capiv1beta2.Machine{} }},
}

// document is one cluster.x-k8s.io/v1beta2 object of the repository's test data, as JSON.
type document struct {
	name, kind string
	json       []byte
}

// hubDocuments collects the v1beta2 documents of the repository: the goldens and inputs that are
// written in v1beta2, and, converted by Cluster API's own conversion (model/api/conversion), the
// v1beta1 samples and decoding seeds (what Cluster API stores for them).
func hubDocuments(t *testing.T) []document {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	var out []document
	add := func(file string, u *unstructured.Unstructured) {
		js, err := u.MarshalJSON()
		require.NoError(t, err)
		out = append(out, document{name: file + ": " + u.GetKind() + " " + u.GetName(), kind: u.GetKind(), json: js})
	}

	written := []string{
		"model/desired/testdata/book-input.yaml",
		"model/desired/testdata/book.golden.yaml",
		"model/desired/testdata/quickstart.golden.yaml",
		"model/api/conversion/testdata/cluster-v1beta2.json",
	}
	converted := []string{
		"deploy/samples/clusterclass.yaml",
		"deploy/samples/cluster.yaml",
		"deploy/capi/samples/clusterclass.yaml",
		"deploy/capi/samples/cluster.yaml",
	}
	seeds, err := filepath.Glob(filepath.Join(root, "model/decode/testdata/seeds/*.yaml"))
	require.NoError(t, err)
	for _, s := range seeds {
		rel, err := filepath.Rel(root, s)
		require.NoError(t, err)
		converted = append(converted, rel)
	}

	for _, file := range append(slices.Clone(written), converted...) {
		f, err := os.Open(filepath.Join(root, file))
		require.NoError(t, err)
		objs, err := decode.Documents(f)
		_ = f.Close()
		require.NoError(t, err, file)
		for _, u := range objs {
			if u.GroupVersionKind().Group != v1beta2.GroupVersion.Group {
				continue
			}
			if _, ok := kinds[u.GetKind()]; !ok {
				continue
			}
			if u.GroupVersionKind().Version == "v1beta1" {
				c, _, err := conversion.ToV1Beta2(u)
				require.NoError(t, err, file)
				if c.GetAPIVersion() != v1beta2.GroupVersion.String() {
					continue // a kind topoflow does not write, so conversion leaves it in v1beta1
				}
				u = c
			}
			add(file, u)
		}
	}
	// Every kind the goldens hold must be among the documents, so a change to the test data that
	// drops them is noticed.
	seen := map[string]bool{}
	for _, d := range out {
		seen[d.kind] = true
	}
	for _, k := range []string{"Cluster", "ClusterClass", "MachineDeployment", "MachinePool", "MachineHealthCheck"} {
		require.True(t, seen[k], "no v1beta2 %s among the test documents", k)
	}
	return out
}

func jsonMap(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(js, &m))
	return m
}

// Every v1beta2 document of the repository decodes strictly into the package's types (no field
// unknown to them) and encodes back to the same JSON.
func TestDocumentsRoundTrip(t *testing.T) {
	for _, d := range hubDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			obj := kinds[d.kind].ours()
			require.NoError(t, decode.StrictJSON(d.json, obj))
			out, err := json.Marshal(obj)
			require.NoError(t, err)
			assert.Equal(t, jsonMap(t, d.json), jsonMap(t, out))
		})
	}
}

// The same documents read by Cluster API's types and by ours encode to the same JSON.
func TestDocumentsEncodeAsClusterAPI(t *testing.T) {
	for _, d := range hubDocuments(t) {
		t.Run(d.name, func(t *testing.T) {
			theirs, ours := kinds[d.kind].capi(), kinds[d.kind].ours()
			require.NoError(t, decode.StrictJSON(d.json, theirs), "not a valid Cluster API v1beta2 document")
			require.NoError(t, decode.StrictJSON(d.json, ours))
			theirJSON, err := json.Marshal(theirs)
			require.NoError(t, err)
			ourJSON, err := json.Marshal(ours)
			require.NoError(t, err)
			assert.Equal(t, jsonMap(t, theirJSON), jsonMap(t, ourJSON))
		})
	}
}
