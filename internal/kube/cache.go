package kube

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/topoflow/topoflow/model/labels"
)

// Cache serves reads from shared informers, one per resource, started on the first read of that
// resource. It is what lets a pass over an unchanged Cluster send no request.
//
// Read-your-writes: every object the worker writes (the apply's answer) or reads directly is
// remembered beside the informers until they catch up, and every object it deletes is
// remembered as gone; a read returns whichever copy has the higher resourceVersion. So a pass
// never sees an object older than one this worker already saw, and never undoes its own write.
// A read also never returns an object older than the resourceVersion the caller asks for
// (AtLeast), which is how a pass started by a watch event sees at least that event.
//
// Objects of the core group (Secrets, ConfigMaps) are never cached: reads go to the API server.
type Cache struct {
	factory dynamicinformer.DynamicSharedInformerFactory
	ctx     context.Context
	log     *slog.Logger
	// SyncTimeout bounds the wait for a new informer's first list; reads go to the API server
	// until it has synced.
	syncTimeout time.Duration
	// managers are the field managers whose managedFields entries the cache keeps.
	managers map[string]bool

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// unserved remembers, until the time given, resources the API server does not serve.
	unserved map[schema.GroupVersionResource]time.Time
	dyn      dynamic.Interface
	// recent holds what this worker wrote, read directly or deleted, by resource and key, until
	// the informer holds that resourceVersion or newer (or the entry expires).
	recent map[schema.GroupVersionResource]map[string]recentEntry
	// gone remembers, until the time given, objects of uncached resources this worker deleted, so
	// a pass does not delete them again (the shim Secret: see Client.Delete).
	gone map[string]time.Time
}

type recentEntry struct {
	// obj is packed as the informers hold theirs (JSON: a fifth of the decoded maps' memory, and
	// a fleet create keeps thousands of written objects here while the informers catch up).
	obj     *packed // nil: deleted
	rv      uint64
	expires time.Time
}

// recentTTL bounds how long a remembered object outlives the informer's silence about it.
const recentTTL = 2 * time.Minute

// goneTTL bounds how long a deleted object of an uncached resource is taken to stay deleted
// without looking (only this worker creates the objects it deletes there; Create clears it).
const goneTTL = time.Hour

// deleted says whether this worker deleted an object of an uncached resource (and has not
// created it since) within goneTTL.
func (c *Cache) deleted(gvr schema.GroupVersionResource, ns, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	until, ok := c.gone[gvr.String()+" "+key(ns, name)]
	return ok && time.Now().Before(until)
}

// created clears what Forget remembered of an uncached object.
func (c *Cache) created(gvr schema.GroupVersionResource, ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.gone, gvr.String()+" "+key(ns, name))
}

// NewCache returns a cache whose informers run until ctx ends, keeping the managedFields entries
// of the given managers.
func NewCache(ctx context.Context, dyn dynamic.Interface, log *slog.Logger, managers ...string) *Cache {
	keep := map[string]bool{}
	for _, m := range managers {
		keep[m] = true
	}
	return &Cache{
		factory:     dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0),
		dyn:         dyn,
		managers:    keep,
		unserved:    map[schema.GroupVersionResource]time.Time{},
		ctx:         ctx,
		log:         log,
		syncTimeout: 30 * time.Second,
		informers:   map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		recent:      map[schema.GroupVersionResource]map[string]recentEntry{},
		gone:        map[string]time.Time{},
	}
}

// cacheable says whether reads of a resource go through the cache.
func cacheable(gvr schema.GroupVersionResource) bool {
	return gvr.Group != "" || gvr.Resource == "namespaces"
}

// unservedFor is how long a resource the API server does not serve is answered as not found
// before the cache looks again (a CRD may be installed).
const unservedFor = time.Minute

