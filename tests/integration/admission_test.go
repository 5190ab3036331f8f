//go:build integration

package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/admission"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/selfsigned"
	"github.com/topoflow/topoflow/model/validation"
)

// serveAdmission serves topoflow's admission webhooks over TLS and registers them on the real API
// server for the test's namespace only; they are removed when the test ends. It returns a
// function that unregisters them early.
func (e *env) serveAdmission() func() {
	e.t.Helper()
	return e.serveAdmissionWith(validation.Gates{})
}

// serveAdmissionWith is serveAdmission with Cluster API feature gates on (the worker's
// --feature-gates).
func (e *env) serveAdmissionWith(gates validation.Gates) func() {
	e.t.Helper()
	pair, err := selfsigned.New("127.0.0.1")
	require.NoError(e.t, err)
	cert, err := pair.TLS()
	require.NoError(e.t, err)
	srv := httptest.NewUnstartedServer((&admission.Server{Reads: activities.New(kc, slog.Default()), Log: slog.Default(), Gates: gates}).Handler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	url := srv.URL
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": e.ns}}
	m, v := admission.Configurations(admissionregv1.WebhookClientConfig{URL: &url, CABundle: pair.CA}, sel, "-"+e.ns)
	require.NoError(e.t, admission.Register(e.ctx, kc, m, v))
	unregister := func() { _ = admission.Unregister(context.Background(), kc, "-"+e.ns) }
	e.t.Cleanup(func() { unregister(); srv.Close() })
	return unregister
}

// applyErr server-side applies a Cluster edit as `kubectl apply --server-side` would and returns
// the API server's answer.
func (e *env) applyClusterEdit(name string, edit func(u *unstructured.Unstructured)) error {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": e.ns},
		"spec":     map[string]any{"topology": map[string]any{}},
	}}
	edit(u)
	_, err := kc.Apply(e.ctx, u, "kubectl")
	return err
}

// TestAdmission (#13): with topoflow's webhooks registered, bad Cluster and ClusterClass input
// is refused at apply time with Cluster API's semantics and a field-named message, defaults are
// written into the Cluster as Cluster API's webhook writes them, and nothing moves. With the
// webhooks unregistered, the same version jump reaches the workflow, whose guard refuses it.
func TestAdmission(t *testing.T) {
	e := newEnv(t, envOptions{})
	unregister := e.serveAdmission()
	e.applyFile(classFile)

	// The webhooks take effect once the API server has seen their configuration.
	bad := func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, "quick-start", "spec", "topology", "class")
		_ = unstructured.SetNestedField(u.Object, "v1.31.2", "spec", "topology", "version")
		_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "region", "value": int64(7)}}, "spec", "topology", "variables")
	}
	var err error
	e.eventually(20*time.Second, "an invalid variable value refused at create", func() (bool, string) {
		err = e.applyClusterEdit("bad", bad)
		return err != nil, fmt.Sprint(err)
	})
	assert.Contains(t, err.Error(), `spec.topology.variables[region].value: Invalid value: "integer"`)

	// Create: the version gets its "v" and the class's variable defaults are written in.
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			_ = unstructured.SetNestedField(u.Object, "1.31.2", "spec", "topology", "version")
		}
	})
	c := e.cluster("demo")
	assert.Equal(t, "v1.31.2", c.Spec.Topology.Version)
	vars := map[string]string{}
	for _, v := range c.Spec.Topology.Variables {
		vars[v.Name] = string(v.Value.Raw)
	}
	assert.Equal(t, `"registry.k8s.io"`, vars["imageRepository"], "the class's default written into the Cluster")
	e.waitReconciled("demo", 90*time.Second)

	version := func(v string) func(u *unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, v, "spec", "topology", "version")
		}
	}
	for _, tc := range []struct {
		name string
		edit func(u *unstructured.Unstructured)
		want string
	}{
		{"two-minor jump", version("v1.33.0"), `spec.topology.version: Invalid value: "v1.33.0": version can be increased by at most one minor (from v1.31.2)`},
		{"downgrade", version("v1.30.4"), `spec.topology.version: Invalid value: "v1.30.4": version cannot be decreased from v1.31.2`},
		{"unknown class", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "no-such-class", "spec", "topology", "class")
		}, `spec.topology.class: Invalid value: "no-such-class": ClusterClass ` + e.ns + `/no-such-class not found`},
		{"invalid variable value", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "region", "value": int64(7)}}, "spec", "topology", "variables")
		}, `spec.topology.variables[region].value: Invalid value: "integer"`},
	} {
		err := e.applyClusterEdit("demo", tc.edit)
		if assert.Error(t, err, tc.name) {
			assert.Contains(t, err.Error(), `admission webhook "validation.cluster.cluster.x-k8s.io" denied the request`, tc.name)
			assert.Contains(t, err.Error(), tc.want, tc.name)
		}
	}
	assert.Equal(t, "v1.31.2", e.cluster("demo").Spec.Topology.Version, "nothing written")

	// A class in use cannot be deleted.
	err = kc.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(e.ns).Delete(e.ctx, "quick-start", metav1.DeleteOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ClusterClass cannot be deleted because it is used by Cluster(s): "+e.ns+"/demo")

	// Without the webhooks the jump is written; the workflow's guard refuses it and nothing moves.
	unregister()
	e.eventually(20*time.Second, "the jump written without the webhooks", func() (bool, string) {
		err := e.applyClusterEdit("demo", version("v1.33.0"))
		return err == nil, fmt.Sprint(err)
	})
	e.eventually(30*time.Second, "the guard refuses the jump", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Status == "False" && strings.Contains(cond.Message, "spec.topology.version v1.33.0"), fmt.Sprint(cond)
	})
	for _, tr := range e.sim.Transitions() {
		assert.Equal(t, "v1.31.2", tr.Version, "nothing moved: %+v", tr)
	}
}

