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
// webhook (deprecated: every v1beta1 request draws a warning, and v1.16 stops serving it), while
// Cluster API before v1.11, and topoflow's own CRDs (deploy/crds; its MachinePool CRD on every
// stack), serve v1beta1 only. This file is the edge where the client talks to the API server in
// the version it prefers. A caller names a modelled resource in either version: v1beta2 (Clusters,
// MachineDeployments, ...), the hub the model computes on, or v1beta1 (V1Beta1Clusters, ...), kept
// for callers not yet ported. The request goes to the version the server prefers (wire), and the
// objects cross between the two versions through model/api/conversion only, so the caller gets
// the version it named. The cache holds what the server sent, one copy per resource.

// modelled are the cluster.x-k8s.io resources the client converts between v1beta1 and v1beta2,
// with their kinds.
var modelled = map[string]string{
	"clusters": "Cluster", "clusterclasses": "ClusterClass", "machinedeployments": "MachineDeployment",
	"machinepools": "MachinePool", "machinehealthchecks": "MachineHealthCheck", "machinesets": "MachineSet", "machines": "Machine",
}

var (
	v1beta1 = clusterv1.GroupVersion
	v1beta2 = conversion.V1Beta2GroupVersion
)

// modelledKind is the resource of a modelled kind.
func modelledKind(kind string) (resource string, ok bool) {
	for r, k := range modelled {
		if k == kind {
			return r, true
		}
	}
	return "", false
}

// convertible says whether gv is one of the two versions the client converts between.
func convertible(gv schema.GroupVersion) bool { return gv == v1beta1 || gv == v1beta2 }

// wire is the resource a request for gvr goes to: for a modelled resource named in either
// version, that resource in the version the API server prefers; else gvr (also when discovery
// cannot tell, or the server prefers a version the client cannot convert to). What discovery said
// is kept for the process; a kind it does not know (Machines where no Cluster API runs) is asked
// about again, and PreferredVersion keeps that cheap (it refreshes discovery at most once per
// unservedFor).
func (c *Client) wire(gvr schema.GroupVersionResource) schema.GroupVersionResource {
	kind, ok := modelled[gvr.Resource]
	if !ok || !convertible(gvr.GroupVersion()) {
		return gvr
	}
	if v, ok := c.served.Load(gvr.Resource); ok {
		return gvr.GroupResource().WithVersion(v.(string))
	}
	v, err := c.PreferredVersion(gvr.Group, kind)
	if err != nil || (v != v1beta1.Version && v != v1beta2.Version) {
		return gvr
	}
	c.served.Store(gvr.Resource, v)
	return gvr.GroupResource().WithVersion(v)
}

// convert is u, an object of a modelled kind in one version, in the other (to) through
// model/api/conversion; anything else, or u already in to, is returned as it is. A kind the
// conversion does not cover in that direction is an error, not an object of the wrong version.
func (c *Client) convert(u *unstructured.Unstructured, to schema.GroupVersion) (*unstructured.Unstructured, error) {
	from := u.GroupVersionKind().GroupVersion()
	if _, ok := modelledKind(u.GetKind()); !ok || from == to || !convertible(from) || !convertible(to) {
		return u, nil
	}
	var out *unstructured.Unstructured
	var err error
	if to == v1beta1 {
		out, err = conversion.ToV1Beta1(u, c.PreferredVersion)
	} else {
		out, _, err = conversion.ToV1Beta2(u)
	}
	if err != nil {
		return nil, err
	}
	if out.GetAPIVersion() != to.String() {
		return nil, fmt.Errorf("%s %s/%s is %s and wanted as %s: model/api/conversion does not convert %ss that way",
			u.GetKind(), u.GetNamespace(), u.GetName(), from.Version, to.Version, u.GetKind())
	}
	return out, nil
}

