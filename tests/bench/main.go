// Command bench measures topoflow at fleet scale on the local stack with instant simulated
// providers, and prints, from one run on one API server:
//   - the raw server-side-apply rate of that API server (N workers applying the pre-built
//     topology objects of the sample Cluster, no client rate limit): the yardstick;
//   - topoflow's fleet create of -clusters Clusters applied at once: topology objects/s, time to
//     all Provisioned, per-Cluster create latency p50/p99;
//   - one Cluster created alone afterwards: time to all its objects, and its server-side applies;
//   - API requests per no-op resync per Cluster (every workflow signalled once, nothing changed);
//   - worker memory and history events per Cluster workflow;
//   - a fleet upgrade by one minor: time, and history events per upgrade workflow.
//
// Run it with `make bench` (tests/bench.sh brings up its own stack). It is a measurement, not a
// test: it fails only when the fleet does not converge.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/internal/kube"
)

type options struct {
	root, bin   string
	clusters    int
	rawWorkers  int
	rawClusters int
	upgrade     bool
	rollout     bool
	timeout     time.Duration
	workerArgs  string
	starterArgs string
	profile     string
	heap        string
	memLimit    string
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "the topoflow checkout (samples)")
	flag.StringVar(&o.bin, "bin", "bin", "directory with the worker and starter binaries")
	flag.IntVar(&o.clusters, "clusters", 100, "Clusters in the fleet create")
	flag.IntVar(&o.rawWorkers, "raw-workers", 32, "parallel appliers in the raw server-side-apply measurement")
	flag.IntVar(&o.rawClusters, "raw-clusters", 0, "Clusters' worth of objects the raw measurement applies (0: as many as -clusters)")
	flag.BoolVar(&o.upgrade, "upgrade", true, "upgrade the fleet by one minor after the create")
	flag.BoolVar(&o.rollout, "rollout", true, "after the upgrade, move the fleet to a patch release with a Rollout of four stages")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "how long the fleet may take for a phase")
	flag.StringVar(&o.workerArgs, "worker-args", "", "extra worker flags, space separated (e.g. \"--read-cache=false\")")
	flag.StringVar(&o.starterArgs, "starter-args", "", "extra starter flags, space separated (e.g. \"--coalesce=0\")")
	flag.StringVar(&o.profile, "worker-profile", "", "write a CPU profile of the worker during the fleet create to this file (go tool pprof FILE)")
	flag.StringVar(&o.heap, "worker-heap", "", "write a heap profile of the worker after the fleet create to this file (go tool pprof FILE)")
	flag.StringVar(&o.memLimit, "worker-memory-limit", "", "the worker's Go soft memory limit (GOMEMLIMIT, e.g. 270MiB: what the worker sets itself in a 300 MiB container)")
	flag.Parse()
	if o.rawClusters == 0 {
		o.rawClusters = o.clusters
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(ctx context.Context, o options) error {
	cfg, err := kube.RESTConfig("")
	if err != nil {
		return err
	}
	// The bench's own client is not the bottleneck it measures.
	cfg.QPS, cfg.Burst = 5000, 10000
	kc, err := kube.New(cfg)
	if err != nil {
		return err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc, err := temporalx.Dial(ctx, temporalx.Options{}, quiet)
	if err != nil {
		return err
	}
	defer tc.Close()
	r := &report{Date: time.Now().UTC().Format("2006-01-02"), Clusters: o.clusters}

	stamp := time.Now().Unix() % 100000
	sample, err := loadSample(o.root)
	if err != nil {
		return err
	}

	// 1. The yardstick: the API server's own apply rate for the same objects.
	rawNS := fmt.Sprintf("bench-raw-%d", stamp)
	logf("raw server-side apply: %d Clusters' objects, %d workers, namespace %s", o.rawClusters, o.rawWorkers, rawNS)
	if r.Raw, err = rawApply(ctx, kc, sample, rawNS, o.rawClusters, o.rawWorkers); err != nil {
		return fmt.Errorf("raw apply: %w", err)
	}
	logf("raw: %d objects in %s: %.1f objects/s", r.Raw.Objects, r.Raw.Took.Round(time.Millisecond), r.Raw.Rate())

	// 2. topoflow: worker and starter as processes, the fleet applied at once.
	ns := fmt.Sprintf("bench-%d", stamp)
	f, err := newFleet(ctx, kc, tc, o, sample, ns)
	if err != nil {
		return err
	}
	defer f.close()
	logf("fleet create: %d Clusters in namespace %s", o.clusters, ns)
	if r.Create, err = f.create(ctx, o.clusters); err != nil {
		return fmt.Errorf("fleet create: %w", err)
	}
	r.Create.Ratio = r.Create.Rate() / r.Raw.Rate()
	logf("fleet create: %d objects, %.1f objects/s (%.0f%% of raw), all Provisioned in %s",
		r.Create.Objects, r.Create.Rate(), 100*r.Create.Ratio, r.Create.AllProvisioned.Round(time.Millisecond))

	// 3. No-op resyncs: every Cluster's workflow signalled once over an unchanged fleet.
	if r.NoOp, err = f.noOpResync(ctx); err != nil {
		return fmt.Errorf("no-op resync: %w", err)
	}
	logf("no-op resync: %v requests per Cluster", r.NoOp.PerCluster)

	// 4. One Cluster alone.
	if r.Single, err = f.single(ctx); err != nil {
		return fmt.Errorf("single create: %w", err)
	}
	logf("single creates: all objects p50 %s, %d applies", ms(r.Single.AllObjects.pct(0.5)), r.Single.Applies)

	r.CreateHistory, err = f.history(ctx, "ClusterTopology")
	if err != nil {
		return err
	}
	// 5. The fleet upgraded by one minor.
	if o.upgrade {
		logf("fleet upgrade to %s", upgradeTo)
		if r.Upgrade, err = f.upgradeAll(ctx); err != nil {
			return fmt.Errorf("fleet upgrade: %w", err)
		}
		if r.UpgradeHistory, err = f.history(ctx, "ClusterUpgrade"); err != nil {
			return err
		}
		// 6. The fleet moved on by a Rollout in stages (after the upgrade: its version is the start).
		if o.rollout {
			logf("fleet rollout to %s", rolloutTo)
			if r.Rollout, err = f.rolloutAll(ctx); err != nil {
				return fmt.Errorf("fleet rollout: %w", err)
			}
		}
	}
	r.WorkerRSS, r.WorkerPeakRSS = f.procs.rss("worker")
	r.WorkerMemoryLimit = o.memLimit
	r.WorkflowTaskWarnings = countInLog(filepath.Join(f.logDir, "bench-worker.log"), "Workflow task duration exceeded")
	r.print(os.Stdout)
	return nil
}

// binPath is a binary in the bench's bin directory.
func binPath(o options, name string) string { return filepath.Join(o.bin, name) }
