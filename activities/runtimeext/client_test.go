package runtimeext

import (
	"bytes"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/tests/extension"
)

func handler(cfg *runtimev1.ExtensionConfig, hook string, policy runtimev1.FailurePolicy) registered {
	return registered{config: cfg, handler: runtimev1.ExtensionHandler{
		Name:          "beforeclustercreate-handler." + cfg.Name,
		RequestHook:   runtimev1.GroupVersionHook{APIVersion: hooksv1.APIVersion, Hook: hook},
		FailurePolicy: &policy,
	}}
}

func config(name, url string, ca []byte) *runtimev1.ExtensionConfig {
	return &runtimev1.ExtensionConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: runtimev1.ExtensionConfigSpec{
			ClientConfig: runtimev1.ClientConfig{URL: &url, CABundle: ca},
			Settings:     map[string]string{"team": "platform"},
		},
	}
}

// TestCallAggregation calls two real HTTPS extension servers: the lowest non-zero
// retryAfterSeconds wins; a Failure fails the hook; Ignore swallows transport errors only.
func TestCallAggregation(t *testing.T) {
	a, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer a.Close()
	b, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer b.Close()
	c := &Client{}
	req := map[string]any{"cluster": map[string]any{"metadata": map[string]any{"name": "c1", "namespace": "ns"}}}
	hs := []registered{
		handler(config("ext-a", a.URL, a.CABundle), hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail),
		handler(config("ext-b", b.URL, b.CABundle), hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail),
	}

	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{RetryAfterSeconds: 30, Message: "a waits"})
	b.Script(hooksv1.BeforeClusterCreate, extension.Answer{RetryAfterSeconds: 10, Message: "b waits"})
	res := c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, req)
	assert.EqualValues(t, 10, res.RetryAfterSeconds, "lowest non-zero wins")
	assert.Empty(t, res.Failed)
	assert.Len(t, res.Calls, 2)
	calls := a.Calls(hooksv1.BeforeClusterCreate)
	require.Len(t, calls, 1)
	assert.Equal(t, "ns/c1", calls[0].Cluster, "the Cluster is in the request")
	assert.Equal(t, map[string]string{"team": "platform"}, calls[0].Settings, "settings passed through")

	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{Status: "Failure", Message: "no quota"})
	res = c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, req)
	assert.Equal(t, []string{"beforeclustercreate-handler.ext-a"}, res.Failed)
	assert.Contains(t, res.Message, "no quota")
	// Worded as Cluster API v1.14's runtime client wraps it (CallAllExtensions, CallExtension,
	// validateResponseStatus), and, as there, the handlers after the failing one are not called.
	assert.Equal(t, `failed to call extension handlers for hook "BeforeClusterCreate.hooks.runtime.cluster.x-k8s.io": `+
		`failed to call extension handler "beforeclustercreate-handler.ext-a": got failure response with message: no quota`, res.Failure)
	assert.Len(t, res.Calls, 1, "ext-b not called after ext-a failed")
	assert.Len(t, b.Calls(hooksv1.BeforeClusterCreate), 1, "only the first round reached ext-b")

	res = c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, req)
	assert.Empty(t, res.Failed)
	assert.Zero(t, res.RetryAfterSeconds, "scripts used up: both answer Success")

	// An HTTP error fails the hook under Fail, and is ignored under Ignore.
	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{HTTPStatus: http.StatusInternalServerError})
	res = c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, req)
	assert.Equal(t, []string{"beforeclustercreate-handler.ext-a"}, res.Failed)
	assert.Contains(t, res.Calls[0].Error, "HTTP 500")
	ignoring := []registered{handler(config("ext-a", a.URL, a.CABundle), hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyIgnore)}
	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{HTTPStatus: http.StatusBadGateway})
	res = c.callAll(context.Background(), ignoring, hooksv1.BeforeClusterCreate, req)
	assert.Empty(t, res.Failed)
	assert.True(t, res.Calls[0].Ignored)
	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{Status: "Failure", Message: "real no"})
	res = c.callAll(context.Background(), ignoring, hooksv1.BeforeClusterCreate, req)
	assert.NotEmpty(t, res.Failed, "Ignore does not swallow a Failure answer")
	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{Status: "Maybe", Message: "odd"})
	res = c.callAll(context.Background(), ignoring, hooksv1.BeforeClusterCreate, req)
	assert.NotEmpty(t, res.Failed, "nor an answer of unknown status (checked after the failure policy, as in Cluster API)")
	assert.Contains(t, res.Failure, `got unknown response status "Maybe" with message: odd`)
}

