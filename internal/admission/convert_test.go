package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/deploy/samples"
)

func review(t *testing.T, s *Server, desired string, objs ...any) *apiextensionsv1.ConversionResponse {
	t.Helper()
	req := apiextensionsv1.ConversionReview{Request: &apiextensionsv1.ConversionRequest{UID: "c-1", DesiredAPIVersion: desired}}
	for _, o := range objs {
		js, err := json.Marshal(o)
		require.NoError(t, err)
		req.Request.Objects = append(req.Request.Objects, runtime.RawExtension{Raw: js})
	}
	body, err := json.Marshal(req)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, PathConvert, bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var out apiextensionsv1.ConversionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotNil(t, out.Response)
	assert.EqualValues(t, "c-1", out.Response.UID, "the answer carries the request's UID")
	return out.Response
}

// TestConvert: the conversion webhook turns the sample Cluster and ClusterClass into v1beta2 and
// back (Cluster API's rules, model/api/conversion), passes objects already in the desired
// version through, and fails the review naming an object it cannot convert.
func TestConvert(t *testing.T) {
	class, cluster, err := samples.Typed()
	require.NoError(t, err)
	class.APIVersion, class.Kind = "cluster.x-k8s.io/v1beta1", "ClusterClass"
	cluster.APIVersion, cluster.Kind = "cluster.x-k8s.io/v1beta1", "Cluster"
	cluster.Spec.InfrastructureRef = nil
	s := &Server{Versions: func(group, kind string) (string, error) { return "v1beta1", nil }}

	resp := review(t, s, "cluster.x-k8s.io/v1beta2", cluster, class)
	require.Equal(t, metav1.StatusSuccess, resp.Result.Status, resp.Result.Message)
	require.Len(t, resp.ConvertedObjects, 2)
	hubs := make([]map[string]any, 2)
	for i, o := range resp.ConvertedObjects {
		require.NoError(t, json.Unmarshal(o.Raw, &hubs[i]))
		assert.Equal(t, "cluster.x-k8s.io/v1beta2", hubs[i]["apiVersion"])
	}
	name, _, _ := unstructured.NestedString(hubs[0], "spec", "topology", "classRef", "name")
	assert.Equal(t, "quick-start", name)

	resp = review(t, s, "cluster.x-k8s.io/v1beta1", hubs[0], hubs[1], cluster)
	require.Equal(t, metav1.StatusSuccess, resp.Result.Status, resp.Result.Message)
	require.Len(t, resp.ConvertedObjects, 3)
	var back map[string]any
	require.NoError(t, json.Unmarshal(resp.ConvertedObjects[0].Raw, &back))
	got, _, _ := unstructured.NestedString(back, "spec", "topology", "class")
	assert.Equal(t, "quick-start", got)
	same, _ := json.Marshal(cluster)
	assert.JSONEq(t, string(same), string(resp.ConvertedObjects[2].Raw), "already in the desired version: passed through")

	// A Cluster whose infrastructure kind the API server does not know cannot become v1beta1.
	hubs[0]["spec"].(map[string]any)["infrastructureRef"] = map[string]any{"apiGroup": "infrastructure.example.com", "kind": "Gone", "name": "x"}
	s.Versions = func(group, kind string) (string, error) { return "", fmt.Errorf("no kind %s in %s", kind, group) }
	resp = review(t, s, "cluster.x-k8s.io/v1beta1", hubs[0])
	assert.Equal(t, metav1.StatusFailure, resp.Result.Status)
	assert.Contains(t, resp.Result.Message, "Cluster default/demo spec.infrastructureRef: no kind Gone in infrastructure.example.com")
	assert.Empty(t, resp.ConvertedObjects)

	resp = review(t, s, "cluster.x-k8s.io/v1alpha4", cluster)
	assert.Equal(t, metav1.StatusFailure, resp.Result.Status)
	assert.Contains(t, resp.Result.Message, "Cluster default/demo: cannot convert cluster.x-k8s.io/v1beta1 to cluster.x-k8s.io/v1alpha4")
}
