// Package kube is topoflow's access to the Kubernetes API server: client construction, mapping
// kinds to resources, typed reads through the dynamic client, and server-side apply.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/topoflow/topoflow/internal/metrics"
	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/ssa"
)

// Well-known resources of the Cluster API core group, in the hub version (v1beta2) the model
// computes on. Where the API server serves only v1beta1 the client converts at its edge (see
// served.go).
var (
	Clusters            = conversion.V1Beta2GroupVersion.WithResource("clusters")
	ClusterClasses      = conversion.V1Beta2GroupVersion.WithResource("clusterclasses")
	MachineDeployments  = conversion.V1Beta2GroupVersion.WithResource("machinedeployments")
	MachinePools        = conversion.V1Beta2GroupVersion.WithResource("machinepools")
	MachineHealthChecks = conversion.V1Beta2GroupVersion.WithResource("machinehealthchecks")
	MachineSets         = conversion.V1Beta2GroupVersion.WithResource("machinesets")
	Machines            = conversion.V1Beta2GroupVersion.WithResource("machines")
)

// The same resources in v1beta1, for the callers not yet ported to the hub (issue #37): a request
// for them goes to the version the server prefers and the objects come back as v1beta1.
var (
	V1Beta1Clusters            = clusterv1.GroupVersion.WithResource("clusters")
	V1Beta1ClusterClasses      = clusterv1.GroupVersion.WithResource("clusterclasses")
	V1Beta1MachineDeployments  = clusterv1.GroupVersion.WithResource("machinedeployments")
	V1Beta1MachinePools        = clusterv1.GroupVersion.WithResource("machinepools")
	V1Beta1MachineHealthChecks = clusterv1.GroupVersion.WithResource("machinehealthchecks")
	V1Beta1MachineSets         = clusterv1.GroupVersion.WithResource("machinesets")
	V1Beta1Machines            = clusterv1.GroupVersion.WithResource("machines")
)

// topoflow's own resources.
var (
	// ClusterEndpoints are topoflow's own (cluster.x-k8s.io/v1beta1, served by its CRD alone).
	ClusterEndpoints  = clusterv1.GroupVersion.WithResource("clusterendpoints")
	Rollouts          = rolloutv1.GroupVersion.WithResource("rollouts")
	RolloutStrategies = rolloutv1.GroupVersion.WithResource("rolloutstrategies")
	// ClusterClassRevisions are topoflow's records of opted-in ClusterClasses (issue #38).
	ClusterClassRevisions = rolloutv1.GroupVersion.WithResource("clusterclassrevisions")
)

// CustomResourceDefinitions are read to tell which Cluster API components are installed.
var CustomResourceDefinitions = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Client bundles what topoflow needs to talk to the API server.
type Client struct {
	Config  *rest.Config
	Dynamic dynamic.Interface
	// Warn hears of fields an object read had that topoflow's types do not know (nil: ignored;
	// see WarnOnce).
	Warn func(*decode.FieldError)
	// Sent, when set, hears every object Apply is asked to write, before the check whether it
	// would change anything (the tests compare what the apply sends with the plan). It may be
	// called from several goroutines at once.
	Sent   func(obj *unstructured.Unstructured, fieldManager string)
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// rest sends what the dynamic client cannot (a delete whose answer is read), with the same
	// limiter.
	rest rest.Interface
	mu   sync.Mutex
	// unknownKinds are kinds PreferredVersion found unserved after a discovery refresh, until when
	// it refreshes for them again.
	unknownKinds map[schema.GroupKind]time.Time
	// cache, when set (UseCache), serves reads and lets Apply skip requests that would change
	// nothing; schemas types objects for that check.
	cache   *Cache
	schemas *schemas
	// served holds, by resource, the version requests for a modelled resource go to (see wire).
	served sync.Map
	// converted remembers the conversions of cached copies read across versions (see reading).
	converted conversions
}

// UseCache makes the client read through informers that run until ctx ends, and skip applies
// the cache shows would change nothing (see Cache and model/ssa). The worker uses it; one-shot
// commands read directly.
// The cache keeps the managedFields entries of the given managers (topoflow's own).
func (c *Client) UseCache(ctx context.Context, log *slog.Logger, managers ...string) {
	c.cache = NewCache(ctx, c.Dynamic, log, managers...)
	c.schemas = newSchemas(c.Config, log)
}