// withoutData is u without the conversion data annotation.
func withoutData(u *unstructured.Unstructured) *unstructured.Unstructured {
	ann := u.GetAnnotations()
	if _, ok := ann[conversion.DataAnnotation]; !ok {
		return u
	}
	delete(ann, conversion.DataAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	u.SetAnnotations(ann)
	return u
}

// fromWire is u, an object the API server sent, in the version the caller asked for. Read as
// v1beta1, a Cluster or ClusterClass sent as v1beta2 keeps the v1beta2 original in the
// conversion-data annotation, as Cluster API's conversion webhook serves it, so writing it back
// loses nothing; read as v1beta2, an object carries none, as Cluster API's hub never does (the
// conversion restores from the annotation and takes it away).
func (c *Client) fromWire(asked schema.GroupVersionResource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := c.convert(u, asked.GroupVersion())
	if err != nil || out == u {
		return out, err
	}
	if asked.GroupVersion() == v1beta2 {
		out = withoutData(out)
	}
	return out, nil
}

// reading is how a cached read of wire (see Client.wire) gives the version asked: fromWire,
// remembered for the copies read most recently (see conversions); nil when the two are the same.
func (c *Client) reading(asked, wire schema.GroupVersionResource) *reading {
	if asked.GroupVersion() == wire.GroupVersion() {
		return nil
	}
	return &reading{apiVersion: asked.GroupVersion().String(), converted: &c.converted, convert: func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return c.fromWire(asked, u)
	}}
}

// fromWireList is fromWire for every item, in place.
func (c *Client) fromWireList(asked schema.GroupVersionResource, items []unstructured.Unstructured) ([]unstructured.Unstructured, error) {
	for i := range items {
		u, err := c.fromWire(asked, &items[i])
		if err != nil {
			return nil, err
		}
		items[i] = *u
	}
	return items, nil
}

// toWire is obj as it is written: a modelled object in the version requests for its resource go
// to (see wire); converted says it was converted. A partial object stays partial as far as the
// conversion keeps it so (model/api/conversion/present.go: Clusters and ClusterClasses). Converted
// to v1beta1 it carries no conversion data: only topoflow's own
// conversion reads it on a server without v1beta2, an apply would make the writer own the
// annotation and a partial object's data would be partial (and the no-op check would never match).
func (c *Client) toWire(obj *unstructured.Unstructured) (out *unstructured.Unstructured, converted bool, err error) {
	r, ok := modelledKind(obj.GetKind())
	gv := obj.GroupVersionKind().GroupVersion()
	if !ok || !convertible(gv) {
		return obj, false, nil
	}
	wire := c.wire(gv.WithResource(r)).GroupVersion()
	if out, err = c.convert(obj, wire); err != nil || out == obj {
		return out, false, err
	}
	if wire == v1beta1 {
		withoutData(out)
	}
	return out, true, nil
}

// patchToWire is a JSON merge patch of a modelled object (named as asked, in namespace ns) as it
// is sent to wire. Its metadata (labels, annotations, finalizers, where null removes an entry)
// means the same in both versions and is sent as it is; a Cluster's spec (the references the
// topology sets) crosses through the conversion, with no null (which a typed conversion cannot
// carry). Other patches across versions are refused rather than sent with the other version's
// field names.
func (c *Client) patchToWire(asked, wire schema.GroupVersionResource, ns string, patch []byte) ([]byte, error) {
	if asked == wire {
		return patch, nil
	}
	var p map[string]any
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("a merge patch: %w", err)
	}
	for k := range p {
		if k != "metadata" && (k != "spec" || asked.Resource != "clusters") {
			return nil, fmt.Errorf("a merge patch that sets %q: topoflow patches only metadata (and a Cluster's spec) across versions", k)
		}
	}
	spec, ok := p["spec"].(map[string]any)
	if !ok {
		return patch, nil
	}
	if hasNull(spec) {
		return nil, fmt.Errorf("a merge patch that removes a field of the spec (null): it cannot cross from %s to %s", asked.Version, wire.Version)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": asked.GroupVersion().String(), "kind": "Cluster",
		"metadata": map[string]any{"namespace": ns}, "spec": spec}}
	w, err := c.convert(u, wire.GroupVersion())
	if err != nil {
		return nil, err
	}
	p["spec"] = w.Object["spec"]
	return json.Marshal(p)
}

// hasNull says whether v holds a null anywhere.
func hasNull(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasNull(e) {
				return true
			}
		}
	}
	return false
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
// delivers into asked's version (either way), without the conversion data (a watcher never
// writes back), so code that reads one version's fields reads them from a watch of the other.
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
		return withoutData(out), nil
	}
}
