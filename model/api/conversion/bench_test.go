package conversion

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/deploy/samples"
)

// BenchmarkToV1Beta2 converts the sample's Cluster and ClusterClass as the worker reads them from
// a server that serves only v1beta1 (each cached copy once, see internal/kube's packed.unpackAs).
func BenchmarkToV1Beta2(b *testing.B) {
	class, cluster := servedSample(b)
	for _, tc := range []struct {
		name string
		obj  any
	}{{"Cluster", cluster}, {"ClusterClass", class}} {
		b.Run(tc.name, func(b *testing.B) {
			js, err := json.Marshal(tc.obj)
			if err != nil {
				b.Fatal(err)
			}
			u := &unstructured.Unstructured{}
			if err := u.UnmarshalJSON(js); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := ToV1Beta2(u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToV1Beta1 converts the sample's Cluster, read as v1beta2, back as the worker writes it
// to a server that serves only v1beta1.
func BenchmarkToV1Beta1(b *testing.B) {
	_, cluster, err := samples.Typed()
	if err != nil {
		b.Fatal(err)
	}
	js, err := json.Marshal(cluster)
	if err != nil {
		b.Fatal(err)
	}
	hub, err := ClusterV1Beta2(js)
	if err != nil {
		b.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: hub}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ToV1Beta1(u, versions); err != nil {
			b.Fatal(err)
		}
	}
}
