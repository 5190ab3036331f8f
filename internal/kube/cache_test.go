package kube

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
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
	rvOf := func(k known) string {
		u, err := k.fresh(nil)
		if err != nil {
			t.Fatal(err)
		}
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
			var informed *packed
			if tt.informed != nil {
				informed = packOf(t, tt.informed, nil)
			}
			got, found := c.newer(widgets, "ns/w", informed)
			if rvOf(got) != tt.want || found != tt.found {
				t.Errorf("newer = %s (found %v), want %s (found %v)", rvOf(got), found, tt.want, tt.found)
			}
			// AwaitSeen compares versions without decoding: the same answer.
			if v := got.resourceVersion(); (v == 0) != (tt.want == "gone") || (v != 0 && fmt.Sprint(v) != tt.want) {
				t.Errorf("resourceVersion = %d, want %s", v, tt.want)
			}
		})
	}
}

func packOf(t testing.TB, u *unstructured.Unstructured, keep map[string]bool) *packed {
	t.Helper()
	p, err := pack(u, keep)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*packed)
}

// TestPackKeepsOwnManagers: the informers hold an object without other managers' managedFields
// entries, and unpack it whole otherwise (numbers stay integers).
func TestPackKeepsOwnManagers(t *testing.T) {
	u := widget("1")
	u.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo"})
	u.Object["spec"] = map[string]any{"replicas": int64(3), "list": []any{"a", map[string]any{"b": true}}}
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "capi-topology", "operation": "Apply", "fieldsV1": map[string]any{"f:spec": map[string]any{}}},
		map[string]any{"manager": "kubectl", "operation": "Update"},
	}
	p := packOf(t, u, map[string]bool{"capi-topology": true})
	if p.meta.Name != "w" || p.meta.Namespace != "ns" || p.resourceVersion() != 1 || p.meta.Labels["cluster.x-k8s.io/cluster-name"] != "demo" {
		t.Fatalf("packed metadata %+v", p.meta)
	}
	if again, _ := pack(p, nil); again != any(p) {
		t.Fatal("packing a packed object changed it")
	}
	got, err := p.unpack()
	if err != nil {
		t.Fatal(err)
	}
	mfs := got.GetManagedFields()
	if len(mfs) != 1 || mfs[0].Manager != "capi-topology" || mfs[0].FieldsV1 == nil {
		t.Fatalf("kept %v", mfs)
	}
	if n, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); n != 3 {
		t.Fatalf("replicas = %v", got.Object["spec"])
	}
	u.SetManagedFields(mfs)
	if !equality.Semantic.DeepEqual(u.Object, got.Object) {
		t.Fatalf("unpacked %v, want %v", got.Object, u.Object)
	}
	// The copy is the caller's: changing it leaves the cache's alone.
	got.SetName("changed")
	if again, _ := p.unpack(); again.GetName() != "w" {
		t.Fatal("an unpacked copy shares the cache's")
	}
}

// TestRememberPacks: what the worker remembers of its writes is packed as the informers' copies
// are (own managers' managedFields only), the written object it was given stays as it was, and a
// read decodes a copy of its own.
func TestRememberPacks(t *testing.T) {
	c := NewCache(context.Background(), nil, slog.Default(), "topoflow")
	u := widget("7")
	u.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo"})
	u.Object["spec"] = map[string]any{"replicas": int64(3)}
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{
		map[string]any{"manager": "topoflow", "operation": "Apply"},
		map[string]any{"manager": "kubectl", "operation": "Update"},
	}
	before := u.DeepCopy()
	c.Remember(widgets, u)
	if !equality.Semantic.DeepEqual(u.Object, before.Object) {
		t.Fatalf("Remember changed the caller's object: %v", u.Object)
	}
	got, found := c.newer(widgets, "ns/w", nil)
	if !found || got.remembered == nil || got.labels()["cluster.x-k8s.io/cluster-name"] != "demo" {
		t.Fatalf("remembered %+v (found %v)", got, found)
	}
	obj, err := got.fresh(nil)
	if err != nil {
		t.Fatal(err)
	}
	if mfs := obj.GetManagedFields(); len(mfs) != 1 || mfs[0].Manager != "topoflow" {
		t.Fatalf("kept managers %v", mfs)
	}
	if n, _, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas"); n != 3 {
		t.Fatalf("spec %v", obj.Object["spec"])
	}
	obj.SetName("changed")
	if again, _ := got.fresh(nil); again.GetName() != "w" {
		t.Fatal("a read shares the remembered copy")
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
	got, err := clusterIndex(packOf(t, u, nil))
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
			c.caughtUp(widgets, packOf(t, widget(tt.informed), nil), tt.removal)
			if _, kept := c.recent[widgets]["ns/w"]; kept != tt.wantKept {
				t.Fatalf("kept = %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// TestListEveryNamespace: a list of a namespaced resource in every namespace ("") returns the
// objects of every namespace (the informer's namespace index of "" holds only cluster-scoped
// ones: a ClusterClass's delete guard lists the Clusters of every namespace).
func TestListEveryNamespace(t *testing.T) {
	objs := []runtime.Object{}
	for _, ns := range []string{"a", "b"} {
		u := widget("1")
		u.SetNamespace(ns)
		objs = append(objs, u)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{widgets: "WidgetList"}, objs...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := NewCache(ctx, dyn, slog.Default())
	for ns, want := range map[string]int{"": 2, "a": 1, "c": 0} {
		items, served, err := c.list(ctx, widgets, ns, k8slabels.Everything(), false, nil)
		if err != nil || !served || len(items) != want {
			t.Errorf("list in %q: %d items (served %v, %v), want %d", ns, len(items), served, err, want)
		}
	}
}