// informer returns the synced informer of a resource, starting it on first use; nil while it has
// not synced (the read then goes to the API server). A resource the API server does not serve
// gets no informer: its error (NotFound) is returned, and remembered for unservedFor.
func (c *Cache) informer(ctx context.Context, gvr schema.GroupVersionResource) (cache.SharedIndexInformer, error) {
	c.mu.Lock()
	if until, ok := c.unserved[gvr]; ok && time.Now().Before(until) {
		c.mu.Unlock()
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	inf, ok := c.informers[gvr]
	c.mu.Unlock()
	if !ok {
		// One small probe first: an informer on a resource that is not served would retry forever.
		if _, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			if apierrors.IsNotFound(err) {
				c.mu.Lock()
				c.unserved[gvr] = time.Now().Add(unservedFor)
				c.mu.Unlock()
				return nil, err
			}
			return nil, nil
		}
		c.mu.Lock()
		if inf, ok = c.informers[gvr]; !ok {
			inf = c.newInformer(gvr)
		}
		c.mu.Unlock()
	}
	if inf.HasSynced() {
		return inf, nil
	}
	wait, cancel := context.WithTimeout(ctx, c.syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(wait.Done(), inf.HasSynced) {
		return nil, nil
	}
	return inf, nil
}

// byCluster indexes objects by namespace and Cluster (their cluster-name label): a pass lists
// its own Cluster's objects without walking every Cluster's in the namespace.
const byCluster = "topoflow-cluster"

func clusterIndex(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	if c := m.GetLabels()[labels.ClusterName]; c != "" {
		return []string{m.GetNamespace() + "/" + c}, nil
	}
	return nil, nil
}

// newInformer starts a resource's informer; c.mu is held.
func (c *Cache) newInformer(gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	inf := c.factory.ForResource(gvr).Informer()
	if err := inf.SetTransform(func(obj any) (any, error) { return pack(obj, c.managers) }); err != nil {
		c.log.Warn("informer transform not set", "resource", gvr.String(), "error", err)
	}
	if err := inf.AddIndexers(cache.Indexers{byCluster: clusterIndex}); err != nil {
		c.log.Warn("informer index not added", "resource", gvr.String(), "error", err)
	}
	// What the worker remembers goes as soon as the informer has caught up with it, not only
	// when read again: the memory stays bounded by the writes in flight.
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.caughtUp(gvr, obj, false) },
		UpdateFunc: func(_, obj any) { c.caughtUp(gvr, obj, false) },
		DeleteFunc: func(obj any) { c.caughtUp(gvr, obj, true) },
	}); err != nil {
		c.log.Warn("informer handler not added", "resource", gvr.String(), "error", err)
	}
	c.informers[gvr] = inf
	c.factory.Start(c.ctx.Done())
	return inf
}

func resourceVersion(u *unstructured.Unstructured) uint64 {
	return ResourceVersionOf(u.GetResourceVersion())
}

