//go:build integration

// Package integration runs topoflow against a real kube-apiserver + etcd and a real Temporal
// server (brought up by tests/run.sh). The worker, the starter's watcher and the simulated
// providers run in-process, each test in its own namespace and on its own task queue.
package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/starter/watcher"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

var (
	kc       *kube.Client
	tc       client.Client
	temporal temporalx.Options
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBECONFIG") == "" || os.Getenv("TEMPORAL_ADDRESS") == "" {
		fmt.Fprintln(os.Stderr, "integration tests need KUBECONFIG and TEMPORAL_ADDRESS of a running stack: run them with `make test`")
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := kube.RESTConfig("")
	if err == nil {
		kc, err = kube.New(cfg)
	}
	if err == nil {
		err = kc.WaitForAPI(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "API server:", err)
		os.Exit(1)
	}
	temporal = temporalx.Options{}.FromEnv()
	tc, err = temporalx.Dial(ctx, temporal, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err == nil {
		err = temporalx.EnsureKeywordSearchAttributes(ctx, tc, temporal.Namespace, workflows.SearchAttributeNames)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Temporal:", err)
		os.Exit(1)
	}
	code := m.Run()
	tc.Close()
	os.Exit(code)
}

// env is one test's world: a namespace, and topoflow plus the simulated providers serving it.
type env struct {
	t         *testing.T
	ctx       context.Context
	ns        string
	taskQueue string
	sim       *provider.Provider
	// requests counts the in-process worker's API requests by verb (see requestCounter).
	requests *requestCounter
	// sent is the last intent the worker sent for each object, under capi-topology, by
	// "Kind/name" (kube.Client.Sent).
	sent sync.Map
}

type envOptions struct {
	sim    provider.Options
	timing workflows.Timing
	// extensionConfigs turns on the watcher's cluster-wide ExtensionConfig watch.
	extensionConfigs bool
	// kube is the client topoflow (worker and watcher) uses; the test's admin client by default.
	kube *kube.Client
	// noWorker leaves the worker to the test (a worker process it can kill, say).
	noWorker bool
	// noWatcher leaves the watcher to the test (starter processes, say).
	noWatcher bool
	// rolloutTiming is passed to the Rollout workflows the watcher starts.
	rolloutTiming workflows.RolloutTiming
}

func newEnv(t *testing.T, o envOptions) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &env{t: t, ctx: ctx, ns: "it-" + strings.ToLower(rand.String(6)), taskQueue: "topoflow-it-" + rand.String(8)}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})).With("test", t.Name())

	_, err := kc.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": e.ns}}},
		metav1.CreateOptions{})
	require.NoError(t, err)

	tk := kc
	if o.kube != nil {
		tk = o.kube
	}
	var w worker.Worker
	if !o.noWorker {
		// The worker reads through its own cache, as cmd/worker does, on a client of its own
		// (same identity as tk) whose requests the test can count.
		e.requests = &requestCounter{}
		wk := e.requests.client(t, tk)
		wk.UseCache(ctx, log, activities.FieldManagers()...)
		wk.Sent = func(obj *unstructured.Unstructured, manager string) {
			if manager == labels.FieldManager {
				e.sent.Store(obj.GetKind()+"/"+obj.GetName(), obj)
			}
		}
		w = worker.New(tc, e.taskQueue, workflows.WorkerOptions())
		acts := activities.New(wk, log)
		acts.Temporal = tc
		events, stopEvents, err := activities.NewEventRecorder(tk.Config)
		require.NoError(t, err)
		t.Cleanup(stopEvents)
		acts.Events = events
		workflows.Register(w, acts)
		require.NoError(t, w.Start())
	}

	if o.sim.ProvisionDelay == 0 {
		o.sim.ProvisionDelay = 500 * time.Millisecond
	}
	if o.sim.RolloutDuration == 0 {
		o.sim.RolloutDuration = time.Second
	}
	o.sim.Namespace = e.ns
	e.sim = provider.New(kc.Dynamic, o.sim, log.With("component", "sim"))
	go func() { _ = e.sim.Run(ctx) }()

	if o.timing.WaitResync == 0 {
		o.timing.WaitResync = 20 * time.Second
	}
	if !o.noWatcher {
		wt := watcher.New(tk, tc, watcher.Options{TaskQueue: e.taskQueue, Namespace: e.ns, Timing: o.timing, ExtensionConfigs: o.extensionConfigs, Coalesce: watcher.DefaultCoalesce, CoalesceMax: watcher.DefaultCoalesceMax, RolloutTiming: o.rolloutTiming}, log.With("component", "watcher"))
		go func() { _ = wt.Run(ctx) }()
	}

	t.Cleanup(func() {
		// End the workflows this test started so they do not linger on the server.
		for _, id := range e.workflowIDs() {
			_ = tc.TerminateWorkflow(context.Background(), id, "", "test finished")
		}
		cancel()
		if w != nil {
			w.Stop()
		}
		_ = kc.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Delete(context.Background(), e.ns, metav1.DeleteOptions{})
	})
	return e
}

