package kube

import (
	"os"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// sampleObjects are the sample ClusterClass's objects (the templates a fleet's objects are made
// from), with a managedFields entry as the API server adds.
func sampleObjects(tb testing.TB) []*unstructured.Unstructured {
	tb.Helper()
	data, err := os.ReadFile("../../deploy/samples/clusterclass.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(data), "\n---") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.Object == nil {
			continue
		}
		u.SetNamespace("bench-1")
		u.SetResourceVersion("123456")
		u.SetUID("0b7c5a86-8d0c-4a8e-9f7e-3c7f1c6f4a11")
		u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
			"manager": "topoflow", "operation": "Apply", "apiVersion": u.GetAPIVersion(), "fieldsType": "FieldsV1",
			"time": "2026-11-27T12:00:00Z", "fieldsV1": map[string]any{"f:spec": u.Object["spec"]}}}
		out = append(out, u)
	}
	return out
}

// BenchmarkPackUnpack: what the cache spends per watch event (pack) and per read (unpack), and
// what it keeps (bytes/object against the JSON's).
func BenchmarkPackUnpack(b *testing.B) {
	objs := sampleObjects(b)
	if len(objs) == 0 {
		b.Fatal("no sample objects")
	}
	keep := map[string]bool{"topoflow": true}
	var raw, kept int
	for _, u := range objs {
		js, _ := u.MarshalJSON()
		raw += len(js)
		kept += len(packOf(b, u.DeepCopy(), keep).raw)
	}
	b.Logf("%d objects: JSON %d bytes, kept %d bytes (%.0f%%)", len(objs), raw, kept, 100*float64(kept)/float64(raw))
	b.Run("pack", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := packCopy(objs[i%len(objs)], keep); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-json-only", func(b *testing.B) {
		js := make([][]byte, len(objs))
		for i, u := range objs {
			js[i], _ = u.MarshalJSON()
		}
		for i := 0; b.Loop(); i++ {
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js[i%len(js)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unpack", func(b *testing.B) {
		ps := make([]*packed, len(objs))
		for i, u := range objs {
			ps[i] = packOf(b, u.DeepCopy(), keep)
		}
		for i := 0; b.Loop(); i++ {
			if _, err := ps[i%len(ps)].unpack(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
