package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerb names requests as the API server's audit log does.
func TestVerb(t *testing.T) {
	for _, tc := range []struct{ method, url, contentType, want string }{
		{"GET", "/api/v1/namespaces", "", "list"},
		{"GET", "/api/v1/namespaces/default", "", "get"},
		{"GET", "/api/v1/namespaces/default/secrets", "", "list"},
		{"GET", "/api/v1/namespaces/default/secrets/s", "", "get"},
		{"GET", "/apis/cluster.x-k8s.io/v1beta1/clusters", "", "list"},
		{"GET", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters", "", "list"},
		{"GET", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c", "", "get"},
		{"GET", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters?watch=true", "", "watch"},
		{"PATCH", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c", "application/apply-patch+yaml", "apply"},
		{"PATCH", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c", "application/merge-patch+json", "patch"},
		{"PUT", "/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c/status", "", "update"},
		{"POST", "/api/v1/namespaces/ns/secrets", "", "create"},
		{"DELETE", "/api/v1/namespaces/ns/secrets/s", "", "delete"},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		req.Header.Set("Content-Type", tc.contentType)
		assert.Equal(t, tc.want, Verb(req), "%s %s", tc.method, tc.url)
	}
}

// TestCountRequests: every request through the wrapped transport is counted by verb and code.
func TestCountRequests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/missing") {
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &http.Client{Transport: CountRequests(http.DefaultTransport)}
	before := testutil.ToFloat64(APIRequests.WithLabelValues("get", "secrets", "4xx"))
	resp, err := c.Get(srv.URL + "/api/v1/namespaces/ns/secrets/missing")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, before+1, testutil.ToFloat64(APIRequests.WithLabelValues("get", "secrets", "4xx")))
}

// TestResource names the resource and subresource a request is about.
func TestResource(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/namespaces":                                               "namespaces",
		"/api/v1/namespaces/default":                                       "namespaces",
		"/api/v1/namespaces/ns/secrets":                                    "secrets",
		"/api/v1/namespaces/ns/events/e":                                   "events",
		"/apis/cluster.x-k8s.io/v1beta1/clusters":                          "clusters",
		"/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c":          "clusters",
		"/apis/cluster.x-k8s.io/v1beta1/namespaces/ns/clusters/c/status":   "clusters/status",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x/status": "customresourcedefinitions/status",
		"/apis/cluster.x-k8s.io/v1beta1":                                   "",
		"/api/v1":                                                          "",
		"/version":                                                         "",
	} {
		assert.Equal(t, want, Resource(path), path)
	}
}

// TestTemporalHandler: the SDK's metrics land in the registry as temporal_* series.
func TestTemporalHandler(t *testing.T) {
	h, err := TemporalHandler()
	require.NoError(t, err)
	h.WithTags(map[string]string{"task_queue": "q"}).Counter("temporal_test_requests").Inc(3)
	families, err := Registry.Gather()
	require.NoError(t, err)
	found := false
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "temporal_test_requests") {
			found = true
			// The SDK's OpenTelemetry handler records counters as up-down counters (gauges here).
			m := f.GetMetric()[0]
			assert.Equal(t, 3.0, m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	assert.True(t, found, "temporal_test_requests gathered")
}
