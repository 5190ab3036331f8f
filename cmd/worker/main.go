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

	// Maintenance windows name IANA time zones: the binary carries the database, as a minimal
	// image has none.
	_ "time/tzdata"

	"go.temporal.io/sdk/worker"

	"github.com/spf13/cobra"
	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/internal/buildinfo"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/workflows"
)

func main() {
	if err := newCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		os.Exit(1)
	}
}

// options are the worker's flags.
type options struct {
	f                 setup.Flags
	wh                webhookFlags
	conc              workflows.Concurrency
	taskQueue         string
	clusterController string
	readCache         bool
	gcPercent         int
	// extCert and extKey are the client certificate presented to Runtime Extensions (mTLS).
	extCert, extKey string
}

// defaultConcurrentActivities bounds the activities a worker runs at once: mostly passes that
// ran past their budget inside the workflow task and run again as activities of their own, each
// holding its Cluster's objects (class, templates, current and desired state: about 150 KB) while
// its requests wait for the client's rate limit (--kube-api-qps). With the SDK's default of 1,000,
// a fleet create of 1,000 Clusters on 2 cores had about 700 of them in flight at once, 105 MB of
// the worker's live heap, queued behind ~14 s of requests for no gain in speed; the activities
// beyond the bound wait in Temporal's task queue instead, costing the worker nothing. Hook calls
// run as activities too: 128 is far above the concurrency of Cluster API's own topology
// controller (10 Clusters at once).
const defaultConcurrentActivities = 128

// defaultGCPercent: the worker's live heap is mostly its informers' copies of the fleet, which
// live as long as the process; at Go's default of 100 the heap peaks at twice that. Measured on
// 1,000 Clusters (docs/benchmarks.md, 2026-11-27): peak RSS 287 MiB at 50, 359 MiB at 100.
const defaultGCPercent = 50

func newCmd() *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "topoflow's worker: hosts the Cluster workflows and their activities, and serves the admission and conversion webhooks",
		Args:  cobra.NoArgs, SilenceUsage: true, SilenceErrors: true,
		RunE: func(*cobra.Command, []string) error { return run(&o) },
	}
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	o.f.Register(fs)
	o.wh.register(fs)
	cmd.Flags().AddGoFlagSet(fs)
	fl := cmd.Flags()
	fl.StringVar(&o.taskQueue, "task-queue", workflows.DefaultTaskQueue, "Temporal task queue")
	fl.IntVar(&o.conc.Activities, "max-concurrent-activities", defaultConcurrentActivities, "activities this worker runs at once (0: the Temporal SDK's default, 1000); each holds a Cluster's objects while its API server requests wait within --kube-api-qps")
	fl.IntVar(&o.conc.Steps, "max-concurrent-steps", workflows.DefaultConcurrentSteps, "pass steps (reads, decisions and applies, run as local activities) this worker runs at once; each holds the objects it read until its requests are sent")
	fl.IntVar(&o.conc.WorkflowTasks, "max-concurrent-workflow-tasks", 0, "workflow tasks this worker runs at once (0: the SDK's default, 1000)")
	fl.IntVar(&o.conc.Pollers, "task-pollers", workflows.DefaultPollers, "polls for workflow tasks, and for activity tasks, this worker keeps open (0: scaled by the SDK with the task queue's backlog, 1 to 100)")
	fl.StringVar(&o.clusterController, "cluster-controller", "auto", "the Cluster controller role (Cluster phase, readiness, endpoint, owner references): auto (on unless Cluster API core is installed: its Clusters CRD has the label cluster.x-k8s.io/provider=cluster-api), true or false")
	fl.StringVar(&o.extCert, "runtime-extension-client-cert-file", "", "PEM client certificate presented to Runtime Extensions that require one (mutual TLS, as Cluster API's flag); re-read when the file changes; with --runtime-extension-client-key-file")
	fl.StringVar(&o.extKey, "runtime-extension-client-key-file", "", "PEM key of --runtime-extension-client-cert-file")
	fl.IntVar(&o.gcPercent, "gc-percent", defaultGCPercent, "the Go garbage collector's target, as GOGC (which wins when set): the heap may grow this many percent past its live data between collections (0: Go's own, 100)")
	fl.BoolVar(&o.readCache, "read-cache", true, "read from informers and send no apply that would change nothing (false: every read and apply goes to the API server)")
	return cmd
}

func run(o *options) error {
	switch {
	case (o.extCert == "") != (o.extKey == ""):
		return fmt.Errorf("--runtime-extension-client-cert-file and --runtime-extension-client-key-file go together")
	case o.extCert != "":
		if err := runtimeext.UseClientCertificate(o.extCert, o.extKey); err != nil {
			return err
		}
	}
	p, err := o.f.Start(nil)
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, conn, log := p.Ctx, p.Conn, p.Log
	setup.SetGCPercent(log, o.gcPercent)
	if err := temporalx.EnsureKeywordSearchAttributes(ctx, conn.Temporal, conn.Options.Namespace, workflows.SearchAttributeNames); err != nil {
		return err
	}

	w := worker.New(conn.Temporal, o.taskQueue, workflows.WorkerOptionsWith(o.conc))
	acts := activities.New(conn.Kube, slog.New(temporalx.ActivityAttrs(log.Handler())))
	acts.Temporal = conn.Temporal
	if acts.ClusterController, err = clusterControllerRole(ctx, o.clusterController, conn.Kube); err != nil {
		return err
	}
	log.Info("roles", "topology", true, "clusterController", acts.ClusterController)
	if o.readCache {
		conn.Kube.UseCache(ctx, log, activities.FieldManagers()...)
	}
	events, stopEvents, err := activities.NewEventRecorder(conn.Kube.Config)
	if err != nil {
		return err
	}
	defer stopEvents()
	acts.Events = events
	workflows.Register(w, acts)
	log.Info("worker running", "build", buildinfo.Line(), "temporal", conn.Options.Address, "namespace", conn.Options.Namespace, "taskQueue", o.taskQueue, "apiServer", conn.Kube.Config.Host)
	if err := w.Start(); err != nil {
		return fmt.Errorf("starting worker: %w", err)
	}
	defer w.Stop()
	go migrateStorage(ctx, conn.Kube, log, 15*time.Second)
	if o.wh.addr != "" {
		// The webhooks run as long as the worker; if they cannot serve, the worker stops too, so
		// its supervisor restarts it rather than leaving admission (failurePolicy Fail) broken.
		return o.wh.serve(ctx, conn.Kube, acts, log)
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
