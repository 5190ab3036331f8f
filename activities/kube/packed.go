package kube

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// packed is how the cache's informers hold an object: its JSON, beside the few metadata fields
// the store's keys, the indexes and the version checks read. A topology object decoded into
// maps takes four to five times the memory of its JSON, and with a fleet the informers hold
// tens of thousands of them (1,000 Clusters: 15,000 topology objects). A read decodes a fresh
// copy, which it needed anyway: the cache never hands out what it stores.
//
// A packed object is never changed once stored.
type packed struct {
	// meta holds the name, namespace, labels, uid and resourceVersion only.
	meta metav1.ObjectMeta
	raw  []byte
}

var _ runtime.Object = (*packed)(nil)
var _ metav1.ObjectMetaAccessor = (*packed)(nil)

// GetObjectMeta lets the informer's store and indexes (meta.Accessor) read the metadata.
func (p *packed) GetObjectMeta() metav1.Object { return &p.meta }

func (p *packed) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject returns p itself: a packed object is immutable.
func (p *packed) DeepCopyObject() runtime.Object { return p }

func (p *packed) resourceVersion() uint64 { return ResourceVersionOf(p.meta.ResourceVersion) }

// unpack decodes a fresh copy of the object.
func (p *packed) unpack() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(p.raw); err != nil {
		return nil, fmt.Errorf("decoding the cached %s/%s: %w", p.meta.Namespace, p.meta.Name, err)
	}
	return u, nil
}

// pack is the informers' transform: it drops the managedFields entries of managers other than
// keep (the no-op check reads only topoflow's own) and packs the object. Already packed objects
// pass unchanged (client-go may hand a transform what it stored).
func pack(obj any, keep map[string]bool) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	trimManagedFields(u, keep)
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	// The encoder's buffer may be twice the JSON's length: keep an exact copy.
	return &packed{raw: bytes.Clone(raw), meta: metav1.ObjectMeta{
		Name:            u.GetName(),
		Namespace:       u.GetNamespace(),
		UID:             u.GetUID(),
		ResourceVersion: u.GetResourceVersion(),
		Labels:          u.GetLabels(),
	}}, nil
}

// trimManagedFields drops, in place, the managedFields entries of managers not in keep.
func trimManagedFields(u *unstructured.Unstructured, keep map[string]bool) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	mfs, ok := md["managedFields"].([]any)
	if !ok {
		return
	}
	kept := make([]any, 0, len(mfs))
	for _, mf := range mfs {
		if m, ok := mf.(map[string]any); ok {
			if name, _ := m["manager"].(string); keep[name] {
				kept = append(kept, mf)
			}
		}
	}
	if len(kept) == 0 {
		delete(md, "managedFields")
		return
	}
	md["managedFields"] = kept
}
