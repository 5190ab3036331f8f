package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRequestClusterVersion(t *testing.T) {
	for _, tc := range []struct {
		annotations map[string]string
		want, err   string
	}{
		{nil, ClusterV1Beta2, ""},
		{map[string]string{RequestClusterVersionAnnotation: "v1beta2"}, ClusterV1Beta2, ""},
		{map[string]string{RequestClusterVersionAnnotation: "v1beta1"}, ClusterV1Beta1, ""},
		{map[string]string{RequestClusterVersionAnnotation: "v1beta3"}, "", `metadata.annotations[topoflow.dev/request-cluster-version] is "v1beta3"`},
		{map[string]string{RequestClusterVersionAnnotation: ""}, "", `is ""`},
	} {
		cfg := &ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext", Annotations: tc.annotations}}
		got, err := RequestClusterVersion(cfg)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: got %q, %v; want %q, error containing %q", tc.annotations, got, err, tc.want, tc.err)
		}
	}
}
