package kube

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/rest"
)

// TestUnknownKindRefreshesOnce: a kind the API server does not serve (Machines beside no Cluster
// API core, asked for on every pass) costs one discovery refresh, not one per ask.
func TestUnknownKindRefreshesOnce(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = w.Write([]byte(`{"kind":"APIVersions","versions":["v1"]}`))
		case "/api/v1":
			_, _ = w.Write([]byte(`{"kind":"APIResourceList","groupVersion":"v1","resources":[]}`))
		case "/apis":
			_, _ = w.Write([]byte(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PreferredVersion("cluster.x-k8s.io", "Machine"); err == nil {
		t.Fatal("an unserved kind has a version")
	}
	first := requests.Load()
	for range 20 {
		if _, err := c.PreferredVersion("cluster.x-k8s.io", "Machine"); err == nil {
			t.Fatal("an unserved kind has a version")
		}
	}
	if n := requests.Load(); n != first {
		t.Fatalf("%d discovery requests after the first ask (%d), want none until unservedFor has passed", n-first, first)
	}
}
