package kube

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// TestHeldAfterDelete: the answer to a DELETE says whether the object went (a Status, or the
// object as it was, deleted at once) or finalizers hold it (the object with a deletionTimestamp
// and finalizers left).
func TestHeldAfterDelete(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		held       bool
	}{
		{"status", `{"kind":"Status","apiVersion":"v1","status":"Success"}`, false},
		{"object deleted at once", `{"kind":"SimMachineTemplate","apiVersion":"sim.topoflow.dev/v1","metadata":{"name":"t","namespace":"ns"}}`, false},
		{"held by a finalizer", `{"kind":"SimCluster","apiVersion":"sim.topoflow.dev/v1","metadata":{"name":"c","namespace":"ns",` +
			`"deletionTimestamp":"2026-11-26T20:00:00Z","finalizers":["sim.topoflow.dev/cleanup"]}}`, true},
		{"its last finalizer just removed", `{"kind":"SimCluster","apiVersion":"sim.topoflow.dev/v1","metadata":{"name":"c","namespace":"ns",` +
			`"deletionTimestamp":"2026-11-26T20:00:00Z"}}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u, err := heldAfterDelete([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if (u != nil) != tt.held {
				t.Errorf("held = %v, want %v", u != nil, tt.held)
			}
		})
	}
	if _, err := heldAfterDelete([]byte("not json")); err == nil {
		t.Error("an unreadable answer passed as an object gone")
	}
}

// TestDeleteReadsTheAnswer: a delete of a cached kind is one DELETE request at the object's path;
// the object held by a finalizer is remembered as deleting from the answer, with no read after.
func TestDeleteReadsTheAnswer(t *testing.T) {
	var mu sync.Mutex
	var requests []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if strings.HasSuffix(r.URL.Path, "/md") {
			requests = append(requests, r.Method+" "+r.URL.Path)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodDelete {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_, _ = w.Write([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns",` +
			`"resourceVersion":"7","deletionTimestamp":"2026-11-26T20:00:00Z","finalizers":["cluster.x-k8s.io/machinedeployment"]}}`))
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL, QPS: 1000, Burst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.cache = NewCache(ctx, c.Dynamic, slog.Default()) // the server serves no list: reads go past it
	if err := c.Delete(context.Background(), V1Beta1MachineDeployments, "ns", "md"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]string(nil), requests...)
	mu.Unlock()
	if want := "DELETE /apis/cluster.x-k8s.io/v1beta1/namespaces/ns/machinedeployments/md"; len(got) != 1 || got[0] != want {
		t.Fatalf("requests %v, want only %q", got, want)
	}
	k, _ := c.cache.newer(V1Beta1MachineDeployments, "ns/md", nil)
	obj, err := k.fresh(nil)
	if err != nil || obj == nil || obj.GetDeletionTimestamp() == nil || obj.GetResourceVersion() != "7" {
		t.Fatalf("the held object is not remembered as deleting: %v %v", obj, err)
	}
}
