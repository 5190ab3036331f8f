package kube

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"maps"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// packed is how the cache's informers hold an object: its JSON, compressed, beside the few
// metadata fields the store's keys, the indexes and the version checks read. A topology object
// decoded into maps takes four to five times the memory of its JSON, and with a fleet the
// informers hold tens of thousands of them (1,000 Clusters: 15,000 topology objects, 35 MB of
// JSON, the largest part of the worker's live heap once the fleet exists). Compressed (DEFLATE at
// its fastest level) the JSON takes about a quarter of that; inflating it costs a fraction of
// decoding it. A read decodes a fresh copy, which it needed anyway: the cache never hands out
// what it stores.
//
// A packed object is never changed once stored.
type packed struct {
	// meta holds the name, namespace, labels, uid and resourceVersion only.
	meta metav1.ObjectMeta
	// raw is the object's JSON, DEFLATE-compressed (see compress).
	raw []byte
}

// reading is how a read turns a stored object into the version its caller asked for: nil
// for the stored version itself.
type reading struct {
	apiVersion string
	convert    func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
	// converted remembers recent conversions (nil: none).
	converted *conversions
}

// conversions remembers, packed, the conversions of the cached copies read most recently in the
// other API version of a modelled kind (see Client.fromWire): on a server that serves only
// v1beta1, every pass reads its Cluster's class, pools and health checks as v1beta2, and
// inflating a packed copy costs a fraction of converting. Bounded: two generations of at most
// maxConversions each, the older dropped when the newer fills (a fleet's passes in flight read
// far fewer objects than that; a copy no pass reads is not kept for the fleet's lifetime).
type conversions struct {
	mu        sync.Mutex
	cur, prev map[conversionKey]*packed
}

// conversionKey is one object at one resourceVersion (what a packed copy holds: never changed)
// and the version it was converted to. Not the packed copy itself: the informer's and the
// worker's copies of a resourceVersion are the same object, and a key must not keep a copy the
// informer has replaced.
type conversionKey struct {
	uid             types.UID
	resourceVersion string
	apiVersion      string
}

const maxConversions = 1024

func (c *conversions) get(k conversionKey) *packed {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[k]; ok {
		return v
	}
	if v, ok := c.prev[k]; ok {
		c.putLocked(k, v)
		return v
	}
	return nil
}

func (c *conversions) put(k conversionKey, v *packed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(k, v)
}

func (c *conversions) putLocked(k conversionKey, v *packed) {
	if c.cur == nil || len(c.cur) >= maxConversions {
		c.prev, c.cur = c.cur, make(map[conversionKey]*packed, maxConversions)
	}
	c.cur[k] = v
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
	buf := buffers.Get().(*bytes.Buffer)
	defer putBuffer(buf)
	if err := decompress(buf, p.raw); err != nil {
		return nil, fmt.Errorf("inflating the cached %s/%s: %w", p.meta.Namespace, p.meta.Name, err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("decoding the cached %s/%s: %w", p.meta.Namespace, p.meta.Name, err)
	}
	return u, nil
}

// unpackAs decodes a fresh copy of the object in the version r asks for (nil: as stored),
// converting it unless r remembers the conversion of this packed copy.
func (p *packed) unpackAs(r *reading) (*unstructured.Unstructured, error) {
	if r == nil {
		return p.unpack()
	}
	k := conversionKey{uid: p.meta.UID, resourceVersion: p.meta.ResourceVersion, apiVersion: r.apiVersion}
	remember := r.converted != nil && k.uid != "" && k.resourceVersion != ""
	if remember {
		if c := r.converted.get(k); c != nil {
			return c.unpack()
		}
	}
	u, err := p.unpack()
	if err != nil {
		return nil, err
	}
	out, err := r.convert(u)
	if err != nil || out == u || !remember {
		return out, err
	}
	if c, err := packJSON(out); err == nil {
		r.converted.put(k, c)
	}
	return out, nil
}

// Compressors, decompressors and buffers are pooled: a flate.Writer holds about 600 KB of
// tables, and packing runs for every watch event.
var (
	writers   = sync.Pool{New: func() any { w, _ := flate.NewWriter(io.Discard, flate.BestSpeed); return w }}
	readers   = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}
	buffers   = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	maxPooled = 1 << 20
)

// putBuffer returns a buffer to the pool unless an unusually large object grew it.
func putBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		b.Reset()
		buffers.Put(b)
	}
}

// compress returns raw DEFLATE-compressed, in a slice of its own of exactly its length.
func compress(raw []byte) ([]byte, error) {
	buf := buffers.Get().(*bytes.Buffer)
	defer putBuffer(buf)
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(buf)
	if _, err := w.Write(raw); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// decompress inflates data into buf.
func decompress(buf *bytes.Buffer, data []byte) error {
	r := readers.Get().(io.ReadCloser)
	defer readers.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(data), nil); err != nil {
		return err
	}
	_, err := buf.ReadFrom(r)
	return err
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
	p, err := packJSON(u)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// packJSON packs u as it is (no managedFields entry dropped).
func packJSON(u *unstructured.Unstructured) (*packed, error) {
	raw, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	compressed, err := compress(raw)
	if err != nil {
		return nil, fmt.Errorf("packing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return &packed{raw: compressed, meta: metav1.ObjectMeta{
		Name:            u.GetName(),
		Namespace:       u.GetNamespace(),
		UID:             u.GetUID(),
		ResourceVersion: u.GetResourceVersion(),
		Labels:          u.GetLabels(),
	}}, nil
}

// packCopy packs an object for the cache as pack does, leaving u as it is (the caller keeps
// using it): only the maps pack changes are copied, and only the JSON is kept.
func packCopy(u *unstructured.Unstructured, keep map[string]bool) (*packed, error) {
	shallow := &unstructured.Unstructured{Object: maps.Clone(u.Object)}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		shallow.Object["metadata"] = maps.Clone(md)
	}
	p, err := pack(shallow, keep)
	if err != nil {
		return nil, err
	}
	return p.(*packed), nil
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
