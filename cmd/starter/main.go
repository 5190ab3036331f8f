// Command starter watches the management cluster and starts or signals one Temporal workflow per
// managed Cluster. It is also the operator CLI.
//
//	starter [run]   watch and drive workflows (default)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/starter/watcher"
	"github.com/topoflow/topoflow/workflows"
)

func main() {
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = runWatch(args)
	case "help":
		usage()
	default:
		usage()
		err = fmt.Errorf("unknown command %q", cmd)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage: starter [command] [flags]

commands:
  run    watch Clusters, ClusterClasses and topology objects; start and signal Cluster workflows (default)
  help   show this help
`)
}

func runWatch(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var (
		kubeconfig = fs.String("kubeconfig", "", "kubeconfig of the management cluster (default: $KUBECONFIG or in-cluster)")
		temporal   = fs.String("temporal-address", "", "Temporal frontend host:port (default: $TEMPORAL_ADDRESS or 127.0.0.1:7233)")
		namespace  = fs.String("temporal-namespace", "", "Temporal namespace (default: $TEMPORAL_NAMESPACE or default)")
		taskQueue  = fs.String("task-queue", workflows.DefaultTaskQueue, "Temporal task queue of the workers")
		watchNS    = fs.String("namespace", "", "watch only this Kubernetes namespace (default: all)")
		resync     = fs.Duration("resync", 10*time.Minute, "re-signal every Cluster this often (safety net)")
		debug      = fs.Bool("debug", false, "debug logging")
	)
	_ = fs.Parse(args)
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
	tc, err := temporalx.Dial(ctx, temporalx.Options{Address: *temporal, Namespace: *namespace}, log)
	if err != nil {
		return err
	}
	defer tc.Close()
	return watcher.New(kc, tc, watcher.Options{TaskQueue: *taskQueue, Namespace: *watchNS, Resync: *resync}, log).Run(ctx)
}