func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// Remember records an object this worker wrote or read from the API server.
func (c *Cache) Remember(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	if u == nil || !cacheable(gvr) {
		return
	}
	rv := resourceVersion(u)
	kept, err := packCopy(u, c.managers)
	if err != nil {
		c.log.Debug("not remembered", "error", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.recent[gvr]
	if m == nil {
		m = map[string]recentEntry{}
		c.recent[gvr] = m
	}
	k := key(u.GetNamespace(), u.GetName())
	if old, ok := m[k]; ok && old.rv > rv {
		return
	}
	m[k] = recentEntry{obj: kept, rv: rv, expires: time.Now().Add(recentTTL)}
}

// Forget records that this worker deleted an object (last seen at resourceVersion rv, 0 if
// unknown): reads do not return it until the informer shows a newer one.
func (c *Cache) Forget(gvr schema.GroupVersionResource, ns, name string, rv uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !cacheable(gvr) {
		if len(c.gone) > 100000 {
			clear(c.gone)
		}
		c.gone[gvr.String()+" "+key(ns, name)] = time.Now().Add(goneTTL)
		return
	}
	m := c.recent[gvr]
	if m == nil {
		m = map[string]recentEntry{}
		c.recent[gvr] = m
	}
	k := key(ns, name)
	if rv == 0 {
		if old, ok := m[k]; ok {
			rv = old.rv
		}
	}
	m[k] = recentEntry{rv: rv, expires: time.Now().Add(recentTTL)}
}

// caughtUp drops what the worker remembers of an object the informer now holds at least as new
// (or, deleted, no longer holds).
func (c *Cache) caughtUp(gvr schema.GroupVersionResource, obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	k := key(m.GetNamespace(), m.GetName())
	rv := ResourceVersionOf(m.GetResourceVersion())
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.recent[gvr][k]
	switch {
	case !ok:
	case deleted && (e.obj == nil || rv >= e.rv), // the object is gone at or after what the worker remembers
		!deleted && rv > e.rv,
		!deleted && e.obj != nil && rv == e.rv:
		delete(c.recent[gvr], k)
	}
}

// known is what the cache knows of one object: the informer's packed copy, or the copy the
// worker remembers (packed too), or neither (the object is gone).
type known struct {
	informed   *packed
	remembered *packed
}

func (k known) labels() map[string]string {
	if k.informed != nil {
		return k.informed.meta.Labels
	}
	if k.remembered != nil {
		return k.remembered.meta.Labels
	}
	return nil
}

// resourceVersion is the known copy's (0: gone).
func (k known) resourceVersion() uint64 {
	switch {
	case k.informed != nil:
		return k.informed.resourceVersion()
	case k.remembered != nil:
		return k.remembered.resourceVersion()
	}
	return 0
}

// fresh returns a copy of the object the caller may change (nil: gone), in the version r asks
// for (nil: as stored).
func (k known) fresh(r *reading) (*unstructured.Unstructured, error) {
	switch {
	case k.informed != nil:
		return k.informed.unpackAs(r)
	case k.remembered != nil:
		return k.remembered.unpackAs(r)
	}
	return nil, nil
}

// newer picks between the informer's copy (nil: absent) and what the worker remembers. ok is
// false when neither knows the object.
func (c *Cache) newer(gvr schema.GroupVersionResource, k string, informed *packed) (known, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, remembered := c.recent[gvr][k]
	if remembered && time.Now().After(e.expires) {
		delete(c.recent[gvr], k)
		remembered = false
	}
	switch {
	case !remembered:
		return known{informed: informed}, informed != nil
	case informed != nil && informed.resourceVersion() > e.rv,
		informed != nil && e.obj != nil && informed.resourceVersion() == e.rv:
		delete(c.recent[gvr], k) // the informer caught up
		return known{informed: informed}, true
	}
	return known{remembered: e.obj}, true
}

// lookup finds what the cache knows of an object without decoding it: found says whether the
// cache knows it (present, or gone because this worker deleted it). served is false when the
// resource is not cached (or its informer has not synced), or the cached copy is older than
// atLeast (when not zero): ask the API server.
func (c *Cache) lookup(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, atLeast uint64) (cur known, found, served bool, err error) {
	if !cacheable(gvr) {
		return known{}, false, false, nil
	}
	inf, err := c.informer(ctx, gvr)
	if inf == nil {
		return known{}, false, false, err
	}
	k := key(ns, name)
	var informed *packed
	if item, exists, err := inf.GetStore().GetByKey(k); err == nil && exists {
		informed, _ = item.(*packed)
	}
	cur, found = c.newer(gvr, k, informed)
	if rv := cur.resourceVersion(); found && rv != 0 && atLeast > 0 && rv < atLeast {
		return known{}, false, false, nil // older than the caller has seen: read from the API server
	}
	return cur, found, true, nil
}

// get is lookup returning a copy of the object (nil when the cache knows it is gone), in the
// version r asks for (nil: as stored). A copy that cannot be decoded or converted is read from
// the API server (whose answer, converted again, carries the error).
func (c *Cache) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, atLeast uint64, r *reading) (obj *unstructured.Unstructured, found, served bool, err error) {
	cur, found, served, err := c.lookup(ctx, gvr, ns, name, atLeast)
	if !found || !served {
		return nil, found, served, err
	}
	if obj, err = cur.fresh(r); err != nil {
		return nil, false, false, nil // an undecodable copy: read from the API server
	}
	return obj, true, true, nil
}

// list returns the cached objects of a resource in ns matching selector, in the version r asks
// for (nil: as stored); served is false when the resource is not cached.
func (c *Cache) list(ctx context.Context, gvr schema.GroupVersionResource, ns string, selector k8slabels.Selector, namesOnly bool, r *reading) (out []unstructured.Unstructured, served bool, err error) {
	if !cacheable(gvr) {
		return nil, false, nil
	}
	inf, err := c.informer(ctx, gvr)
	if inf == nil {
		return nil, false, err
	}
	var items []any
	cluster, byName := selector.RequiresExactMatch(labels.ClusterName)
	switch {
	case ns == "":
		items = inf.GetStore().List() // every namespace (the namespace index of "" holds only cluster-scoped objects)
	case byName:
		items, err = inf.GetIndexer().ByIndex(byCluster, ns+"/"+cluster)
	default:
		items, err = inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	}
	if err != nil {
		items = inf.GetStore().List()
	}
	seen := map[string]bool{}
	for _, item := range items {
		p, ok := item.(*packed)
		if !ok || (ns != "" && p.meta.Namespace != ns) {
			continue
		}
		k := key(p.meta.Namespace, p.meta.Name)
		seen[k] = true
		cur, found := c.newer(gvr, k, p)
		if !found || !selector.Matches(k8slabels.Set(cur.labels())) {
			continue
		}
		if namesOnly {
			out = append(out, nameOnly(p.meta.Namespace, p.meta.Name))
			continue
		}
		u, err := cur.fresh(r)
		if err != nil {
			return nil, false, nil // an undecodable copy: list from the API server
		}
		if u != nil {
			out = append(out, *u)
		}
	}
	// Objects this worker created that the informer has not delivered yet.
	c.mu.Lock()
	var extra []*packed
	for k, e := range c.recent[gvr] {
		if seen[k] || e.obj == nil || time.Now().After(e.expires) {
			continue
		}
		if (ns == "" || e.obj.meta.Namespace == ns) && selector.Matches(k8slabels.Set(e.obj.meta.Labels)) {
			extra = append(extra, e.obj)
		}
	}
	c.mu.Unlock()
	for _, p := range extra {
		if namesOnly {
			out = append(out, nameOnly(p.meta.Namespace, p.meta.Name))
			continue
		}
		u, err := p.unpackAs(r)
		if err != nil {
			return nil, false, nil // an undecodable copy: list from the API server
		}
		out = append(out, *u)
	}
	return out, true, nil
}

// nameOnly is an object with only its namespace and name (a names-only list).
func nameOnly(ns, name string) unstructured.Unstructured {
	var u unstructured.Unstructured
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// Get reads one object of a known resource through the cache when there is one, falling back
// to the API server (whose answer is remembered). atLeast, when not zero, is the oldest
// resourceVersion the caller accepts.
func (c *Client) Get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, atLeast uint64) (*unstructured.Unstructured, error) {
	wire := c.wire(gvr)
	u, cached, err := c.get(ctx, wire, ns, name, atLeast, c.reading(gvr, wire))
	if err != nil || cached {
		return u, err
	}
	return c.fromWire(gvr, u)
}

// get is Get from the resource the API server is asked for (gvr): from the cache in the version
// r asks for (cached), else from the API server as it answers.
func (c *Client) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, atLeast uint64, r *reading) (u *unstructured.Unstructured, cached bool, err error) {
	if c.cache != nil {
		obj, found, served, err := c.cache.get(ctx, gvr, ns, name, atLeast, r)
		if err != nil {
			return nil, false, err
		}
		if served && found {
			if obj == nil {
				return nil, false, notFound(gvr, name)
			}
			return obj, true, nil
		}
	}
	u, err = c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if c.cache != nil {
		switch {
		case err == nil:
			c.cache.Remember(gvr, u)
		case IsNotFound(err) && atLeast > 0:
			// Gone by the version the caller saw: a lagging informer's copy must not come back.
			c.cache.Forget(gvr, ns, name, atLeast)
		}
	}
	return u, false, err
}

