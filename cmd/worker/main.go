// Command worker hosts topoflow's workflows and activities: it connects to Temporal and the
// Kubernetes API server and runs the Cluster lifecycle workflows.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/worker"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/workflows"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

func run() error {
	var f setup.Flags
	f.Register(flag.CommandLine)
	taskQueue := flag.String("task-queue", workflows.DefaultTaskQueue, "Temporal task queue")
	var wh webhookFlags
	wh.register(flag.CommandLine)
	var conc workflows.Concurrency
	flag.IntVar(&conc.Activities, "max-concurrent-activities", 0, "activities this worker runs at once (0: the Temporal SDK's default, 1000); each holds API server requests within --kube-api-qps")
	flag.IntVar(&conc.Steps, "max-concurrent-steps", workflows.DefaultConcurrentSteps, "pass steps (reads, decisions and applies, run as local activities) this worker runs at once; each holds the objects it read until its requests are sent")
	flag.IntVar(&conc.WorkflowTasks, "max-concurrent-workflow-tasks", 0, "workflow tasks this worker runs at once (0: the SDK's default, 1000)")
	clusterController := flag.String("cluster-controller", "auto", "the Cluster controller role (Cluster phase, readiness, endpoint, owner references): auto (on unless Cluster API core is installed: its Clusters CRD has the label cluster.x-k8s.io/provider=cluster-api), true or false")
	readCache := flag.Bool("read-cache", true, "read from informers and send no apply that would change nothing (false: every read and apply goes to the API server)")
	flag.Parse()
	p, err := f.Start(nil)
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, conn, log := p.Ctx, p.Conn, p.Log
	if err := temporalx.EnsureKeywordSearchAttributes(ctx, conn.Temporal, conn.Options.Namespace, workflows.SearchAttributeNames); err != nil {
		return err
	}

	w := worker.New(conn.Temporal, *taskQueue, workflows.WorkerOptionsWith(conc))
	acts := activities.New(conn.Kube, slog.New(temporalx.ActivityAttrs(log.Handler())))
	acts.Temporal = conn.Temporal
	if acts.ClusterController, err = clusterControllerRole(ctx, *clusterController, conn.Kube); err != nil {
		return err
	}
	log.Info("roles", "topology", true, "clusterController", acts.ClusterController)
	if *readCache {
		conn.Kube.UseCache(ctx, log, activities.FieldManagers()...)
	}
	events, stopEvents, err := activities.NewEventRecorder(conn.Kube.Config)
	if err != nil {
		return err
	}
	defer stopEvents()
	acts.Events = events
	workflows.Register(w, acts)
	log.Info("worker running", "temporal", conn.Options.Address, "namespace", conn.Options.Namespace, "taskQueue", *taskQueue, "apiServer", conn.Kube.Config.Host)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting worker: %w", err)
	}
	defer w.Stop()
	go migrateStorage(ctx, conn.Kube, log, 15*time.Second)
	if wh.addr != "" {
		// The webhooks run as long as the worker; if they cannot serve, the worker stops too, so
		// its supervisor restarts it rather than leaving admission (failurePolicy Fail) broken.
		return wh.serve(ctx, conn.Kube, acts, log)
	}
	<-ctx.Done()
	return nil
}

// clusterControllerRole decides whether this worker plays Cluster API's Cluster controller role.
func clusterControllerRole(ctx context.Context, flagValue string, k *kube.Client) (bool, error) {
	switch flagValue {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "auto":
		core, err := activities.ClusterAPICoreInstalled(ctx, k)
		if err != nil {
			return false, fmt.Errorf("--cluster-controller=auto: %w", err)
		}
		return !core, nil
	}
	return false, fmt.Errorf("--cluster-controller: %q is not auto, true or false", flagValue)
}
