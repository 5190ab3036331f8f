package kube

import (
	"context"
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var widgets = schema.GroupVersionResource{Group: "example.io", Version: "v1", Resource: "widgets"}

func widget(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.io/v1", "kind": "Widget"}}
	u.SetNamespace("ns")
	u.SetName("w")
	u.SetResourceVersion(rv)
	return u
}

// TestReadYourWrites: a read returns the newer of the informer's copy and what the worker wrote,
// read or deleted, so a pass never goes back behind what this worker already saw.
func TestReadYourWrites(t *testing.T) {
	rvOf := func(u *unstructured.Unstructured) string {
		if u == nil {
			return "gone"
		}
		return u.GetResourceVersion()
	}
	tests := []struct {
		name     string
		steps    func(c *Cache)
		informed *unstructured.Unstructured
		want     string
		found    bool
	}{
		{"informer only", func(*Cache) {}, widget("5"), "5", true},
		{"unknown", func(*Cache) {}, nil, "gone", false},
		{"written, informer behind", func(c *Cache) { c.Remember(widgets, widget("7")) }, widget("5"), "7", true},
		{"written, informer caught up", func(c *Cache) { c.Remember(widgets, widget("7")) }, widget("7"), "7", true},
		{"written, informer ahead", func(c *Cache) { c.Remember(widgets, widget("7")) }, widget("9"), "9", true},
		{"created, informer has not seen it", func(c *Cache) { c.Remember(widgets, widget("7")) }, nil, "7", true},
		{"an older copy does not replace a newer one", func(c *Cache) {
			c.Remember(widgets, widget("7"))
			c.Remember(widgets, widget("6"))
		}, widget("5"), "7", true},
		{"deleted, informer still has it", func(c *Cache) {
			c.Remember(widgets, widget("7"))
			c.Forget(widgets, "ns", "w", 0)
		}, widget("7"), "gone", true},
		{"deleted, then created again (informer newer)", func(c *Cache) {
			c.Remember(widgets, widget("7"))
			c.Forget(widgets, "ns", "w", 0)
		}, widget("12"), "12", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(context.Background(), nil, slog.Default())
			tt.steps(c)
			got, found := c.newer(widgets, "ns/w", tt.informed)
			if rvOf(got) != tt.want || found != tt.found {
				t.Errorf("newer = %s (found %v), want %s (found %v)", rvOf(got), found, tt.want, tt.found)
			}
		})
	}
}

// TestTrimKeepsOwnManagers: the cache drops other managers' managedFields entries.
func TestTrimKeepsOwnManagers(t *testing.T) {
	c := NewCache(context.Background(), nil, slog.Default(), "capi-topology")
	u := widget("1")
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "capi-topology", "operation": "Apply"},
		map[string]any{"manager": "kubectl", "operation": "Update"},
	}
	out, _ := c.trim(u)
	mfs := out.(*unstructured.Unstructured).GetManagedFields()
	if len(mfs) != 1 || mfs[0].Manager != "capi-topology" {
		t.Fatalf("kept %v", mfs)
	}
}

// TestDeletedUncachedObject: a deleted object of an uncached resource (the shim Secret) is
// remembered as deleted until it is created again.
func TestDeletedUncachedObject(t *testing.T) {
	c := NewCache(context.Background(), nil, slog.Default())
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if c.deleted(secrets, "ns", "s") {
		t.Fatal("deleted before any delete")
	}
	c.Forget(secrets, "ns", "s", 0)
	if !c.deleted(secrets, "ns", "s") {
		t.Fatal("not remembered as deleted")
	}
	c.created(secrets, "ns", "s")
	if c.deleted(secrets, "ns", "s") {
		t.Fatal("still deleted after a create")
	}
}

// TestClusterIndex: objects are indexed by namespace and their Cluster's name.
func TestClusterIndex(t *testing.T) {
	u := widget("1")
	u.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo"})
	got, err := clusterIndex(u)
	if err != nil || len(got) != 1 || got[0] != "ns/demo" {
		t.Fatalf("clusterIndex = %v, %v", got, err)
	}
	if got, _ := clusterIndex(widget("1")); len(got) != 0 {
		t.Fatalf("an object of no Cluster indexed as %v", got)
	}
}

// TestCaughtUp: what the worker remembers goes once the informer delivers it (or newer); a
// remembered delete, or a remembered object a finalizer holds, once the informer delivers the
// removal.
func TestCaughtUp(t *testing.T) {
	tests := []struct {
		name     string
		remember func(c *Cache)
		informed string // resourceVersion the informer delivers
		removal  bool   // the informer delivers the object's removal
		wantKept bool
	}{
		{"written, informer behind", func(c *Cache) { c.Remember(widgets, widget("7")) }, "6", false, true},
		{"written, informer caught up", func(c *Cache) { c.Remember(widgets, widget("7")) }, "7", false, false},
		{"deleted, an update the informer had before", func(c *Cache) { c.Forget(widgets, "ns", "w", 7) }, "7", false, true},
		{"deleted, the removal arrives", func(c *Cache) { c.Forget(widgets, "ns", "w", 7) }, "7", true, false},
		// After this worker's delete, a finalizer holds the object: it is remembered terminating.
		{"terminating, an older removal", func(c *Cache) { c.Remember(widgets, widget("9")) }, "8", true, true},
		{"terminating, the removal arrives", func(c *Cache) { c.Remember(widgets, widget("9")) }, "9", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(context.Background(), nil, slog.Default())
			tt.remember(c)
			c.caughtUp(widgets, widget(tt.informed), tt.removal)
			if _, kept := c.recent[widgets]["ns/w"]; kept != tt.wantKept {
				t.Fatalf("kept = %v, want %v", kept, tt.wantKept)
			}
		})
	}
}
