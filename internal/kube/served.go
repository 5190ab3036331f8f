package kube

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// Cluster API v1.11+ serves cluster.x-k8s.io as v1beta2 and v1beta1 only through its conversion
// webhook (deprecated: every v1beta1 request draws a warning, and v1.16 stops serving it). topoflow
// computes on v1beta1 objects; this file is the edge where the client talks to the API server in
// the version it prefers. A caller names the v1beta1 resource (V1Beta1Clusters, V1Beta1MachineDeployments, ...)
// and gets v1beta1 objects; where the server prefers v1beta2 the request goes there and the
// objects cross through Cluster API's conversion (model/api/conversion). The cache holds what the
// server sent, one copy per resource.

// modelled are the cluster.x-k8s.io resources topoflow reads as v1beta1, by kind.
var modelled = map[string]string{
	"clusters": "Cluster", "clusterclasses": "ClusterClass", "machinedeployments": "MachineDeployment",
	"machinepools": "MachinePool", "machinehealthchecks": "MachineHealthCheck", "machinesets": "MachineSet", "machines": "Machine",
}

var (
	v1beta1 = clusterv1.GroupVersion
	v1beta2 = conversion.V1Beta2GroupVersion
)

// wire is the resource a request for gvr goes to: the v1beta2 one for a modelled v1beta1
// resource the API server prefers in v1beta2, else gvr. What discovery said is kept for the
// process; a kind it does not know (Machines where no Cluster API runs) is asked about again, and
// PreferredVersion keeps that cheap (it refreshes discovery at most once per unservedFor).
func (c *Client) wire(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	kind, ok := modelled[gvr.Resource]
	if !ok || gvr.GroupVersion() != v1beta1 {
		return gvr
	}
	if v, ok := c.served.Load(gvr.Resource); ok {
		return gvr.GroupResource().WithVersion(v.(string))
	}
	v, err := c.PreferredVersion(gvr.Group, kind)
	if err != nil {
		return gvr
	}
	if v != v1beta2.Version {
		v = gvr.Version
	}
	c.served.Store(gvr.Resource, v)
	return gvr.GroupResource().WithVersion(v)
}

// fromWire turns an object the API server sent as v1beta2 into the v1beta1 object topoflow
// computes on (the caller asked for v1beta1: asked != got); anything else is returned as it is.
// A Cluster or ClusterClass keeps the v1beta2 original in the conversion-data annotation, as
// Cluster API's conversion webhook serves it, so writing it back loses nothing.
func (c *Client) fromWire(asked schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if asked.GroupVersion() != v1beta1 {
		return u, nil
	}
	return conversion.ToV1Beta1(u, c.PreferredVersion)
}

// fromWireList is fromWire for every item.
func (c *Client) fromWireList(asked schema.GroupVersionResource, items []unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	if asked.GroupVersion() != v1beta1 || len(items) == 0 || items[0].GetAPIVersion() != v1beta2.String() {
		return items, nil
	}
	out := make([]unstructured.Unstructured, len(items))
	for i := range items {
		u, err := c.fromWire(asked, &items[i])
		if err != nil {
			return nil, err
		}
		out[i] = *u
	}
	return out, nil
}

// toWire is obj as it is written: a v1beta1 object of conversion.WrittenKinds becomes v1beta2
// where the server prefers that (a partial object stays partial). converted says it did.
func (c *Client) toWire(obj *unstructured.Unstructured) (out *unstructured.Unstructured, converted bool, err error) {
	if obj.GetAPIVersion() != v1beta1.String() {
		return obj, false, nil
	}
	for r, k := range modelled {
		if k == obj.GetKind() && c.wire(v1beta1.WithResource(r)).Version == v1beta2.Version {
			return conversion.ToV1Beta2(obj)
		}
	}
	return obj, false, nil
}

// patchToWire is a JSON merge patch of a modelled v1beta1 object as it is sent to wire. Its
// metadata (labels, annotations, finalizers, where null removes an entry) means the same in both
// versions and is sent as it is; a Cluster's spec (the references the topology sets) crosses
// through Cluster API's conversion. Other patches of a v1beta2 resource are refused rather than
// sent with v1beta1 field names.
func (c *Client) patchToWire(asked, wire schema.GroupVersionResource, patch []byte) ([]byte, error) {
	if asked == wire {
		return patch, nil
	}
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("a merge patch of %s: %w", asked.Resource, err)
	}
	for k := range p {
		if k != "metadata" && (k != "spec" || asked.Resource != "clusters") {
			return nil, fmt.Errorf("a merge patch of %s sets %q: topoflow patches only metadata (and a Cluster's spec) across versions", asked.Resource, k)
		}
	}
	spec, ok := p["spec"].(map[string]any)
	if !ok {
		return patch, nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": v1beta1.String(), "kind": "Cluster", "spec": spec}}
	w, _, err := c.toWire(u)
	if err != nil {
		return nil, err
	}
	p["spec"] = w.Object["spec"]
	return json.Marshal(p)
}

// GetUncached reads one object from the API server itself, not the cache (a decision that must
// see a change at once), in the version the caller names.
func (c *Client) GetUncached(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := c.Dynamic.Resource(c.wire(gvr)).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return c.fromWire(gvr, u)
}

// ListUncached lists the objects of a resource in ns matching a label selector from the API
// server itself, not the cache (a decision that must see a create at once), in the version the
// caller names.
func (c *Client) ListUncached(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]unstructured.Unstructured, error) {
	list, err := c.Dynamic.Resource(c.wire(gvr)).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	return c.fromWireList(gvr, list.Items)
}

// ApplyDryRun asks admission about an apply of obj (server-side, forced, nothing stored), in the
// version the API server prefers; the answer comes back in obj's version.
func (c *Client) ApplyDryRun(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	return c.apply(ctx, obj, fieldManager, "", true)
}

// Wire is the resource a watch of gvr goes to (see wire): for the starter's informers.
func (c *Client) Wire(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	return c.wire(gvr)
}

// ModelledTransform is an informer transform that turns each object the watch of Wire(asked)
// delivers into asked's version, without the conversion data (a watcher never writes back), so
// code that reads v1beta1 fields reads them from a v1beta2 watch.
func (c *Client) ModelledTransform(asked schema.GroupVersionResource) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		out, err := c.fromWire(asked, u)
		if err != nil || out == u {
			return out, err
		}
		ann := out.GetAnnotations()
		delete(ann, conversion.DataAnnotation)
		if len(ann) == 0 {
			ann = nil
		}
		out.SetAnnotations(ann)
		return out, nil
	}
}
