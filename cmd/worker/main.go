// Command worker hosts topoflow's workflows and activities: it connects to Temporal and the
// Kubernetes API server and runs the Cluster lifecycle workflows.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"go.temporal.io/sdk/worker"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		kubeconfig = flag.String("kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or in-cluster)")
		temporal   = flag.String("temporal-address", "", "Temporal frontend host:port (default: $TEMPORAL_ADDRESS or 127.0.0.1:7233)")
		namespace  = flag.String("temporal-namespace", "", "Temporal namespace (default: $TEMPORAL_NAMESPACE or default)")
		taskQueue  = flag.String("task-queue", workflows.DefaultTaskQueue, "Temporal task queue")
		debug      = flag.Bool("debug", false, "debug logging")
	)
	flag.Parse()
	level := slog.LevelInfo
	if *debug {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := kube.RESTConfig(*kubeconfig)
	if err != nil {
		return err
	}
	kc, err := kube.New(cfg)
	if err != nil {
		return err
	}
	if err := kc.WaitForAPI(ctx); err != nil {
		return err
	}
	opts := temporalx.Options{Address: *temporal, Namespace: *namespace}.FromEnv()
	tc, err := temporalx.Dial(ctx, opts, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	if err := temporalx.EnsureKeywordSearchAttributes(ctx, tc, opts.Namespace, workflows.SearchAttributeNames); err != nil {
		return err
	}

	w := worker.New(tc, *taskQueue, worker.Options{})
	workflows.Register(w, activities.New(kc, log))
	log.Info("worker running", "temporal", opts.Address, "namespace", opts.Namespace, "taskQueue", *taskQueue, "apiServer", cfg.Host)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting worker: %w", err)
	}
	<-ctx.Done()
	w.Stop()
	return nil
}
