// Package runtimeext calls Cluster API Runtime Extensions: it reads the ExtensionConfig registry,
// runs discovery (recording the handlers in status.handlers), and calls hook handlers over HTTPS,
// verifying the server against the config's caBundle. Requests and responses are Cluster API's
// hooks.runtime.cluster.x-k8s.io/v1alpha1 bodies, so existing extensions answer unchanged.
package runtimeext

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/status"
)

var (
	extensionConfigs = runtimev1.GroupVersion.WithResource("extensionconfigs")
	namespaces       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// defaultTimeout is the handler timeout when the handler sets none (Cluster API's default).
const defaultTimeout = 10 * time.Second

// Client calls Runtime Extensions.
type Client struct {
	Kube *kube.Client
	// preferred, when set, names the version of a group and kind in place of the API server
	// (tests).
	preferred func(group, kind string) (string, error)
}

// Call is the record of one handler call (kept in workflow history for operators).
type Call struct {
	Extension         string `json:"extension"`
	Handler           string `json:"handler"`
	Status            string `json:"status,omitempty"`
	Message           string `json:"message,omitempty"`
	RetryAfterSeconds int32  `json:"retryAfterSeconds,omitempty"`
	// Error is a transport, HTTP or decoding failure; Ignored says the failurePolicy swallowed it.
	Error   string `json:"error,omitempty"`
	Ignored bool   `json:"ignored,omitempty"`
}

// Result aggregates the calls of one hook over every registered handler.
type Result struct {
	Calls []Call `json:"calls,omitempty"`
	// RetryAfterSeconds is the lowest non-zero answer: the hook blocks until then.
	RetryAfterSeconds int32 `json:"retryAfterSeconds,omitempty"`
	// Failed names the handlers that answered Failure or failed under failurePolicy Fail.
	Failed []string `json:"failed,omitempty"`
	// Message joins the handlers' messages.
	Message string `json:"message,omitempty"`
	// Failure is the error of the handler that failed the hook, worded as Cluster API words it
	// (see failureText); "" when none did.
	Failure string `json:"failure,omitempty"`
}

// IdempotencyKeyHeader names the request header that carries a hook call's key: the same on
// every attempt of one call (a retry after the answer was lost), different for every other call.
// The body stays Cluster API's; an extension that must act once per call can key on the header.
const IdempotencyKeyHeader = "Idempotency-Key"

type idempotencyKey struct{}

// WithIdempotencyKey makes the requests sent with ctx carry key in IdempotencyKeyHeader ("": none).
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

// TransportFailed says a handler's call failed before it answered (transport, HTTP, decoding).
func (r *Result) TransportFailed() bool {
	for _, c := range r.Calls {
		if c.Error != "" {
			return true
		}
	}
	return false
}

// registered is one handler of one ExtensionConfig.
type registered struct {
	config  *runtimev1.ExtensionConfig
	handler runtimev1.ExtensionHandler
}

// CallHook calls every handler registered for hook whose ExtensionConfig selects namespace, with
// the request body req (its apiVersion/kind and settings are filled in here).
func (c *Client) CallHook(ctx context.Context, hook, namespace string, req map[string]any) (*Result, error) {
	handlers, err := c.handlers(ctx, hook, namespace)
	if err != nil {
		return nil, err
	}
	return c.callAll(ctx, handlers, hook, req), nil
}

// callAll calls the handlers in turn and aggregates their answers: a Failure (or a failed call
// under failurePolicy Fail) fails the hook, and, as in Cluster API's CallAllExtensions, the
// handlers after it are not called; the lowest non-zero retryAfterSeconds blocks it.
func (c *Client) callAll(ctx context.Context, handlers []registered, hook string, req map[string]any) *Result {
	res := &Result{}
	var msgs []string
	for _, h := range handlers {
		call := c.callOne(ctx, h, hook, req)
		res.Calls = append(res.Calls, call)
		switch {
		case call.Ignored:
		case call.Error != "" || call.Status == string(hooksv1.ResponseStatusFailure):
			res.Failed = append(res.Failed, call.Handler)
			res.Failure = failureText(hook, call)
		case call.RetryAfterSeconds > 0 && (res.RetryAfterSeconds == 0 || call.RetryAfterSeconds < res.RetryAfterSeconds):
			res.RetryAfterSeconds = call.RetryAfterSeconds
		}
		if call.Message != "" {
			msgs = append(msgs, call.Handler+": "+call.Message)
		} else if call.Error != "" {
			msgs = append(msgs, call.Handler+": "+call.Error)
		}
		if res.Failure != "" {
			break
		}
	}
	res.Message = strings.Join(msgs, "; ")
	return res
}

// failureText is the error of a handler's call that failed the hook, as Cluster API v1.14's
// runtime client wraps it (CallAllExtensions around CallExtension, validateResponseStatus for a
// Failure answer): the Cluster's TopologyReconciled condition shows it (#13813).
func failureText(hook string, call Call) string {
	why := cmp.Or(call.Error, answerError(hooksv1.ResponseStatus(call.Status), call.Message))
	return fmt.Sprintf("failed to call extension handlers for hook %q: %v", hook+"."+hooksv1.Group, &ExtensionError{Hook: hook, Handler: call.Handler, Message: why})
}

func (c *Client) callOne(ctx context.Context, h registered, hook string, req map[string]any) Call {
	name, ext := splitHandlerName(h.handler.Name, h.config.Name)
	call := Call{Extension: ext, Handler: h.handler.Name}
	var resp struct {
		Status            string `json:"status"`
		Message           string `json:"message"`
		RetryAfterSeconds int32  `json:"retryAfterSeconds"`
	}
	body, err := c.requestBody(h, hook, req, nil)
	if err == nil {
		err = c.postInjected(ctx, h.config, hooksv1.HandlerPath(hook, name), body, h.timeout(), &resp)
	}
	if err != nil {
		call.Error = err.Error()
		call.Ignored = h.ignoresErrors()
		return call
	}
	call.Status, call.Message, call.RetryAfterSeconds = resp.Status, resp.Message, resp.RetryAfterSeconds
	if call.Status != string(hooksv1.ResponseStatusSuccess) && call.Status != string(hooksv1.ResponseStatusFailure) {
		// An answer, not a failed call: failurePolicy Ignore does not cover it (Cluster API's
		// validateResponseStatus runs after the policy's check).
		call.Error = answerError(hooksv1.ResponseStatus(call.Status), call.Message)
	}
	return call
}

// requestBody completes a request: apiVersion, kind, the settings (the ExtensionConfig's,
// overridden key by key by the caller's, as Cluster API merges them), and the Cluster (given
// as v1beta2, the hub) in the version the ExtensionConfig's handlers read (RequestClusterVersion:
// v1beta1 through Cluster API's conversion, contract references at the versions the API server
// prefers), trimmed as Cluster API trims it (TrimRequestCluster).
func (c *Client) requestBody(h registered, hook string, req map[string]any, settings map[string]string) (map[string]any, error) {
	body := make(map[string]any, len(req)+3)
	for k, v := range req {
		body[k] = v
	}
	body["apiVersion"] = hooksv1.APIVersion
	body["kind"] = hook + "Request"
	merged := map[string]string{}
	for k, v := range h.config.Spec.Settings {
		merged[k] = v
	}
	for k, v := range settings {
		merged[k] = v
	}
	if len(merged) > 0 {
		body["settings"] = merged
	} else {
		delete(body, "settings")
	}
	if cluster, ok := body["cluster"].(map[string]any); ok {
		version, err := runtimev1.RequestClusterVersion(h.config)
		if err != nil {
			return nil, err
		}
		if version == runtimev1.ClusterV1Beta1 {
			js, err := json.Marshal(cluster)
			if err != nil {
				return nil, err
			}
			if cluster, err = conversion.ClusterV1Beta1(js, c.versionOf); err != nil {
				return nil, err
			}
		} else {
			cluster = runtime.DeepCopyJSON(cluster) // trimmed below; the caller's stays whole
		}
		hooksv1.TrimRequestCluster(cluster)
		body["cluster"] = cluster
	}
	return body, nil
}

// versionOf is the version the API server prefers for a group and kind (a v1beta1 request's
// contract references carry one).
func (c *Client) versionOf(group, kind string) (string, error) {
	if c.preferred != nil {
		return c.preferred(group, kind)
	}
	if c.Kube == nil {
		return "", fmt.Errorf("kind %s in group %s: no API server to ask which version it serves", kind, group)
	}
	return c.Kube.PreferredVersion(group, kind)
}

func (h registered) timeout() time.Duration {
	if t := h.handler.TimeoutSeconds; t != nil && *t > 0 {
		return time.Duration(*t) * time.Second
	}
	return defaultTimeout
}

func (h registered) ignoresErrors() bool {
	return h.handler.FailurePolicy != nil && *h.handler.FailurePolicy == runtimev1.FailurePolicyIgnore
}

// splitHandlerName undoes the registry's "<handler>.<extensionconfig>" naming.
func splitHandlerName(registeredName, config string) (name, extension string) {
	return strings.TrimSuffix(registeredName, "."+config), config
}

// handlers lists the handlers for a hook from ExtensionConfigs that select the namespace,
// running discovery for configs that have not been discovered yet.
func (c *Client) handlers(ctx context.Context, hook, namespace string) ([]registered, error) {
	configs, err := c.selecting(ctx, namespace)
	if err != nil {
		return nil, err
	}
	var out []registered
	for _, cfg := range configs {
		if len(cfg.Status.Handlers) == 0 {
			if err := c.Discover(ctx, cfg); err != nil {
				return nil, err
			}
		}
		for _, h := range cfg.Status.Handlers {
			if handles(h, hook) {
				out = append(out, registered{config: cfg, handler: h})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].handler.Name < out[j].handler.Name })
	return out, nil
}

// selecting lists the ExtensionConfigs whose namespace selector selects the namespace.
func (c *Client) selecting(ctx context.Context, namespace string) ([]*runtimev1.ExtensionConfig, error) {
	items, err := c.Kube.List(ctx, extensionConfigs, "", "")
	if kube.IsNotFound(err) {
		return nil, nil // no Runtime SDK CRD installed: no extensions
	}
	if err != nil {
		return nil, fmt.Errorf("listing ExtensionConfigs: %w", err)
	}
	ns := &namespaceLabels{name: namespace}
	var out []*runtimev1.ExtensionConfig
	for i := range items {
		cfg := &runtimev1.ExtensionConfig{}
		if err := c.Kube.Decode(&items[i], cfg); err != nil {
			return nil, fmt.Errorf("ExtensionConfig %s: %w", items[i].GetName(), err)
		}
		if ok, err := c.selects(ctx, cfg, ns); err != nil {
			return nil, err
		} else if ok {
			out = append(out, cfg)
		}
	}
	return out, nil
}

// handles says whether a registered handler serves a hook in the version topoflow calls.
func handles(h runtimev1.ExtensionHandler, hook string) bool {
	return h.RequestHook.Hook == hook && h.RequestHook.APIVersion == hooksv1.APIVersion
}

// LifecycleHooks are the hooks a Cluster's lifecycle calls.
var LifecycleHooks = []string{
	hooksv1.BeforeClusterCreate, hooksv1.AfterControlPlaneInitialized, hooksv1.BeforeClusterUpgrade,
	hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade,
	hooksv1.AfterWorkersUpgrade, hooksv1.AfterClusterUpgrade, hooksv1.BeforeClusterDelete,
}

// Unhandled lists the lifecycle hooks that no ExtensionConfig selecting the namespace has a
// handler for: calling one sends no request and passes, as in Cluster API. It asks no extension:
// while a selecting config is not yet discovered nothing is known, and the answer is nil.
func (c *Client) Unhandled(ctx context.Context, namespace string) ([]string, error) {
	configs, err := c.selecting(ctx, namespace)
	if err != nil {
		return nil, err
	}
	handled := map[string]bool{}
	for _, cfg := range configs {
		if len(cfg.Status.Handlers) == 0 {
			return nil, nil
		}
		for _, h := range cfg.Status.Handlers {
			for _, hook := range LifecycleHooks {
				handled[hook] = handled[hook] || handles(h, hook)
			}
		}
	}
	var out []string
	for _, hook := range LifecycleHooks {
		if !handled[hook] {
			out = append(out, hook)
		}
	}
	return out, nil
}

// namespaceLabels reads a namespace's labels once, when a selector first needs them.
type namespaceLabels struct {
	name   string
	read   bool
	labels labels.Set
}

// selects says whether an ExtensionConfig's namespaceSelector selects the namespace (no selector
// selects every namespace).
func (c *Client) selects(ctx context.Context, cfg *runtimev1.ExtensionConfig, ns *namespaceLabels) (bool, error) {
	sel := cfg.Spec.NamespaceSelector
	if sel == nil {
		return true, nil
	}
	if !ns.read {
		u, err := c.Kube.Get(ctx, namespaces, "", ns.name, 0)
		if err != nil {
			return false, fmt.Errorf("reading namespace %s: %w", ns.name, err)
		}
		ns.labels, ns.read = labels.Set(u.GetLabels()), true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, fmt.Errorf("ExtensionConfig %s: spec.namespaceSelector: %w", cfg.Name, err)
	}
	return s.Matches(ns.labels), nil
}

// Discover asks an extension server for its handlers and records them in the ExtensionConfig's
// status.handlers, named "<handler>.<extensionconfig>" as Cluster API names them, with the
// Discovered condition: True, or False (reason DiscoveryFailed, severity Error, "Error in
// discovery: ...") with the handlers found before kept, as Cluster API's ExtensionConfig
// controller records a failed discovery. A CA injected from a Secret (InjectCAAnnotation) is
// copied into the config first.
func (c *Client) Discover(ctx context.Context, cfg *runtimev1.ExtensionConfig) error {
	if _, err := c.injectCA(ctx, cfg); err != nil {
		return err
	}
	handlers, err := c.discover(ctx, cfg)
	cond := status.True(string(runtimev1.DiscoveredCondition))
	if err != nil {
		cond = status.False(string(runtimev1.DiscoveredCondition), runtimev1.DiscoveryFailedReason, status.SeverityError, "Error in discovery: "+err.Error())
	} else {
		cfg.Status.Handlers = handlers
	}
	if werr := c.writeStatus(ctx, cfg, cond); werr != nil && err == nil {
		return werr
	}
	return err
}

// discover runs the Discovery call and returns the handlers with Cluster API's names and defaults.
func (c *Client) discover(ctx context.Context, cfg *runtimev1.ExtensionConfig) ([]runtimev1.ExtensionHandler, error) {
	var resp hooksv1.DiscoveryResponse
	req := map[string]any{"apiVersion": hooksv1.APIVersion, "kind": "DiscoveryRequest"}
	if len(cfg.Spec.Settings) > 0 {
		req["settings"] = cfg.Spec.Settings
	}
	if err := c.post(ctx, cfg, hooksv1.HandlerPath(hooksv1.Discovery, ""), req, defaultTimeout, &resp); err != nil {
		return nil, fmt.Errorf("discovery of ExtensionConfig %s: %w", cfg.Name, err)
	}
	if resp.Status != hooksv1.ResponseStatusSuccess {
		return nil, fmt.Errorf("discovery of ExtensionConfig %s failed: %s", cfg.Name, resp.Message)
	}
	var out []runtimev1.ExtensionHandler
	for _, h := range resp.Handlers {
		h.Name = h.Name + "." + cfg.Name
		if h.TimeoutSeconds == nil {
			t := int32(defaultTimeout / time.Second)
			h.TimeoutSeconds = &t
		}
		if h.FailurePolicy == nil {
			f := runtimev1.FailurePolicyFail
			h.FailurePolicy = &f
		}
		out = append(out, h)
	}
	return out, nil
}

// writeStatus applies the ExtensionConfig's status.handlers and the Discovered condition.
func (c *Client) writeStatus(ctx context.Context, cfg *runtimev1.ExtensionConfig, cond status.Condition) error {
	handlers := make([]any, 0, len(cfg.Status.Handlers))
	for _, h := range cfg.Status.Handlers {
		m := map[string]any{"name": h.Name, "requestHook": map[string]any{"apiVersion": h.RequestHook.APIVersion, "hook": h.RequestHook.Hook}}
		if h.TimeoutSeconds != nil {
			m["timeoutSeconds"] = int64(*h.TimeoutSeconds)
		}
		if h.FailurePolicy != nil {
			m["failurePolicy"] = string(*h.FailurePolicy)
		}
		handlers = append(handlers, m)
	}
	cfg.Status.Conditions = mergeConditions(cfg.Status.Conditions, cond, time.Now())
	js, err := json.Marshal(cfg.Status.Conditions)
	if err != nil {
		return err
	}
	var conditions []any
	if err := json.Unmarshal(js, &conditions); err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": runtimev1.GroupVersion.String(), "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": cfg.Name},
		"status":   map[string]any{"handlers": handlers, "conditions": conditions},
	}}
	if _, err := c.Kube.ApplyStatus(ctx, obj, "topoflow"); err != nil {
		return fmt.Errorf("recording the discovery of ExtensionConfig %s: %w", cfg.Name, err)
	}
	return nil
}

