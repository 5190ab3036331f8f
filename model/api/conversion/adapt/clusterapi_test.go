package adapt_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	"github.com/topoflow/topoflow/model/api/internal/randfill"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
)

// The adapters are Cluster API's conversion restated: for any object, the hub value an adapter
// gives encodes to the JSON model/api/conversion gives (Cluster API v1.14's generated conversion
// and conversion webhook, on Cluster API's own types). The repository's documents test real
// shapes, random objects every field.

// hubJSON is what Cluster API's conversion makes of a v1beta1 object, and what the adapter makes.
type hubJSON struct {
	clusterAPI func(v1beta1JSON []byte) (map[string]any, error)
	adapter    func(obj any) (any, error)
	v1beta1    func() any
	// unique gives a random object's list entries the distinct keys the API server would insist
	// on (Cluster API's conversion pairs entries up by them).
	unique func(obj any)
	// depth is how deep random values go (a variable schema contains schemas, so its kind
	// stops earlier).
	depth int
}

var kinds = map[string]hubJSON{
	"ClusterClass": {
		clusterAPI: conversion.ClusterClassV1Beta2,
		adapter:    func(o any) (any, error) { return adapt.ClusterClassToHub(o.(*v1beta1.ClusterClass)), nil },
		v1beta1:    func() any { return &v1beta1.ClusterClass{} },
		depth:      8,
		unique: func(o any) {
			c := o.(*v1beta1.ClusterClass)
			for i := range c.Spec.Variables {
				c.Spec.Variables[i].Name = fmt.Sprintf("v%d", i)
			}
			for i := range c.Spec.Patches {
				c.Spec.Patches[i].Name = fmt.Sprintf("p%d", i)
			}
			for i := range c.Status.Variables {
				c.Status.Variables[i].Name = fmt.Sprintf("v%d", i)
				for j := range c.Status.Variables[i].Definitions {
					c.Status.Variables[i].Definitions[j].From = fmt.Sprintf("f%d", j)
				}
			}
		},
	},
	"Cluster": {
		clusterAPI: conversion.ClusterV1Beta2,
		adapter:    func(o any) (any, error) { return adapt.ClusterToHub(o.(*v1beta1.Cluster)) },
		v1beta1:    func() any { return &v1beta1.Cluster{} },
		unique:     func(any) {},
		depth:      16,
	},
	"MachineDeployment": {
		clusterAPI: func(js []byte) (map[string]any, error) { return conversion.ObjectV1Beta2("MachineDeployment", js) },
		adapter:    func(o any) (any, error) { return adapt.MachineDeploymentToHub(o.(*v1beta1.MachineDeployment)) },
		v1beta1:    func() any { return &v1beta1.MachineDeployment{} },
		unique:     func(any) {},
		depth:      16,
	},
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	require.NoError(t, err)
	return js
}

// asMap reads JSON as an object read from the API server reads (whole numbers as int64), as
// model/api/conversion gives it.
func asMap(t *testing.T, js []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, utiljson.Unmarshal(js, &m))
	return m
}

// sameAsClusterAPI converts in both ways and compares; an error of Cluster API's conversion must
// be an error of the adapter's.
func sameAsClusterAPI(t *testing.T, kind string, in any) bool {
	t.Helper()
	k := kinds[kind]
	want, wantErr := k.clusterAPI(mustMarshal(t, in))
	got, gotErr := k.adapter(in)
	if wantErr != nil || gotErr != nil {
		return assert.Equal(t, wantErr != nil, gotErr != nil, "errors: Cluster API %v, adapter %v", wantErr, gotErr)
	}
	return assert.Equal(t, withoutNulls(want), withoutNulls(asMap(t, mustMarshal(t, got))))
}

// withoutNulls drops null values, which an API object does not tell from absent ones (a zero
// time marshals as null; model/api/conversion leaves out fields its input did not set).
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

func TestSamplesConvertAsClusterAPI(t *testing.T) {
	class, cluster, err := samples.Typed()
	require.NoError(t, err)
	sameAsClusterAPI(t, "ClusterClass", class)
	sameAsClusterAPI(t, "Cluster", cluster)

	files, err := filepath.Glob("../../../decode/testdata/seeds/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]int{}
	for _, file := range files {
		f, err := os.Open(file)
		require.NoError(t, err)
		docs, err := decode.Documents(f)
		f.Close()
		require.NoError(t, err, file)
		for _, u := range docs {
			k, ok := kinds[u.GetKind()]
			if !ok || u.GetAPIVersion() != "cluster.x-k8s.io/v1beta1" {
				continue
			}
			obj := k.v1beta1()
			_, err := decode.Lenient(u, obj)
			require.NoError(t, err, file)
			t.Run(filepath.Base(file)+"/"+u.GetName(), func(t *testing.T) { sameAsClusterAPI(t, u.GetKind(), obj) })
			seen[u.GetKind()]++
		}
	}
	assert.NotZero(t, seen["ClusterClass"])
	assert.NotZero(t, seen["Cluster"])
}

// Property: random v1beta1 objects (random values in every field, at random depths) convert as
// Cluster API converts them.
func TestRandomObjectsConvertAsClusterAPI(t *testing.T) {
	for kind, k := range kinds {
		t.Run(kind, func(t *testing.T) {
			for seed := int64(1); seed <= 300; seed++ {
				random := k.v1beta1()
				testFiller(seed, k.depth).Fill(reflect.ValueOf(random).Elem(), 0)
				k.unique(random)
				// The object as its JSON reads back: a Go value can hold what JSON cannot say (an
				// empty but non-nil map makes its struct non-zero).
				in := k.v1beta1()
				require.NoError(t, json.Unmarshal(mustMarshal(t, random), in))
				if !sameAsClusterAPI(t, kind, in) {
					t.Logf("seed %d: %s", seed, mustMarshal(t, in))
					return
				}
			}
		})
	}
}

// testFiller is the adapters' random filler: annotations too, and now and then an API version
// with a group or one that does not parse, where a string goes.
func testFiller(seed int64, maxDepth int) randfill.Filler {
	return randfill.Filler{R: rand.New(rand.NewSource(seed)), MaxDepth: maxDepth, Annotations: true,
		Specials: []string{"infrastructure.cluster.x-k8s.io/v1beta1", "a/b/c"}}
}
