// Package randfill fills API objects with random values for the property tests of model/api
// (the v1beta2 types against Cluster API's, the conversion adapters against Cluster API's
// conversion): one filler, so both tests explore objects the same way.
package randfill

import (
	"fmt"
	"math/rand"
	"reflect"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Filler sets random values, zero values included, in everything a value holds; the types of
// Kubernetes' API packages get values that encode (a JSON blob that is JSON, a time in seconds).
type Filler struct {
	R        *rand.Rand
	MaxDepth int
	// Annotations: objects' metadata gets annotations too.
	Annotations bool
	// Specials, when set, are strings given now and then in place of a random one (an API
	// version with a group, one that does not parse).
	Specials []string
}

// Fill fills v (addressable) at depth.
func (f Filler) Fill(v reflect.Value, depth int) {
	switch v.Addr().Interface().(type) {
	case *metav1.TypeMeta, *metav1.ListMeta, *unstructured.Unstructured:
		return
	case *metav1.ObjectMeta:
		m := metav1.ObjectMeta{Name: f.str(), Namespace: f.str(), Labels: f.labels()}
		if f.Annotations {
			m.Annotations = f.labels()
		}
		m.Generation = f.R.Int63n(5)
		v.Set(reflect.ValueOf(m))
		return
	case *metav1.Time:
		if f.R.Intn(4) > 0 {
			v.Set(reflect.ValueOf(metav1.Unix(f.R.Int63n(2_000_000_000), 0).Rfc3339Copy()))
		}
		return
	case *metav1.Duration:
		// Fractions of a second and more than MaxInt32 seconds, both cut by the conversion.
		d := time.Duration(f.R.Int63n(int64(100 * time.Second)))
		if f.R.Intn(10) == 0 {
			d = time.Duration(1<<31+f.R.Int63n(1000)) * time.Second
		}
		v.Set(reflect.ValueOf(metav1.Duration{Duration: d}))
		return
	case *apiextensionsv1.JSON:
		blobs := []string{`{"a":1,"b":["x"]}`, `"s"`, `3`, `true`, `[1,2]`, `{}`}
		v.Set(reflect.ValueOf(apiextensionsv1.JSON{Raw: []byte(blobs[f.R.Intn(len(blobs))])}))
		return
	case *intstr.IntOrString:
		if f.R.Intn(2) == 0 {
			v.Set(reflect.ValueOf(intstr.FromInt32(f.R.Int31n(10))))
		} else {
			v.Set(reflect.ValueOf(intstr.FromString(fmt.Sprintf("%d%%", f.R.Intn(100)))))
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
				f.Fill(v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if depth < f.MaxDepth && f.R.Intn(3) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			f.Fill(v.Elem(), depth+1)
		}
	case reflect.Slice:
		if depth < f.MaxDepth {
			n := f.R.Intn(3)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				f.Fill(v.Index(i), depth+1)
			}
		}
	case reflect.Map:
		if depth < f.MaxDepth {
			n := f.R.Intn(3)
			v.Set(reflect.MakeMapWithSize(v.Type(), n))
			for range n {
				e := reflect.New(v.Type().Elem()).Elem()
				f.Fill(e, depth+1)
				v.SetMapIndex(reflect.ValueOf(f.str()).Convert(v.Type().Key()), e)
			}
		}
	case reflect.String:
		v.SetString(f.str())
	case reflect.Bool:
		v.SetBool(f.R.Intn(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.R.Int63n(7) - 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.R.Intn(7)))
	default:
		panic(fmt.Sprintf("randfill: no value for %s", v.Type()))
	}
}

// str is a short string, empty a quarter of the time; with Specials, one of them now and then.
func (f Filler) str() string {
	if len(f.Specials) == 0 {
		if f.R.Intn(4) == 0 {
			return ""
		}
	} else {
		switch n := f.R.Intn(16); {
		case n < 4:
			return ""
		case n-4 < len(f.Specials):
			return f.Specials[n-4]
		}
	}
	const letters = "abcxyz-.1"
	b := make([]byte, 1+f.R.Intn(6))
	for i := range b {
		b[i] = letters[f.R.Intn(len(letters))]
	}
	return string(b)
}

func (f Filler) labels() map[string]string {
	if f.R.Intn(2) == 0 {
		return nil
	}
	return map[string]string{"k" + f.str(): f.str()}
}