// List lists the objects of a resource in ns (all namespaces when empty) matching a label
// selector, through the cache when the worker has one.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]unstructured.Unstructured, error) {
	return c.list(ctx, gvr, ns, selector, false)
}

// ListNames is List with only each object's namespace and name: from the cache, no object is
// decoded (a Rollout's status write lists every Cluster of its selection).
func (c *Client) ListNames(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) ([]unstructured.Unstructured, error) {
	return c.list(ctx, gvr, ns, selector, true)
}

func (c *Client) list(ctx context.Context, asked schema.GroupVersionResource, ns, selector string, namesOnly bool) ([]unstructured.Unstructured, error) {
	gvr := c.wire(asked)
	if c.cache != nil {
		sel, err := k8slabels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("label selector %q: %w", selector, err)
		}
		items, served, err := c.cache.list(ctx, gvr, ns, sel, namesOnly, c.reading(asked, gvr))
		if err != nil {
			return nil, err
		}
		if served {
			return items, nil
		}
	}
	return c.ListUncached(ctx, asked, ns, selector)
}

func notFound(gvr schema.GroupVersionResource, name string) error {
	return apierrors.NewNotFound(gvr.GroupResource(), name)
}

// seenWait bounds how long AwaitSeen waits for the informer before it reads directly.
const seenWait = time.Second

