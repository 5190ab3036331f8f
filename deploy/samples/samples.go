// Package samples embeds the sample ClusterClass (with its templates) and Cluster, so tests
// read the very manifests a newcomer applies.
package samples

import (
	"bytes"
	"embed"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
)

//go:embed clusterclass.yaml cluster.yaml
var files embed.FS

// Objects returns every document of clusterclass.yaml, then of cluster.yaml.
func Objects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, f := range []string{"clusterclass.yaml", "cluster.yaml"} {
		data, err := files.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := decode.Documents(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// Typed returns the sample ClusterClass and Cluster decoded (strictly, as plan -f reads files).
func Typed() (*clusterv1.ClusterClass, *clusterv1.Cluster, error) {
	docs, err := Objects()
	if err != nil {
		return nil, nil, err
	}
	class, cluster := &clusterv1.ClusterClass{}, &clusterv1.Cluster{}
	for _, d := range docs {
		switch d.GetKind() {
		case "ClusterClass":
			err = decode.FromUnstructured(d, class)
		case "Cluster":
			err = decode.FromUnstructured(d, cluster)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return class, cluster, nil
}