// mergeConditions sets cond on an ExtensionConfig's conditions (status.Merge). They are v1beta1
// conditions of a runtime.cluster.x-k8s.io/v1alpha1 object: no API version is converted, the
// same condition only changes Go type to model/status's and back.
func mergeConditions(current clusterv1.Conditions, cond status.Condition, now time.Time) clusterv1.Conditions {
	var in hubv1.V1Beta1Conditions
	for _, c := range current {
		in = append(in, hubv1.V1Beta1Condition{Type: string(c.Type), Status: c.Status, Severity: string(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message})
	}
	merged := status.Merge(in, []status.Condition{cond}, now)
	out := make(clusterv1.Conditions, len(merged))
	for i, c := range merged {
		out[i] = clusterv1.Condition{Type: clusterv1.ConditionType(c.Type), Status: c.Status, Severity: clusterv1.ConditionSeverity(c.Severity),
			LastTransitionTime: c.LastTransitionTime, Reason: c.Reason, Message: c.Message}
	}
	return out
}

// MaxAnswerBytes bounds what is read of an extension's answer (20 MiB, as Cluster API v1.14's
// runtime client): a larger answer fails the call instead of filling the worker's memory.
const MaxAnswerBytes = 20 << 20

// post sends one request to an extension server and decodes the answer.
func (c *Client) post(ctx context.Context, cfg *runtimev1.ExtensionConfig, path string, body any, timeout time.Duration, out any) error {
	base, err := baseURL(cfg)
	if err != nil {
		return err
	}
	u, err := url.Parse(strings.TrimSuffix(base, "/") + path)
	if err != nil {
		return fmt.Errorf("ExtensionConfig %s: bad URL: %w", cfg.Name, err)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key, _ := ctx.Value(idempotencyKey{}).(string); key != "" {
		req.Header.Set(IdempotencyKeyHeader, key)
	}
	client, err := httpClient(cfg.Spec.ClientConfig.CABundle)
	if err != nil {
		return fmt.Errorf("ExtensionConfig %s: spec.clientConfig.caBundle: %w", cfg.Name, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("calling %s: %w", u.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	if err != nil {
		return fmt.Errorf("reading the answer of %s: %w", u.Path, err)
	}
	if len(data) > MaxAnswerBytes {
		return fmt.Errorf("calling %s: HTTP %d: the answer is larger than %d MiB", u.Path, resp.StatusCode, MaxAnswerBytes>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("calling %s: HTTP %d: %s", u.Path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the answer of %s: %w", u.Path, err)
	}
	return nil
}

func baseURL(cfg *runtimev1.ExtensionConfig) (string, error) {
	cc := cfg.Spec.ClientConfig
	switch {
	case cc.URL != nil && cc.Service != nil:
		return "", fmt.Errorf("ExtensionConfig %s: spec.clientConfig: url and service are mutually exclusive", cfg.Name)
	case cc.URL != nil:
		if !strings.HasPrefix(*cc.URL, "https://") {
			return "", fmt.Errorf("ExtensionConfig %s: spec.clientConfig.url must use https", cfg.Name)
		}
		return *cc.URL, nil
	case cc.Service != nil:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		base := fmt.Sprintf("https://%s.%s.svc:%d", cc.Service.Name, cc.Service.Namespace, port)
		if cc.Service.Path != nil {
			base += "/" + strings.Trim(*cc.Service.Path, "/")
		}
		return base, nil
	}
	return "", fmt.Errorf("ExtensionConfig %s: spec.clientConfig needs url or service", cfg.Name)
}

// clients holds one HTTP client per CA bundle, so calls to an extension reuse its connections.
var clients sync.Map // string(caBundle) -> *http.Client

// httpClient returns the client for servers signed by caBundle (the system roots when empty).
func httpClient(caBundle []byte) (*http.Client, error) {
	if c, ok := clients.Load(string(caBundle)); ok {
		return c.(*http.Client), nil
	}
	c, err := newHTTPClient(caBundle)
	if err != nil {
		return nil, err
	}
	actual, _ := clients.LoadOrStore(string(caBundle), c)
	return actual.(*http.Client), nil
}

func newHTTPClient(caBundle []byte) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	withClientCertificate(tlsCfg)
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, fmt.Errorf("no PEM certificate found")
		}
		tlsCfg.RootCAs = pool
	}
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: http.ProxyFromEnvironment},
		// A redirect is not followed: it could send the call, with the client certificate, to
		// another host than the one the ExtensionConfig names. The 3xx answer itself fails the
		// call, as in Cluster API v1.14's runtime client.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
