package v1beta2_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

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
				f := filler{rand.New(rand.NewSource(seed))}
				f.fill(reflect.ValueOf(theirs).Elem(), 0)
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

// filler sets random values, zero values included, in everything a value holds; the types of
// Kubernetes' API packages get values that encode (a JSON blob that is JSON, a time in seconds).
type filler struct{ r *rand.Rand }

const maxDepth = 8

func (f filler) fill(v reflect.Value, depth int) {
	switch v.Addr().Interface().(type) {
	case *metav1.TypeMeta, *metav1.ListMeta:
		return
	case *metav1.ObjectMeta:
		v.Set(reflect.ValueOf(metav1.ObjectMeta{Name: f.str(), Namespace: f.str(), Labels: f.labels(), Generation: f.r.Int63n(5)}))
		return
	case *metav1.Time:
		if f.r.Intn(4) > 0 {
			v.Set(reflect.ValueOf(metav1.Unix(f.r.Int63n(2_000_000_000), 0).Rfc3339Copy()))
		}
		return
	case *apiextensionsv1.JSON:
		blobs := []string{`{"a":1,"b":["x"]}`, `"s"`, `3`, `true`, `[1,2]`, `{}`}
		v.Set(reflect.ValueOf(apiextensionsv1.JSON{Raw: []byte(blobs[f.r.Intn(len(blobs))])}))
		return
	case *intstr.IntOrString:
		if f.r.Intn(2) == 0 {
			v.Set(reflect.ValueOf(intstr.FromInt32(f.r.Int31n(10))))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString(fmt.Sprintf("%d%%", f.r.Intn(100)))))
		}
		return
	case *metav1.LabelSelector:
		v.Set(reflect.ValueOf(metav1.LabelSelector{MatchLabels: f.labels()}))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if depth < maxDepth && f.r.Intn(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			f.fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if depth < maxDepth {
			n := f.r.Intn(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				f.fill(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if depth < maxDepth {
			n := f.r.Intn(3)
			v.Set(reflect.MakeMapWithSize(v.Type(), n))
			for range n {
				e := reflect.New(v.Type().Elem()).Elem()
				f.fill(e, depth+1)
				v.SetMapIndex(reflect.ValueOf(f.str()).Convert(v.Type().Key()), e)
			}
		}
	case reflect.String:
		v.SetString(f.str())
	case reflect.Bool:
		v.SetBool(f.r.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.r.Int63n(7) - 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.r.Intn(7)))
	default:
		panic(fmt.Sprintf("filler: no value for %s", v.Type()))
	}
}

// str is a short string, empty a quarter of the time.
func (f filler) str() string {
	if f.r.Intn(4) == 0 {
		return ""
	}
	const letters = "abcxyz-.1"
	b := make([]byte, 1+f.r.Intn(6))
	for i := range b {
		b[i] = letters[f.r.Intn(len(letters))]
	}
	return string(b)
}

func (f filler) labels() map[string]string {
	if f.r.Intn(2) == 0 {
		return nil
	}
	return map[string]string{"k" + f.str(): f.str()}
}
