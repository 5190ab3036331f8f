// Package setup connects topoflow's processes (worker, starter) to the API server and Temporal.
package setup

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/sdk/client"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/temporalx"
)

// Flags are the connection flags both processes take.
type Flags struct {
	Kubeconfig        string
	TemporalAddress   string
	TemporalNamespace string
	Debug             bool
}

// Register adds the connection flags to a flag set.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or in-cluster)")
	fs.StringVar(&f.TemporalAddress, "temporal-address", "", "Temporal frontend host:port (default: $TEMPORAL_ADDRESS or 127.0.0.1:7233)")
	fs.StringVar(&f.TemporalNamespace, "temporal-namespace", "", "Temporal namespace (default: $TEMPORAL_NAMESPACE or default)")
	fs.BoolVar(&f.Debug, "debug", false, "debug logging")
}

// Logger returns the process's structured logger.
func (f *Flags) Logger() *slog.Logger {
	level := slog.LevelInfo
	if f.Debug {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Conn is a process's connections.
type Conn struct {
	Kube     *kube.Client
	Temporal client.Client
	Options  temporalx.Options
}

// Connect waits for the API server and dials Temporal.
func (f *Flags) Connect(ctx context.Context, log *slog.Logger) (*Conn, error) {
	cfg, err := kube.RESTConfig(f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	kc, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := kc.WaitForAPI(ctx); err != nil {
		return nil, err
	}
	opts := temporalx.Options{Address: f.TemporalAddress, Namespace: f.TemporalNamespace}.FromEnv()
	tc, err := temporalx.Dial(ctx, opts, log)
	if err != nil {
		return nil, err
	}
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

// Start connects the process (see Connect) under a context that ends on SIGINT or SIGTERM.
func (f *Flags) Start() (*Process, error) {
	log := f.Logger()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	conn, err := f.Connect(ctx, log)
	if err != nil {
		stop()
		return nil, err
	}
	return &Process{Ctx: ctx, Conn: conn, Log: log, stop: stop}, nil
}

// Close closes the Temporal client and stops listening for signals.
func (p *Process) Close() {
	p.Conn.Temporal.Close()
	p.stop()
}