// WarnOnce is a Warn that logs each object's unknown fields once (until the set changes), not
// on every read: the same object is read every pass.
func WarnOnce(log *slog.Logger) func(*decode.FieldError) {
	var mu sync.Mutex
	seen := map[string]string{}
	return func(fe *decode.FieldError) {
		problems := strings.Join(fe.Problems, "; ")
		mu.Lock()
		if len(seen) > 10000 {
			clear(seen)
		}
		repeat := seen[fe.Object] == problems
		seen[fe.Object] = problems
		mu.Unlock()
		if !repeat {
			log.Warn("ignoring fields topoflow does not know (a newer API version?)", "object", fe.Object, "fields", problems)
		}
	}
}

// RESTConfig loads a kubeconfig (empty path: KUBECONFIG or in-cluster).
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.UserAgent = "topoflow"
	return cfg, nil
}

// New builds a Client from a rest config.
func New(cfg *rest.Config) (*Client, error) {
	if cfg.WarningHandler == nil {
		// The API server warns on every request of a deprecated version (Cluster API's v1beta1
		// since v1.11): each distinct warning is printed once, not once per request.
		cfg = rest.CopyConfig(cfg)
		cfg.WarningHandler = rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true})
	}
	// The dynamic client, which every request of topoflow's own goes through, lets a Cluster's
	// reports jump its queue (see Report); Config keeps no limiter, so the clients others build
	// from it (Events, discovery) keep limits of their own, as before.
	dcfg := cfg
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		dcfg = rest.CopyConfig(cfg)
		dcfg.RateLimiter = newLaneLimiter(cfg.QPS, cfg.Burst)
	}
	dyn, err := dynamic.NewForConfig(dcfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	raw, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(dcfg))
	if err != nil {
		return nil, fmt.Errorf("REST client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &Client{Config: cfg, Dynamic: dyn, rest: raw, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}, nil
}

// ResourceFor maps an apiVersion and kind to a resource. An unknown kind refreshes discovery
// once (a CRD may have been installed since the last look). A modelled kind maps in either
// version while the API server serves the kind in one of them (the requests for it go there, see
// wire), its absence noticed as PreferredVersion notices it.
func (c *Client) ResourceFor(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	if r, ok := modelledKind(kind); ok && convertible(gv) {
		if _, err := c.PreferredVersion(gv.Group, kind); err != nil {
			return schema.GroupVersionResource{}, err
		}
		return gv.WithResource(r), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	}
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("kind %s in %s: %w", kind, apiVersion, err)
	}
	return m.Resource, nil
}

// PreferredVersion is the version the API server prefers for a group and kind (the newest it
// serves): what a v1beta2 contract reference, which names no version, becomes in v1beta1.
// Cluster API reads the provider CRD's contract label instead; for providers that serve the
// contract's newest version, as they must, the two agree. An unknown kind refreshes discovery
// once, and then not again for unservedFor: every pass asks for kinds an API server may not serve
// (Machines beside no Cluster API core), and a refresh per ask, under the lock every request's
// mapping takes, queued the whole worker behind discovery (a fleet create of 1,000 Clusters:
// 5,000 discovery requests and no Cluster provisioned in five minutes).
func (c *Client) PreferredVersion(group, kind string) (string, error) {
	gk := schema.GroupKind{Group: group, Kind: kind}
	c.mu.Lock()
	defer c.mu.Unlock()
	m, err := c.mapper.RESTMapping(gk)
	if until, known := c.unknownKinds[gk]; meta.IsNoMatchError(err) && (!known || time.Now().After(until)) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gk)
		if meta.IsNoMatchError(err) {
			if c.unknownKinds == nil || len(c.unknownKinds) > 1000 {
				c.unknownKinds = map[schema.GroupKind]time.Time{}
			}
			c.unknownKinds[gk] = time.Now().Add(unservedFor)
		}
	}
	if err != nil {
		return "", fmt.Errorf("kind %s in group %s: %w", kind, group, err)
	}
	return m.GroupVersionKind.Version, nil
}

// GetRef reads the object a reference points at. The namespace defaults to ns.
func (c *Client) GetRef(ctx context.Context, ref *corev1.ObjectReference, ns string) (*unstructured.Unstructured, error) {
	gvr, err := c.ResourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, err
	}
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	return c.Get(ctx, gvr, ns, ref.Name, 0)
}

// GetTyped reads one object of a known resource and decodes it into out (see Decode).
func (c *Client) GetTyped(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, out any) error {
	u, err := c.Get(ctx, gvr, ns, name, 0)
	if err != nil {
		return err
	}
	return c.Decode(u, out)
}

