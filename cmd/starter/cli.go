package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/topoflow/topoflow/cmd/internal/buildinfo"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	"github.com/topoflow/topoflow/cmd/starter/watcher"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/workflows"
)

// newRootCmd is the whole CLI. Errors are returned, not printed: main prints them once and exits 1;
// --help prints the help and exits 0.
func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "starter",
		Short: "topoflow's starter: watches the management cluster and drives one workflow per Cluster; operator CLI",
		Long: "starter watches Clusters, ClusterClasses, topology objects and ExtensionConfigs and starts or signals\n" +
			"one Temporal workflow per managed Cluster (run, the default). It is also the operator CLI.",
		SilenceUsage: true, SilenceErrors: true,
		Args: cobra.NoArgs,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	run := newRunCmd()
	root.Flags().AddFlagSet(run.Flags())
	root.RunE = run.RunE
	root.AddCommand(run, newPlanCmd(stdout, stderr), newStatusCmd(stdout), newRolloutCmd(stdout), newRevisionsCmd(stdout), newVersionCmd(stdout))
	return root
}

// goFlags adds flags registered on a standard library FlagSet (setup.Flags) to a command.
func goFlags(cmd *cobra.Command, register func(*flag.FlagSet)) {
	fs := flag.NewFlagSet(cmd.Name(), flag.ContinueOnError)
	register(fs)
	cmd.Flags().AddGoFlagSet(fs)
}

func newRunCmd() *cobra.Command {
	var f setup.Flags
	var taskQueue, watchNS string
	var resync time.Duration
	var le leaderElection
	var signallers int
	var coalesce, coalesceMax time.Duration
	var rolloutTiming workflows.RolloutTiming
	cmd := &cobra.Command{
		Use:   "run",
		Short: "watch Clusters, ClusterClasses and topology objects; start and signal Cluster workflows (default)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			p, err := f.Start(nil)
			if err != nil {
				return err
			}
			defer p.Close()
			// A new watcher for every term as leader (one whose Run ended cannot run again).
			lead := func(ctx context.Context) error {
				return watcher.New(p.Conn.Kube, p.Conn.Temporal, watcher.Options{TaskQueue: taskQueue, Namespace: watchNS, Resync: resync, ExtensionConfigs: true, Workers: signallers, Coalesce: coalesce, CoalesceMax: coalesceMax, RolloutTiming: rolloutTiming}, p.Log).Run(ctx)
			}
			return le.campaign(p.Ctx, p.Conn.Kube, p.Log, lead)
		},
	}
	goFlags(cmd, f.Register)
	cmd.Flags().StringVar(&taskQueue, "task-queue", workflows.DefaultTaskQueue, "Temporal task queue of the workers")
	cmd.Flags().StringVar(&watchNS, "namespace", "", "watch only this Kubernetes namespace (default: all)")
	cmd.Flags().DurationVar(&resync, "resync", 10*time.Minute, "re-signal every Cluster this often (safety net)")
	cmd.Flags().IntVar(&signallers, "signal-workers", 16, "signals to Cluster workflows in flight at once (each Cluster's events are coalesced while queued)")
	cmd.Flags().DurationVar(&coalesce, "coalesce", watcher.DefaultCoalesce, "hold a Cluster's first event this long so the events of a burst (a provider updating several objects) become one signal (0: signal at once)")
	cmd.Flags().DurationVar(&coalesceMax, "coalesce-max", watcher.DefaultCoalesceMax, "while many Clusters have events at once, hold a Cluster's first event longer: --coalesce plus 20ms per other Cluster with events in the last 5-10s, up to this (at most --coalesce: a fixed hold; --coalesce=0 signals at once)")
	cmd.Flags().DurationVar(&rolloutTiming.Poll, "rollout-poll", 15*time.Second, "how often a Rollout's workflow re-reads the Clusters it is changing when nothing woke it (each Cluster wakes it when its TopologyReconciled turns True for the change)")
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "default"
	}
	cmd.Flags().BoolVar(&le.enabled, "leader-elect", true, "of several starters, only the holder of a Lease watches and signals")
	cmd.Flags().StringVar(&le.namespace, "leader-election-namespace", ns, "namespace of the Lease (default: $POD_NAMESPACE, else default)")
	cmd.Flags().StringVar(&le.name, "leader-election-id", "topoflow-starter", "name of the Lease")
	cmd.Flags().DurationVar(&le.lease, "leader-election-lease-duration", 15*time.Second, "how long followers wait before taking a Lease that is not renewed")
	cmd.Flags().DurationVar(&le.renew, "leader-election-renew-deadline", 10*time.Second, "how long the leader keeps trying to renew before it gives up (and exits)")
	cmd.Flags().DurationVar(&le.retry, "leader-election-retry-period", 2*time.Second, "how often candidates try to take or renew the Lease")
	return cmd
}

