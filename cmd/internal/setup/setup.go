// Package setup connects topoflow's processes (worker, starter) to the API server and Temporal,
// and gives them their logger and their metrics and health endpoint.
package setup

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/sdk/client"

	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
)

// Flags are the flags both processes take.
type Flags struct {
	Kubeconfig        string
	TemporalAddress   string
	TemporalNamespace string
	Debug             bool
	LogFormat         string
	MetricsAddr       string
	// Profiling serves Go's profiler under /debug/pprof/ on the metrics address.
	Profiling bool
	// KubeQPS and KubeBurst bound the process's requests to the API server (client-side).
	KubeQPS   float64
	KubeBurst int
}

// Register adds the flags to a flag set.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or in-cluster)")
	fs.StringVar(&f.TemporalAddress, "temporal-address", "", "Temporal frontend host:port (default: Temporal's environment configuration: $TEMPORAL_ADDRESS, a profile, else 127.0.0.1:7233)")
	fs.StringVar(&f.TemporalNamespace, "temporal-namespace", "", "Temporal namespace (default: Temporal's environment configuration: $TEMPORAL_NAMESPACE, a profile, else default)")
	fs.BoolVar(&f.Debug, "debug", false, "debug logging")
	fs.StringVar(&f.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz on this address (e.g. :8080); off when empty")
	fs.BoolVar(&f.Profiling, "profiling", false, "also serve Go's profiler under /debug/pprof/ on --metrics-addr")
	fs.Float64Var(&f.KubeQPS, "kube-api-qps", 100, "sustained requests per second to the API server (client-side limit)")
	fs.IntVar(&f.KubeBurst, "kube-api-burst", 200, "requests to the API server allowed in a burst above --kube-api-qps")
}

// Logger returns the process's structured logger.
func (f *Flags) Logger() *slog.Logger {
	opts := &slog.HandlerOptions{Level: slog.LevelInfo}
	if f.Debug {
		opts.Level = slog.LevelDebug
	}
	if f.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// Conn is a process's connections.
type Conn struct {
	Kube     *kube.Client
	Temporal client.Client
	Options  temporalx.Options
}

// Connect waits for the API server and dials Temporal. Every API request is counted in
// topoflow_api_requests_total, and with --metrics-addr the Temporal SDK's metrics are recorded.
func (f *Flags) Connect(ctx context.Context, log *slog.Logger) (*Conn, error) {
	if f.LogFormat != "text" && f.LogFormat != "json" {
		return nil, fmt.Errorf("--log-format: %q is neither text nor json", f.LogFormat)
	}
	cfg, err := kube.RESTConfig(f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if f.KubeQPS > 0 {
		cfg.QPS, cfg.Burst = float32(f.KubeQPS), f.KubeBurst
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return metrics.CountRequests(rt) })
	kc, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	kc.Warn = kube.WarnOnce(log)
	if err := kc.WaitForAPI(ctx); err != nil {
		return nil, err
	}
	opts := temporalx.Options{Address: f.TemporalAddress, Namespace: f.TemporalNamespace}
	if f.MetricsAddr != "" {
		if opts.MetricsHandler, err = metrics.TemporalHandler(); err != nil {
			return nil, err
		}
	}
	co, err := opts.ClientOptions(log)
	if err != nil {
		return nil, err
	}
	tc, err := temporalx.DialOptions(ctx, co, log)
	if err != nil {
		return nil, err
	}
	opts.Address, opts.Namespace = co.HostPort, co.Namespace
	return &Conn{Kube: kc, Temporal: tc, Options: opts}, nil
}

// Process is a long-running process's context (ended by SIGINT or SIGTERM), connections and
// logger; Close releases them.
type Process struct {
	Ctx  context.Context
	Conn *Conn
	Log  *slog.Logger
	stop context.CancelFunc
}

// Start connects the process (see Connect) under a context that ends on SIGINT or SIGTERM, and
// serves the metrics and health endpoint when --metrics-addr is set (/readyz answers once
// connected: ready says whether the process can do its work now; nil for always).
func (f *Flags) Start(ready func() error) (*Process, error) {
	log := f.Logger()
	setMemoryLimit(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	connected := make(chan struct{})
	if f.MetricsAddr != "" {
		// Up before connecting, so a liveness probe does not kill a process waiting for the API
		// server or Temporal; /readyz says when it is connected.
		isReady := func() error {
			select {
			case <-connected:
			default:
				return fmt.Errorf("connecting to the API server and Temporal")
			}
			if ready != nil {
				return ready()
			}
			return nil
		}
		go func() {
			if err := metrics.Serve(ctx, f.MetricsAddr, isReady, f.Profiling, log); err != nil {
				log.Error("metrics and health endpoint stopped", "error", err)
				stop()
			}
		}()
	}
	conn, err := f.Connect(ctx, log)
	if err != nil {
		stop()
		return nil, err
	}
	close(connected)
	return &Process{Ctx: ctx, Conn: conn, Log: log, stop: stop}, nil
}

// Close closes the Temporal client and stops listening for signals.
func (p *Process) Close() {
	p.Conn.Temporal.Close()
	p.stop()
}
