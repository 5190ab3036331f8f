// Package metrics holds topoflow's own Prometheus metrics, the Temporal SDK's (through the SDK's
// OpenTelemetry handler), and the HTTP endpoint that serves them with /healthz and /readyz.
// Every process registers into one registry (Registry) and serves it with Serve.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.temporal.io/sdk/client"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
)

// Registry is the process's metrics registry: topoflow's metrics, Go and process metrics, and
// (after TemporalHandler) the Temporal SDK's.
var Registry = prometheus.NewRegistry()

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "topoflow", Name: name, Help: help}, labels)
	Registry.MustRegister(c)
	return c
}

// topoflow's metrics. The metrics table of docs/operations.md lists them.
var (
	// Watch events the starter received, by kind of object, and those folded into an event
	// already queued for the same Cluster.
	EventsReceived  = counter("watch_events_received_total", "Watch events received, by object kind.", "kind")
	EventsCoalesced = counter("watch_events_coalesced_total", "Watch events folded into one already queued for the same Cluster.")
	// Updates the starter did not signal because only topoflow's own field managers changed the
	// object (an echo of topoflow's write), by kind.
	EchoesSkipped = counter("watch_echoes_skipped_total", "Watch updates not signalled because only topoflow's own writes changed the object, by kind.", "kind")
	// Updates the starter did not signal because they changed nothing a pass reads (a provider's
	// finalizer, a condition, a status already known: topology.Unobserved), by kind.
	UnobservedSkipped = counter("watch_unobserved_skipped_total", "Watch updates not signalled because they changed nothing a pass reads, by kind.", "kind")
	QueueDepth        = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "topoflow", Name: "watch_queue_depth", Help: "Clusters waiting to be signalled."})
	// CoalesceHold is how long the starter held the last event it queued (--coalesce, growing
	// with the Clusters that have events at once up to --coalesce-max).
	CoalesceHold = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "topoflow", Name: "watch_coalesce_hold_seconds", Help: "How long the starter held the last event it queued before signalling."})
	// Signals (signal-with-start) sent to Cluster workflows, by result (ok, error).
	SignalsSent = counter("signals_sent_total", "Signals sent to Cluster workflows (signal-with-start), by result.", "result")
	// Of those events, the ones sent straight to a Cluster's running upgrade workflow instead.
	SignalsToUpgrades = counter("signals_to_upgrades_total", "Events signalled straight to a Cluster's running upgrade workflow instead of the Cluster's workflow.")
	// Requests to the Kubernetes API server, by verb (get, list, watch, create, patch, update,
	// delete), resource ("clusters", "clusters/status", "" for discovery) and response code
	// class (2xx, 4xx, 5xx, error): where the API server's work comes from.
	APIRequests = counter("api_requests_total", "Requests to the Kubernetes API server, by verb, resource and code class.", "verb", "resource", "code")
	// Server-side applies topoflow did not send because the worker's cache showed the object
	// already as the intent wants it (model/ssa), by kind.
	AppliesSkipped = counter("applies_skipped_total", "Server-side applies not sent because the cached object already matched the intent, by kind.", "kind")
	// Lifecycle hook calls, by hook and outcome (passed, blocked, failed, no-handler).
	HookCalls    = counter("hook_calls_total", "Lifecycle hook calls, by hook and outcome.", "hook", "outcome")
	HookDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "topoflow", Name: "hook_call_duration_seconds",
		Help: "Latency of lifecycle hook calls (all handlers of the hook), by hook.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}, []string{"hook"})
	// Upgrade workflows running (the starter counts them in Temporal's visibility store).
	UpgradesInProgress = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "topoflow", Name: "upgrades_in_progress", Help: "ClusterUpgrade workflows running."})
	// The Clusters of each Rollout by state (pending, waiting, changing, done, failed, skipped), as its
	// last status write reported them.
	RolloutClusters = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "topoflow", Name: "rollout_clusters",
		Help: "Clusters of a Rollout by state, as its last status write reported them."}, []string{"rollout", "state"})
	// How long each finished stage of a Rollout ran, from its start (after its approval before)
	// to every Cluster through and its soak over.
	RolloutStageSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "topoflow", Name: "rollout_stage_duration_seconds",
		Help: "How long each finished stage of a Rollout ran, from its start to every Cluster through and its soak over."}, []string{"rollout", "stage"})
)

func init() {
	Registry.MustRegister(QueueDepth, CoalesceHold, HookDuration, UpgradesInProgress, RolloutClusters, RolloutStageSeconds,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// TemporalHandler is a Temporal SDK metrics handler whose series (temporal_*) are served from
// Registry, through the SDK's OpenTelemetry contrib handler and OpenTelemetry's Prometheus
// exporter.
func TemporalHandler() (client.MetricsHandler, error) {
	exp, err := otelprom.New(otelprom.WithRegisterer(Registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		return nil, fmt.Errorf("Temporal SDK metrics: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	return temporalotel.NewMetricsHandler(temporalotel.MetricsHandlerOptions{
		Meter:   provider.Meter("temporal-sdk-go"),
		OnError: func(err error) { slog.Default().Warn("Temporal SDK metric", "error", err) },
	}), nil
}

// CountRequests wraps an API server transport so every request is counted in APIRequests.
func CountRequests(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{next: rt}
}

type roundTripper struct{ next http.RoundTripper }

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	code := "error"
	if err == nil {
		code = strconv.Itoa(resp.StatusCode/100) + "xx"
	}
	APIRequests.WithLabelValues(Verb(req), Resource(req.URL.Path), code).Inc()
	return resp, err
}

// Verb names a request the way the API server's audit log does (get, list, watch, create,
// update, apply, patch, delete).
func Verb(req *http.Request) string {
	switch req.Method {
	case http.MethodGet:
		q := req.URL.Query()
		switch {
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			return "watch"
		case isCollection(req.URL.Path):
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		if req.Header.Get("Content-Type") == "application/apply-patch+yaml" {
			return "apply"
		}
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return req.Method
}

// isCollection says the path names a collection (list) rather than one object (get):
// /api/v1/[namespaces/NS/]RESOURCE or /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE.
func isCollection(path string) bool {
	segs, base := resourcePath(path)
	return len(segs) == base+1
}

// Resource names the resource a request is about, with its subresource ("clusters/status"):
// the path's RESOURCE/NAME/SUBRESOURCE after /api/v1 or /apis/GROUP/VERSION and an optional
// namespaces/NS. Discovery and other paths are "".
func Resource(path string) string {
	segs, base := resourcePath(path)
	switch {
	case len(segs) <= base:
		return ""
	case len(segs) > base+2:
		return segs[base] + "/" + segs[base+2]
	}
	return segs[base]
}

// resourcePath splits an API path and says at which segment the resource comes.
func resourcePath(path string) ([]string, int) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	base := 3 // apis, group, version
	if segs[0] == "api" {
		base = 2
	}
	if len(segs) > base+2 && segs[base] == "namespaces" {
		base += 2
	}
	return segs, base
}

// Serve serves /metrics, /healthz (the process runs) and /readyz (ready says whether it can do
// its work) on addr until ctx ends.
func Serve(ctx context.Context, addr string, ready func() error, profiling bool, log *slog.Logger) error {
	mux := http.NewServeMux()
	if profiling {
		// Go's profiler (go tool pprof http://ADDR/debug/pprof/profile): off by default.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("/metrics", promhttp.HandlerFor(Registry, promhttp.HandlerOpts{Registry: Registry}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil {
			if err := ready(); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ok"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics and health endpoint: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("metrics and health endpoint serving", "address", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
