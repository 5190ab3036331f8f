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

// TestConvertPartial: the webhook converts partial objects (what the API server converts while it
// merges a server-side apply made in one version with what managers own in the other) to
// exactly their fields, both ways: a v1beta2 Cluster naming only its control plane's replicas
// reads as a v1beta1 one naming only them (no class or version ""), and a v1beta1 ClusterClass
// naming one variable as a v1beta2 one naming it alone.
func TestConvertPartial(t *testing.T) {
	s := &Server{Versions: func(group, kind string) (string, error) { return "v1beta1", nil }}
	for _, tc := range []struct {
		desired  string
		in, want string
	}{
		{"cluster.x-k8s.io/v1beta1",
			`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"rc-0","namespace":"default"},"spec":{"topology":{"controlPlane":{"replicas":3}}}}`,
			`{"topology":{"controlPlane":{"replicas":3}}}`},
		{"cluster.x-k8s.io/v1beta2",
			`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"rc-0","namespace":"default"},"spec":{"topology":{"class":"quick-start-2"}}}`,
			`{"topology":{"classRef":{"name":"quick-start-2"}}}`},
		{"cluster.x-k8s.io/v1beta1",
			`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"ClusterClass","metadata":{"name":"qs","namespace":"default"},"spec":{"variables":[{"name":"region","required":true,"schema":{"openAPIV3Schema":{"type":"string"}}}]}}`,
			`{"variables":[{"name":"region","required":true,"schema":{"openAPIV3Schema":{"type":"string"}}}]}`},
		{"cluster.x-k8s.io/v1beta2",
			`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterClass","metadata":{"name":"qs","namespace":"default"},"spec":{"variables":[{"name":"region","schema":{"openAPIV3Schema":{"type":"string"}}}]}}`,
			`{"variables":[{"name":"region","schema":{"openAPIV3Schema":{"type":"string"}}}]}`},
	} {
		resp := review(t, s, tc.desired, json.RawMessage(tc.in))
		require.Equal(t, metav1.StatusSuccess, resp.Result.Status, resp.Result.Message)
		require.Len(t, resp.ConvertedObjects, 1)
		var out map[string]any
		require.NoError(t, json.Unmarshal(resp.ConvertedObjects[0].Raw, &out))
		assert.Equal(t, tc.desired, out["apiVersion"])
		assert.Nil(t, out["status"], "no status from nothing: %s", resp.ConvertedObjects[0].Raw)
		spec, _ := json.Marshal(out["spec"])
		assert.JSONEq(t, tc.want, string(spec), "%s to %s", tc.in, tc.desired)
	}
}