// AwaitSeen makes the reads that follow return each object no older than the resourceVersion a
// watch event showed (the event that started the pass): it waits briefly for the informer to
// catch up, then reads the object from the API server (and remembers it). Without a cache it
// does nothing: every read goes to the API server anyway.
func (c *Client) AwaitSeen(ctx context.Context, seen []corev1.ObjectReference) error {
	if c.cache == nil {
		return nil
	}
	for i := range seen {
		s := &seen[i]
		want := ResourceVersionOf(s.ResourceVersion)
		if want == 0 {
			continue
		}
		gvr, err := c.ResourceFor(s.APIVersion, s.Kind)
		if err != nil {
			continue // a kind no longer served: nothing to read
		}
		gvr = c.wire(gvr)
		fresh := func() bool {
			cur, found, served, _ := c.cache.lookup(ctx, gvr, s.Namespace, s.Name, want)
			// Absent counts as fresh: the event was its deletion, or it is gone since.
			return served && (!found || cur.resourceVersion() == 0 || cur.resourceVersion() >= want)
		}
		if fresh() {
			continue
		}
		deadline := time.Now().Add(seenWait)
		for !fresh() && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		if fresh() {
			continue
		}
		c.cache.log.Debug("informer behind the event; reading directly", "kind", s.Kind, "namespace", s.Namespace, "name", s.Name,
			"resourceVersion", s.ResourceVersion, "waited", seenWait)
		if _, _, err := c.get(ctx, gvr, s.Namespace, s.Name, want, nil); err != nil && !IsNotFound(err) {
			return fmt.Errorf("reading %s %s/%s: %w", s.Kind, s.Namespace, s.Name, err)
		}
	}
	return nil
}

// ResourceVersionOf reads a resourceVersion as the number etcd makes it (0: not one), for
// comparing which of two copies of an object is newer.
func ResourceVersionOf(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
}
