// Command starter watches the management cluster and starts or signals one Temporal workflow per
// managed Cluster. It is also the operator CLI.
//
//	starter [run]   watch and drive workflows (default)
//	starter plan    preview a Cluster's objects and changes (offline from a file, or online, read only)
//	starter status  where a managed Cluster stands (API server and workflow)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/topoflow/topoflow/cmd/internal/setup"
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
	case "plan":
		err = runPlan(args, os.Stdout, os.Stderr)
	case "status":
		err = runStatus(args, os.Stdout)
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
  plan   print the objects topoflow would apply for a Cluster, and what would change (read only)
  status print where a managed Cluster stands: phase, versions, conditions, workflow step
  help   show this help
`)
}

func runWatch(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var f setup.Flags
	f.Register(fs)
	var (
		taskQueue = fs.String("task-queue", workflows.DefaultTaskQueue, "Temporal task queue of the workers")
		watchNS   = fs.String("namespace", "", "watch only this Kubernetes namespace (default: all)")
		resync    = fs.Duration("resync", 10*time.Minute, "re-signal every Cluster this often (safety net)")
	)
	_ = fs.Parse(args)
	log := f.Logger()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := f.Connect(ctx, log)
	if err != nil {
		return err
	}
	defer conn.Temporal.Close()
	return watcher.New(conn.Kube, conn.Temporal, watcher.Options{TaskQueue: *taskQueue, Namespace: *watchNS, Resync: *resync, ExtensionConfigs: true}, log).Run(ctx)
}