// TestTLSIsVerified: a server whose certificate is not signed by the caBundle is refused.
func TestTLSIsVerified(t *testing.T) {
	a, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer a.Close()
	other, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer other.Close()
	c := &Client{}
	hs := []registered{handler(config("ext-a", a.URL, other.CABundle), hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail)}
	res := c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, map[string]any{})
	require.Len(t, res.Failed, 1)
	assert.Contains(t, res.Calls[0].Error, "certificate")
	assert.Empty(t, a.Calls(""), "no request reached the server")
}

func TestBaseURL(t *testing.T) {
	u := "https://ext.example:9443/prefix"
	port := int32(8443)
	path := "/hooks"
	for _, tc := range []struct {
		cc   runtimev1.ClientConfig
		want string
		err  string
	}{
		{runtimev1.ClientConfig{URL: &u}, u, ""},
		{runtimev1.ClientConfig{Service: &runtimev1.ServiceReference{Namespace: "rt", Name: "ext"}}, "https://ext.rt.svc:443", ""},
		{runtimev1.ClientConfig{Service: &runtimev1.ServiceReference{Namespace: "rt", Name: "ext", Port: &port, Path: &path}}, "https://ext.rt.svc:8443/hooks", ""},
		{runtimev1.ClientConfig{URL: ptr("http://plain")}, "", "must use https"},
		{runtimev1.ClientConfig{}, "", "needs url or service"},
	} {
		got, err := baseURL(&runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: runtimev1.ExtensionConfigSpec{ClientConfig: tc.cc}})
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

func ptr[T any](v T) *T { return &v }

// TestIdempotencyKey: requests sent under WithIdempotencyKey carry the key in the header, the same
// on every attempt; without one, no header. A handler that answered is not a transport failure.
func TestIdempotencyKey(t *testing.T) {
	a, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer a.Close()
	c := &Client{}
	hs := []registered{handler(config("ext-a", a.URL, a.CABundle), hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail)}
	ctx := WithIdempotencyKey(context.Background(), "topology/ns/c1@run#7")
	for range 2 {
		res := c.callAll(ctx, hs, hooksv1.BeforeClusterCreate, map[string]any{})
		assert.False(t, res.TransportFailed())
	}
	c.callAll(context.Background(), hs, hooksv1.BeforeClusterCreate, map[string]any{})
	calls := a.Calls(hooksv1.BeforeClusterCreate)
	require.Len(t, calls, 3)
	assert.Equal(t, []string{"topology/ns/c1@run#7", "topology/ns/c1@run#7", ""},
		[]string{calls[0].IdempotencyKey, calls[1].IdempotencyKey, calls[2].IdempotencyKey})

	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{HTTPStatus: http.StatusBadGateway})
	assert.True(t, c.callAll(ctx, hs, hooksv1.BeforeClusterCreate, map[string]any{}).TransportFailed())
	a.Script(hooksv1.BeforeClusterCreate, extension.Answer{Status: "Failure"})
	assert.False(t, c.callAll(ctx, hs, hooksv1.BeforeClusterCreate, map[string]any{}).TransportFailed(), "a Failure is an answer")
}