// TestExtensionConfigAdmission (#13): topoflow serves Cluster API's ExtensionConfig webhooks
// (Cluster API's refuse every ExtensionConfig with its RuntimeSDK gate off): an http URL and an
// unknown request-cluster-version are refused at apply time naming the field, and a valid one
// gets Cluster API's defaults.
func TestExtensionConfigAdmission(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.serveAdmission()
	name := "adm-" + e.ns
	cfg := func(url string, annotations map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": name, "labels": map[string]any{"kubernetes.io/metadata.name": e.ns}} // this test's registration
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "runtime.cluster.x-k8s.io/v1alpha1", "kind": "ExtensionConfig", "metadata": meta,
			"spec": map[string]any{"clientConfig": map[string]any{"url": url}},
		}}
	}
	t.Cleanup(func() {
		_ = kc.Dynamic.Resource(extensionConfigs).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	var err error
	e.eventually(20*time.Second, "an http URL refused", func() (bool, string) {
		_, err = kc.Apply(e.ctx, cfg("http://127.0.0.1:1", nil), "kubectl")
		return err != nil, fmt.Sprint(err)
	})
	assert.Contains(t, err.Error(), `spec.clientConfig.url: Invalid value: "http://127.0.0.1:1": 'https' is the only allowed URL scheme`)
	_, err = kc.Apply(e.ctx, cfg("https://127.0.0.1:1", map[string]any{"topoflow.dev/request-cluster-version": "v1beta3"}), "kubectl")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `metadata.annotations[topoflow.dev/request-cluster-version]: Invalid value: "v1beta3"`)

	got, err := kc.Apply(e.ctx, cfg("https://127.0.0.1:1", map[string]any{"topoflow.dev/request-cluster-version": "v1beta1"}), "kubectl")
	require.NoError(t, err)
	sel, found, _ := unstructured.NestedMap(got.Object, "spec", "namespaceSelector")
	assert.True(t, found, "namespaceSelector defaulted")
	assert.Empty(t, sel, "to the empty selector (every namespace)")
}