func newPlanCmd(stdout, stderr io.Writer) *cobra.Command {
	var f setup.Flags
	var file, output, cluster, class, apiVersion, clusterAPI string
	var seed uint64
	cmd := &cobra.Command{
		Use:   "plan (-f FILE | --cluster NAMESPACE/NAME | --class FILE)",
		Short: "print the objects topoflow would apply for a Cluster, and what would change; or what an edited ClusterClass would do to every Cluster using it (read only)",
		Example: "  starter plan -f cluster-and-class.yaml --seed 3\n" +
			"  starter plan -f cluster-and-class.yaml --api-version v1beta1 --cluster-api v1.10\n" +
			"  starter plan --cluster default/demo -o json\n" +
			"  starter plan --class quick-start-edited.yaml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if class != "" {
				if file != "" || cluster != "" || cmd.Flags().Changed("api-version") || cmd.Flags().Changed("cluster-api") || cmd.Flags().Changed("seed") {
					return errClassFlags
				}
				if !cmd.Flags().Changed("output") {
					output = "text"
				}
				return runClassPlan(class, output, &f, stdout)
			}
			if output != "yaml" && output != "json" {
				return fmt.Errorf("-o: unknown output format %q (yaml or json)", output)
			}
			if (file == "") == (cluster == "") {
				return errors.New("give exactly one of -f, --cluster or --class")
			}
			if apiVersion != "" && apiVersion != plan.V1Beta2 && apiVersion != plan.V1Beta1 {
				return fmt.Errorf("--api-version: want %s or %s, got %q", plan.V1Beta2, plan.V1Beta1, apiVersion)
			}
			if cluster != "" && cmd.Flags().Changed("cluster-api") {
				return errors.New("--cluster-api is for a plan file: with --cluster the API server says what it serves")
			}
			var in *plan.Input
			var err error
			if file != "" {
				in, err = planInputFromFile(file, seed)
				if err == nil {
					in.APIVersion = apiVersion
					err = in.ForClusterAPI(clusterAPI)
				}
			} else {
				in, err = planInputFromCluster(cluster, &f, stderr)
				if err == nil && cmd.Flags().Changed("seed") {
					in.Desired.Names = names.Source{Seed: seed}
				}
				if err == nil {
					in.APIVersion = apiVersion
				}
			}
			if err != nil {
				return err
			}
			res, err := plan.Compute(in)
			if err != nil {
				return explain(err)
			}
			return printPlan(res, output, stdout, stderr)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "multi-document YAML with one ClusterClass, its templates, one Cluster and optionally the Cluster's current objects ('-' for stdin)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed for the random part of new object names (reproducible plans); default: derived from the Cluster")
	cmd.Flags().StringVar(&cluster, "cluster", "", "plan an existing Cluster NAMESPACE/NAME on the API server instead of a file (read only), with the hook ledger of its workflow")
	cmd.Flags().StringVar(&class, "class", "", "an edited ClusterClass (v1beta1 or v1beta2; optionally with templates it references): plan it for every Cluster of the API server that uses the class (same namespace and name), as if the edit were applied (read only); -o text (default) or json")
	cmd.Flags().StringVar(&apiVersion, "api-version", "", "cluster.x-k8s.io version the plan is printed in: v1beta2, or v1beta1 (what a v1beta1 client sees); default: the version the management cluster serves (v1beta2 from Cluster API v1.11)")
	cmd.Flags().StringVar(&clusterAPI, "cluster-api", "v1.14", "with -f: the Cluster API version of the management cluster to plan for (before v1.11 owner references and MachineDeployments are v1beta1)")
	goFlags(cmd, f.Register)
	return cmd
}

func newStatusCmd(stdout io.Writer) *cobra.Command {
	var f setup.Flags
	var output, namespace string
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status [NAMESPACE/NAME]",
		Short: "print where a managed Cluster stands (phase, versions, conditions, workflow step, upgrade, hook calls), or list them all",
		Example: "  starter status                 # every managed Cluster, one line each\n" +
			"  starter status -n team-a       # those of one namespace\n" +
			"  starter status default/demo\n" +
			"  starter status default/demo --watch\n" +
			"  starter status default/demo -o json",
		Args: cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			var ns, name string
			if len(args) == 1 {
				var ok bool
				if ns, name, ok = strings.Cut(args[0], "/"); !ok || ns == "" || name == "" {
					return fmt.Errorf("want NAMESPACE/NAME, got %q", args[0])
				}
				if namespace != "" {
					return fmt.Errorf("--namespace lists Clusters: give it or NAMESPACE/NAME, not both")
				}
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("-o: unknown output format %q (text or json)", output)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			conn, err := f.Connect(connectCtx, f.Logger())
			if err != nil {
				return err
			}
			defer conn.Temporal.Close()
			show := func() error {
				readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				if name == "" {
					return showList(readCtx, stdout, conn, namespace, output)
				}
				r, err := clusterstatus.Collect(readCtx, conn.Kube, conn.Temporal, ns, name)
				if err != nil {
					return err
				}
				if output == "json" {
					return r.WriteJSON(stdout)
				}
				return r.WriteText(stdout)
			}
			if !watch {
				return show()
			}
			return watchStatus(ctx, stdout, interval, output == "text", show)
		},
	}
	goFlags(cmd, f.Register)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "without NAMESPACE/NAME: list the Clusters of this namespace only (default: all)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (with --watch, one JSON document per redraw)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "redraw as the Cluster moves (until interrupted)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --watch redraws")
	return cmd
}

// showList writes the managed Clusters, one line each.
func showList(ctx context.Context, out io.Writer, conn *setup.Conn, namespace, output string) error {
	rows, err := clusterstatus.List(ctx, conn.Kube, conn.Temporal, namespace)
	if err != nil {
		return err
	}
	if output == "json" {
		return clusterstatus.WriteListJSON(out, rows)
	}
	return clusterstatus.WriteList(out, rows)
}

// watchStatus redraws the status every interval until ctx ends; a failed read is shown and
// retried (the API server or Temporal may be away for a while).
func watchStatus(ctx context.Context, out io.Writer, interval time.Duration, clear bool, show func() error) error {
	for {
		if clear {
			fmt.Fprint(out, "\033[H\033[2J") // home and clear, as watch(1) does
		}
		fmt.Fprintf(out, "Every %s: %s\n\n", interval, time.Now().Format(time.RFC3339))
		if err := show(); err != nil {
			fmt.Fprintf(out, "%v\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the build's version (module version, VCS revision and time, Go version)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(stdout, buildinfo.Line())
			return nil
		},
	}
}
