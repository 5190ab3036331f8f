// Package kube is topoflow's access to the Kubernetes API server: client construction, mapping
// kinds to resources, typed reads through the dynamic client, and server-side apply.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
)

// Well-known resources of the Cluster API core group.
var (
	Clusters            = clusterv1.GroupVersion.WithResource("clusters")
	ClusterClasses      = clusterv1.GroupVersion.WithResource("clusterclasses")
	MachineDeployments  = clusterv1.GroupVersion.WithResource("machinedeployments")
	MachinePools        = clusterv1.GroupVersion.WithResource("machinepools")
	ClusterEndpoints    = clusterv1.GroupVersion.WithResource("clusterendpoints")
	MachineHealthChecks = clusterv1.GroupVersion.WithResource("machinehealthchecks")
	MachineSets         = clusterv1.GroupVersion.WithResource("machinesets")
)

// Client bundles what topoflow needs to talk to the API server.
type Client struct {
	Config  *rest.Config
	Dynamic dynamic.Interface
	// Warn hears of fields an object read had that topoflow's types do not know (nil: ignored;
	// see WarnOnce).
	Warn   func(*decode.FieldError)
	mapper *restmapper.DeferredDiscoveryRESTMapper
	mu     sync.Mutex
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
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	return &Client{Config: cfg, Dynamic: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}, nil
}

// ResourceFor maps an apiVersion and kind to a resource. An unknown kind refreshes discovery
// once (a CRD may have been installed since the last look).
func (c *Client) ResourceFor(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
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

// GetRef reads the object a reference points at. The namespace defaults to ns.
func (c *Client) GetRef(ctx context.Context, ref *corev1.ObjectReference, ns string) (*unstructured.Unstructured, error) {
	gvr, err := c.ResourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, err
	}
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	return c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
}

// GetTyped reads one object of a known resource and decodes it strictly into out.
func (c *Client) GetTyped(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, out any) error {
	u, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
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
	err = c.Dynamic.Resource(gvr).Namespace(ns).Delete(ctx, ref.Name, metav1.DeleteOptions{})
	if err != nil && !IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	return nil
}

// Apply server-side applies obj with the given field manager, forcing ownership of the fields
// it sets (the topology is the authority over them).
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	gvr, err := c.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, err
	}
	out, err := c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return out, nil
}

// ApplyStatus server-side applies the status subresource.
func (c *Client) ApplyStatus(ctx context.Context, obj *unstructured.Unstructured, fieldManager string) (*unstructured.Unstructured, error) {
	gvr, err := c.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		return nil, err
	}
	out, err := c.Dynamic.Resource(gvr).Namespace(obj.GetNamespace()).ApplyStatus(ctx, obj.GetName(), obj,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return nil, fmt.Errorf("applying status of %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return out, nil
}

// IsNotFound reports whether err means the object (or its kind) does not exist.
func IsNotFound(err error) bool {
	return apierrors.IsNotFound(err) || meta.IsNoMatchError(err)
}

// IsAlreadyExists reports a create that found the object there.
func IsAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

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