func (e *env) workflowIDs() []string {
	list, err := kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, workflows.WorkflowID(e.ns, c.GetName()))
	}
	if rl, err := kc.Dynamic.Resource(kube.Rollouts).Namespace(e.ns).List(context.Background(), metav1.ListOptions{}); err == nil {
		for _, r := range rl.Items {
			ids = append(ids, workflows.RolloutWorkflowID(e.ns, r.GetName()))
		}
	}
	return ids
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// repoFile returns the path of a file relative to the repository root.
func repoFile(rel string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", rel)
}

// applyFile applies every document of a manifest into the test namespace, after edits.
func (e *env) applyFile(rel string, edits ...func(*unstructured.Unstructured)) {
	e.t.Helper()
	data, err := os.ReadFile(repoFile(rel))
	require.NoError(e.t, err)
	e.applyYAML(data, edits...)
}

func (e *env) applyYAML(data []byte, edits ...func(*unstructured.Unstructured)) {
	e.t.Helper()
	docs, err := decode.Documents(bytes.NewReader(data))
	require.NoError(e.t, err)
	for _, d := range docs {
		d.SetNamespace(e.ns)
		for _, edit := range edits {
			edit(d)
		}
		if d.GetKind() == "" {
			continue
		}
		_, err := kc.Apply(e.ctx, d, "integration-test")
		require.NoError(e.t, err, "applying %s %s", d.GetKind(), d.GetName())
	}
}

// only keeps documents of the given kinds (others are emptied and skipped by apply).
func onlyKinds(kinds ...string) func(*unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		for _, k := range kinds {
			if u.GetKind() == k {
				return
			}
		}
		u.SetKind("")
	}
}

func (e *env) cluster(name string) *clusterv1.Cluster {
	e.t.Helper()
	c := &clusterv1.Cluster{}
	require.NoError(e.t, kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, name, c))
	return c
}

// eventually polls cond every 200ms until it holds or the timeout passes, then fails with the
// last explanation cond gave.
func (e *env) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	e.t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
}

func (e *env) waitPhase(name, phase string, timeout time.Duration) *clusterv1.Cluster {
	e.t.Helper()
	var c *clusterv1.Cluster
	e.eventually(timeout, "Cluster "+name+" phase "+phase, func() (bool, string) {
		c = &clusterv1.Cluster{}
		if err := kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, name, c); err != nil {
			return false, err.Error()
		}
		return c.Status.Phase == phase, fmt.Sprintf("phase=%q conditions=%v", c.Status.Phase, conditionSummary(c.Status.Conditions))
	})
	return c
}

// waitReconciled waits until the Cluster is Provisioned, its control plane ready and its whole
// topology applied (TopologyReconciled=True). Provisioned alone only means the infrastructure is
// ready and the endpoint known (seed 004); the control plane may still be initializing.
func (e *env) waitReconciled(name string, timeout time.Duration) *clusterv1.Cluster {
	e.t.Helper()
	var c *clusterv1.Cluster
	e.eventually(timeout, "Cluster "+name+" reconciled", func() (bool, string) {
		c = &clusterv1.Cluster{}
		if err := kc.GetTyped(e.ctx, kube.V1Beta1Clusters, e.ns, name, c); err != nil {
			return false, err.Error()
		}
		tr := c.Status.Conditions.Get("TopologyReconciled")
		return c.Status.Phase == clusterv1.ClusterPhaseProvisioned && c.Status.ControlPlaneReady &&
				tr != nil && tr.Status == corev1.ConditionTrue,
			fmt.Sprintf("phase=%q conditions=%v", c.Status.Phase, conditionSummary(c.Status.Conditions))
	})
	return c
}

func conditionSummary(cs clusterv1.Conditions) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}

func (e *env) list(gvr schema.GroupVersionResource, selector string) []unstructured.Unstructured {
	e.t.Helper()
	l, err := kc.Dynamic.Resource(gvr).Namespace(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: selector})
	require.NoError(e.t, err)
	return l.Items
}

// getTyped reads one object of a known resource into out (and returns out).
func (e *env) getTyped(gvr schema.GroupVersionResource, name string, out any) any {
	e.t.Helper()
	require.NoError(e.t, kc.GetTyped(e.ctx, gvr, e.ns, name, out), "%s %s", gvr.Resource, name)
	return out
}

func (e *env) get(ref *corev1.ObjectReference) *unstructured.Unstructured {
	e.t.Helper()
	require.NotNil(e.t, ref)
	u, err := kc.GetRef(e.ctx, ref, e.ns)
	require.NoError(e.t, err)
	return u
}

func schemaGVR(group, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: resource}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// requestCounter counts API requests by verb (metrics.Verb: get, list, watch, apply, ...).
type requestCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

// client returns a client like base (same identity) whose requests are counted.
func (r *requestCounter) client(t *testing.T, base *kube.Client) *kube.Client {
	t.Helper()
	cfg := rest.CopyConfig(base.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			r.mu.Lock()
			if r.counts == nil {
				r.counts = map[string]int{}
			}
			r.counts[metrics.Verb(req)]++
			r.mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	k, err := kube.New(cfg)
	require.NoError(t, err)
	k.Warn = base.Warn
	return k
}

// snapshot returns the counts so far.
func (r *requestCounter) snapshot() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.counts)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
