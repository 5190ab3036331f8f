package v1beta2_test

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/api/internal/randfill"
	"github.com/topoflow/topoflow/model/decode"
)

// Property: any object Cluster API's v1beta2 types encode (random values in every field, at
// random depths), as Cluster API reads it back, decodes strictly into the package's types and
// encodes back to the same JSON, the notNeeded fields aside. The documents of the repository test real shapes; this one reaches
// the fields they never set.
func TestRandomObjectsEncodeAsClusterAPI(t *testing.T) {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, kind := range names {
		t.Run(kind, func(t *testing.T) {
			for seed := int64(1); seed <= 200; seed++ {
				theirs := kinds[kind].capi()
				randfill.Filler{R: rand.New(rand.NewSource(seed)), MaxDepth: 8}.Fill(reflect.ValueOf(theirs).Elem(), 0)
				// The JSON as Cluster API reads it back: a Go value can hold what JSON cannot say
				// (an empty but non-nil list makes its struct non-zero, so "pods": {} is written,
				// and read back as zero).
				again := kinds[kind].capi()
				require.NoError(t, json.Unmarshal(mustMarshal(t, theirs), again))
				want := jsonMap(t, mustMarshal(t, again))
				drop(want, kind)
				in := mustMarshal(t, want)

				ours := kinds[kind].ours()
				if !assert.NoError(t, decode.StrictJSON(in, ours), "seed %d", seed) {
					return
				}
				out, err := json.Marshal(ours)
				require.NoError(t, err)
				if !assert.Equal(t, want, jsonMap(t, out), "seed %d", seed) {
					return
				}
			}
		})
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	js, err := json.Marshal(v)
	require.NoError(t, err)
	return js
}

// drop removes the notNeeded paths of kind from an object's JSON map (paths of nested objects
// only; one inside a list would need walking the list).
func drop(obj map[string]any, kind string) {
	for _, n := range notNeeded {
		k, path, _ := strings.Cut(n, ":")
		if k != kind {
			continue
		}
		if strings.ContainsAny(path, "[{") {
			panic("drop: cannot remove " + n)
		}
		parts := strings.Split(path, ".")
		m := obj
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				m = nil
				break
			}
			m = next
		}
		if m != nil {
			delete(m, parts[len(parts)-1])
		}
	}
}