// The Cluster in a lifecycle request (given on the hub, v1beta2) is sent as v1beta2 unless the
// ExtensionConfig asks for v1beta1 (runtimev1.RequestClusterVersionAnnotation: Cluster API's
// conversion, references at the versions the API server prefers), and trimmed as Cluster API
// trims it in both.
func TestRequestClusterVersion(t *testing.T) {
	ext, err := extension.Start(hooksv1.BeforeClusterCreate)
	require.NoError(t, err)
	defer ext.Close()
	cluster := map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": "c1", "namespace": "ns", "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": "{}", "team": "a",
		}, "managedFields": []any{map[string]any{"manager": "kubectl"}}},
		"spec": map[string]any{
			"infrastructureRef": map[string]any{"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "SimCluster", "name": "c1-x"},
			"topology":          map[string]any{"classRef": map[string]any{"name": "quick-start"}, "version": "v1.33.0"},
		},
		"status": map[string]any{"phase": "Provisioned", "initialization": map[string]any{"infrastructureProvisioned": true}},
	}
	req := map[string]any{"cluster": cluster}
	c := &Client{preferred: func(group, kind string) (string, error) { return "v1beta1", nil }}
	for _, tc := range []struct {
		annotation string
		want       map[string]any // fields of the Cluster sent
	}{
		{"", map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "spec": cluster["spec"]}},
		{runtimev1.ClusterV1Beta1, map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "spec": map[string]any{
			"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimCluster", "name": "c1-x", "namespace": "ns"},
			"topology":          map[string]any{"class": "quick-start", "version": "v1.33.0"},
		}}},
	} {
		cfg := config("ext", ext.URL, ext.CABundle)
		if tc.annotation != "" {
			cfg.Annotations = map[string]string{runtimev1.RequestClusterVersionAnnotation: tc.annotation}
		}
		res := c.callAll(context.Background(), []registered{handler(cfg, hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail)}, hooksv1.BeforeClusterCreate, req)
		require.Empty(t, res.Failed, res.Message)
		calls := ext.Calls(hooksv1.BeforeClusterCreate)
		sent := calls[len(calls)-1].Body["cluster"].(map[string]any)
		assert.Equal(t, tc.want["apiVersion"], sent["apiVersion"], tc.annotation)
		assert.Equal(t, tc.want["spec"], sent["spec"], tc.annotation)
		assert.NotContains(t, sent, "status", "Cluster API sends no status")
		meta := sent["metadata"].(map[string]any)
		assert.NotContains(t, meta, "managedFields")
		assert.Equal(t, map[string]any{"team": "a"}, meta["annotations"], "kubectl's last-applied manifest left out")
	}
	assert.Contains(t, cluster, "status", "the caller's Cluster is not changed")
	assert.Contains(t, cluster["metadata"], "managedFields", "the caller's Cluster is not changed")

	cfg := config("ext", ext.URL, ext.CABundle)
	cfg.Annotations = map[string]string{runtimev1.RequestClusterVersionAnnotation: "v2"}
	res := c.callAll(context.Background(), []registered{handler(cfg, hooksv1.BeforeClusterCreate, runtimev1.FailurePolicyFail)}, hooksv1.BeforeClusterCreate, req)
	require.Len(t, res.Failed, 1)
	assert.Contains(t, res.Calls[0].Error, "topoflow.dev/request-cluster-version")
}

// TestNoRedirectsAndBoundedAnswer: a redirect is not followed, and an answer over 20 MiB fails the
// call (Cluster API v1.14.2 internal/runtime/client: httpClientForExtension's CheckRedirect and
// maxExtensionResponseBodyBytes).
func TestNoRedirectsAndBoundedAnswer(t *testing.T) {
	var reached atomic.Int32
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte(`{"status":"Success"}`))
	}))
	defer target.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, target.URL+"/answer", http.StatusTemporaryRedirect)
		case "/large":
			_, _ = w.Write([]byte(`{"status":"Success","message":"`))
			_, _ = w.Write(bytes.Repeat([]byte("x"), MaxAnswerBytes))
			_, _ = w.Write([]byte(`"}`))
		default:
			_, _ = w.Write([]byte(`{"status":"Success","message":"` + strings.Repeat("x", MaxAnswerBytes-100) + `"}`))
		}
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	cfg := config("ext", srv.URL, ca)
	c := &Client{}
	tests := []struct {
		path, wantErr string
	}{
		{"/redirect", "HTTP 307"},
		{"/large", "larger than 20 MiB"},
		{"/fits", ""},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var out map[string]any
			err := c.post(context.Background(), cfg, tc.path, map[string]any{}, 10*time.Second, &out)
			if tc.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, "Success", out["status"])
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
	assert.Zero(t, reached.Load(), "the redirect's target was never called")
}

// TestMergeConditions: the Discovered condition is set on an ExtensionConfig's v1beta1 conditions
// as model/status merges them: its transition time kept while its status stays, the others kept.
func TestMergeConditions(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	now := time.Date(2026, 11, 28, 1, 2, 3, 400_000_000, time.UTC)
	current := clusterv1.Conditions{
		{Type: "Other", Status: "False", Severity: "Warning", Reason: "Why", Message: "kept", LastTransitionTime: t0},
		{Type: runtimev1.DiscoveredCondition, Status: "True", LastTransitionTime: t0},
	}
	failed := status.False(string(runtimev1.DiscoveredCondition), runtimev1.DiscoveryFailedReason, status.SeverityError, "Error in discovery: boom")
	got := mergeConditions(current, failed, now)
	assert.Equal(t, clusterv1.Conditions{
		{Type: runtimev1.DiscoveredCondition, Status: "False", Severity: "Error", Reason: runtimev1.DiscoveryFailedReason, Message: "Error in discovery: boom",
			LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))},
		current[0],
	}, got)
	assert.Equal(t, t0, mergeConditions(current, status.True(string(runtimev1.DiscoveredCondition)), now)[1].LastTransitionTime, "the status stays")
	assert.Len(t, mergeConditions(nil, failed, now), 1)
}