// Decode converts an object read from the API server into a typed one, leniently (see
// decode.Lenient): fields topoflow's types do not know are ignored and reported to Warn.
func (c *Client) Decode(u *unstructured.Unstructured, out any) error {
	warning, err := decode.Lenient(u, out)
	if err != nil {
		return err
	}
	if warning != nil && c.Warn != nil {
		c.Warn(warning)
	}
	return nil
}

// DeleteRef deletes the object a reference points at; an absent object is not an error.
func (c *Client) DeleteRef(ctx context.Context, ref *corev1.ObjectReference, ns string) error {
	gvr, err := c.ResourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return err
	}
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	return c.Delete(ctx, gvr, ns, ref.Name)
}

// Delete deletes an object; an absent object is not an error. With a cache, an object the
// cache knows is gone is not deleted again.
func (c *Client) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) error {
	gvr = c.wire(gvr)
	var lastSeen uint64
	if c.cache != nil {
		obj, found, served, _ := c.cache.get(ctx, gvr, ns, name, 0, nil)
		if served && found && (obj == nil || obj.GetDeletionTimestamp() != nil) {
			return nil
		}
		if c.cache.deleted(gvr, ns, name) {
			return nil
		}
		if obj != nil {
			lastSeen = resourceVersion(obj)
		}
	}
	held, err := c.deleteObject(ctx, gvr, ns, name)
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", gvr.Resource, ns, name, err)
	}
	if c.cache == nil {
		return nil
	}
	if !cacheable(gvr) || IsNotFound(err) {
		c.cache.Forget(gvr, ns, name, lastSeen)
		return nil
	}
	// The answer tells whether the object went or only got a deletionTimestamp (a provider's
	// finalizer holds it): taking a held one as gone would end a teardown step while its objects
	// still exist. What it says is remembered.
	if held != nil {
		c.cache.Remember(gvr, held)
	} else {
		c.cache.Forget(gvr, ns, name, lastSeen)
	}
	return nil
}

// deleteObject sends a DELETE through the dynamic client's limiter and returns the object when
// the answer shows it still there, held by finalizers (nil: it went). The dynamic client drops
// the answer, and reading the object again would cost a request of its own.
func (c *Client) deleteObject(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	prefix := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		prefix = "/api/" + gvr.Version
	}
	body, err := c.rest.Delete().AbsPath(prefix).NamespaceIfScoped(ns, ns != "").Resource(gvr.Resource).Name(name).
		SetHeader("Content-Type", "application/json").Body([]byte(`{"apiVersion":"v1","kind":"DeleteOptions"}`)).
		Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	return heldAfterDelete(body)
}

// heldAfterDelete reads a DELETE's answer: a Status, or the object deleted at once, means it went;
// the object with a deletionTimestamp and finalizers left means they hold it.
func heldAfterDelete(body []byte) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("reading the answer to a delete: %w", err)
	}
	if u.GetKind() == "Status" || u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) == 0 {
		return nil, nil
	}
	return u, nil
}

// Create creates an object (an existing one is an AlreadyExists error).
func (c *Client) Create(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	asked, gvr := gvr, c.wire(gvr)
	u, _, err := c.toWire(u)
	if err != nil {
		return nil, err
	}
	out, err := c.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
	if c.cache != nil && (err == nil || IsAlreadyExists(err)) {
		c.cache.created(gvr, u.GetNamespace(), u.GetName())
		c.cache.Remember(gvr, out)
	}
	if err != nil {
		return out, err
	}
	return c.fromWire(asked, out)
}

// MergePatch sends a JSON merge patch (for a few metadata fields another manager must not lose:
// no field ownership is taken away, unlike an apply of a partial intent).
func (c *Client) MergePatch(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, patch []byte, fieldManager string) (*unstructured.Unstructured, error) {
	asked, gvr := gvr, c.wire(gvr)
	patch, err := c.patchToWire(asked, gvr, ns, patch)
	if err != nil {
		return nil, fmt.Errorf("patching %s %s/%s: %w", asked.Resource, ns, name, err)
	}
	out, err := c.Dynamic.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, err
	}
	if c.cache != nil {
		c.cache.Remember(gvr, out)
	}
	return c.fromWire(asked, out)
}

// Update writes a whole object (read-modify-write; a conflict fails and the caller reads again).
// The object's managedFields are not sent: a cached copy holds only some managers' entries, and
// an update that carries managedFields replaces them all (the other managers would lose fields
// they own). Without them the API server keeps and updates the stored ones.
func (c *Client) Update(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	asked, gvr := gvr, c.wire(gvr)
	u, _, err := c.toWire(u)
	if err != nil {
		return nil, err
	}
	u = u.DeepCopy()
	u.SetManagedFields(nil)
	out, err := c.Dynamic.Resource(gvr).Namespace(u.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager})
	if err != nil {
		return nil, err
	}
	if c.cache != nil {
		c.cache.Remember(gvr, out)
	}
	return c.fromWire(asked, out)
}

// unchanged returns the cached object when applying obj as fieldManager (to subresource) would
// change nothing (model/ssa decides), else nil; in the version r asks for (nil: as stored).
func (c *Client) unchanged(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, fieldManager, subresource string, r *reading) *unstructured.Unstructured {
	if c.cache == nil {
		return nil
	}
	cur, found, served, _ := c.cache.lookup(ctx, gvr, obj.GetNamespace(), obj.GetName(), 0)
	if !served || !found {
		return nil
	}
	live, err := cur.fresh(nil)
	if err != nil || live == nil {
		return nil
	}
	tc, err := c.schemas.converter(gvr.GroupVersion(), obj.GroupVersionKind())
	if err != nil {
		c.schemas.log.Debug("no schema for the no-op check; applying", "kind", obj.GetKind(), "error", err)
		return nil
	}
	same, err := ssa.Unchanged(tc, obj, live, fieldManager, subresource)
	if err != nil {
		c.schemas.log.Debug("no-op check failed; applying", "kind", obj.GetKind(), "name", obj.GetName(), "error", err)
		return nil
	}
	if !same {
		return nil
	}
	if r != nil {
		if live, err = cur.fresh(r); err != nil {
			return nil
		}
	}
	metrics.AppliesSkipped.WithLabelValues(obj.GetKind()).Inc()
	return live // a copy of the cache's
}

// Apply server-side applies obj with the given field manager, forcing ownership of the fields
// it sets (the topology is the authority over them).
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	if c.Sent != nil {
		c.Sent(obj.DeepCopy(), fieldManager)
	}
	return c.apply(ctx, obj, fieldManager, "", false)
}

// apply server-side applies obj, or its status when subresource is "status", in the version the
// API server prefers (toWire), skipping what would change nothing; the answer comes back in
// obj's version. dryRun asks admission only: nothing is skipped, stored or remembered.
func (c *Client) apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager, subresource string, dryRun bool) (*unstructured.Unstructured, error) {
	asked := obj.GroupVersionKind().GroupVersion().WithResource("")
	obj, converted, err := c.toWire(obj)
	if err != nil {
		return nil, err
	}
	gvr, err := c.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, err
	}
	back := func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		if !converted {
			return u, nil
		}
		return c.fromWire(asked, u)
	}
	if dryRun {
		out, err := c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
			metav1.ApplyOptions{FieldManager: fieldManager, Force: true, DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, err
		}
		return back(out)
	}
	var as *reading
	if converted {
		as = c.reading(asked, gvr)
	}
	if live := c.unchanged(ctx, gvr, obj, fieldManager, subresource, as); live != nil {
		return live, nil
	}
	r := c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace())
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	var out *unstructured.Unstructured
	if subresource == "status" {
		out, err = r.ApplyStatus(ctx, obj.GetName(), obj, opts)
	} else {
		out, err = r.Apply(ctx, obj.GetName(), obj, opts)
	}
	if err != nil {
		what := ""
		if subresource != "" {
			what = subresource + " of "
		}
		return nil, fmt.Errorf("applying %s%s %s/%s: %w", what, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	if c.cache != nil {
		c.cache.Remember(gvr, out)
	}
	return back(out)
}

// ApplyStatus server-side applies the status subresource.
func (c *Client) ApplyStatus(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	return c.apply(ctx, obj, fieldManager, "status", false)
}

// IsNotFound reports whether err means the object (or its kind) does not exist.
func IsNotFound(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// IsAlreadyExists reports a create that found the object there.
func IsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// IsConflict reports a write refused because the object changed since it was read.
func IsConflict(err error) bool { return apierrors.IsConflict(err) }

// WaitForAPI polls until the API server answers discovery, or ctx ends.
func (c *Client) WaitForAPI(ctx context.Context) error {
	disco, err := discovery.NewDiscoveryClientForConfig(c.Config)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		_, last = disco.ServerVersion()
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("API server not reachable: %w", errors.Join(err, last))
	}
	return nil
}
