// Command soak takes topoflow through the life of many Clusters (create, an upgrade over two
// minors, delete) on the local stack while injecting faults: worker and starter killed, Temporal
// restarted, the API server stopped, the Runtime Extension slow past its timeout or down. A
// scriptable extension blocks each hook once. It records the hook calls (the extension's log)
// and the versions every part went through (the simulated providers), checks the invariants
// (hook order, promised version steps, no move before its hook, nothing left after delete) and
// prints a table. Beside them, a class-revision rollout phase moves a few Clusters of a class with
// revisions from revision 1 to 2 with one staged Rollout and checks it (revisions.go,
// revcheck.go). Run it with `make soak` (long) or as `make test` does (short); it exits 1 when a
// Cluster did not converge or an invariant was broken.
//
// It expects the stack up and its environment set (KUBECONFIG, TEMPORAL_ADDRESS,
// TOPOFLOW_STACK), and topoflow's binaries in bin/ (see tests/soak.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

type options struct {
	root, bin      string
	inFlight       int
	plan           faultPlan
	seed           uint64
	stageTimeout   time.Duration
	kinds          string
	blockSeconds   int
	convergeReport io.Writer
	rollouts       bool
	revClusters    int
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "the topoflow checkout (scripts, samples)")
	flag.StringVar(&o.bin, "bin", "bin", "directory with the worker and starter binaries")
	flag.IntVar(&o.inFlight, "clusters", 5, "Clusters in flight at once; each starts another after its delete while faults remain")
	flag.IntVar(&o.plan.Count, "faults", 20, "faults to inject")
	flag.Uint64Var(&o.seed, "seed", 1, "random seed (fault kinds, gaps, durations)")
	flag.DurationVar(&o.plan.GapMin, "gap-min", 5*time.Second, "shortest gap between faults")
	flag.DurationVar(&o.plan.GapMax, "gap-max", 40*time.Second, "longest gap between faults")
	flag.DurationVar(&o.plan.OutageMin, "apiserver-outage-min", 29*time.Second, "shortest API server outage")
	flag.DurationVar(&o.plan.OutageMax, "apiserver-outage-max", 57*time.Second, "longest API server outage")
	flag.StringVar(&o.kinds, "kinds", "all", "comma-separated fault kinds: worker,starter,temporal,apiserver,extension-slow,extension-down (or all)")
	flag.DurationVar(&o.stageTimeout, "stage-timeout", 10*time.Minute, "how long a Cluster may take for one stage (create, upgrade, delete)")
	flag.IntVar(&o.blockSeconds, "block-seconds", 3, "retryAfterSeconds of each hook's first (blocked) answer")
	flag.BoolVar(&o.rollouts, "rollouts", true, "upgrade every second Cluster by a Rollout of its own (the rollout invariants apply to those)")
	flag.IntVar(&o.revClusters, "revision-clusters", 3, "Clusters of the class-revision rollout phase (a class with revisions, its worker template edited, one staged Rollout to the latest revision); 0 skips it")
	flag.Parse()
	o.convergeReport = os.Stdout
	kinds, err := parseKinds(o.kinds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	o.plan.Kinds = kinds
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func parseKinds(s string) ([]string, error) {
	names := map[string]string{"worker": fWorkerKill, "starter": fStarterKill, "temporal": fTemporal, "apiserver": fAPIServer,
		"extension-slow": fExtensionSlow, "extension-down": fExtensionDown}
	if s == "all" {
		return faultKinds, nil
	}
	var out []string
	for _, k := range strings.Split(s, ",") {
		kind, ok := names[strings.TrimSpace(k)]
		if !ok {
			return nil, fmt.Errorf("-kinds: unknown fault kind %q", k)
		}
		out = append(out, kind)
	}
	return out, nil
}

func run(ctx context.Context, o options) (bool, error) {
	logf := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[soak %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	cfg, err := kube.RESTConfig("")
	if err != nil {
		return false, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	kc, err := kube.New(cfg)
	if err != nil {
		return false, err
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	tc, err := temporalx.Dial(ctx, temporalx.Options{}, quiet)
	if err != nil {
		return false, err
	}
	defer tc.Close()

	rng := rand.New(rand.NewPCG(o.seed, o.seed^0x5eed))
	ns := fmt.Sprintf("soak-%d-%d", o.seed, time.Now().Unix()%100000)
	taskQueue := "topoflow-" + ns
	logf("namespace %s, task queue %s, seed %d, %d faults, %d Clusters in flight", ns, taskQueue, o.seed, o.plan.Count, o.inFlight)

	ext, err := extension.Start(hooksv1.BeforeClusterCreate, hooksv1.AfterControlPlaneInitialized, hooksv1.BeforeClusterUpgrade,
		hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade,
		hooksv1.AfterClusterUpgrade, hooksv1.BeforeClusterDelete)
	if err != nil {
		return false, err
	}
	defer ext.Close()
	ext.BlockFirstCall(int32(o.blockSeconds), "soak: blocking once", hooksv1.BeforeClusterCreate, hooksv1.BeforeClusterUpgrade,
		hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade,
		hooksv1.BeforeClusterDelete)

	if err := setup(ctx, kc, ns, ext, o.root); err != nil {
		return false, err
	}
	defer cleanup(kc, ns, logf)

	sim := provider.New(kc.Dynamic, provider.Options{Namespace: ns, ProvisionDelay: time.Second, RolloutDuration: 2 * time.Second, DeleteDelay: time.Second}, quiet)
	simCtx, stopSim := context.WithCancel(context.Background())
	defer stopSim()
	go func() { _ = sim.Run(simCtx) }()

	stackDir := os.Getenv("TOPOFLOW_STACK_DIR")
	if stackDir == "" {
		stackDir = filepath.Join(o.root, ".stack", os.Getenv("TOPOFLOW_STACK"))
	}
	procs := &processes{cmds: map[string]*exec.Cmd{}, logs: stackDir, args: map[string][]string{
		"worker":  {filepath.Join(o.bin, "worker"), "--task-queue", taskQueue},
		"starter": {filepath.Join(o.bin, "starter"), "run", "--task-queue", taskQueue, "--namespace", ns, "--rollout-poll", "2s"},
	}}
	for _, name := range []string{"worker", "starter"} {
		if err := procs.start(name); err != nil {
			return false, err
		}
	}
	defer procs.stopAll()
	if err := applyClass(ctx, kc, ns, o.root); err != nil {
		return false, err
	}

	d := &driver{kc: kc, tc: tc, ext: ext, sim: sim, ns: ns, root: o.root, timeout: o.stageTimeout, log: logf, rollouts: o.rollouts}
	in := &injector{plan: o.plan, rng: rng, procs: procs, ext: ext, root: o.root, log: logf}
	started := time.Now()
	faultsDone := make(chan struct{})
	go func() { in.run(ctx); close(faultsDone) }()

	var mu sync.Mutex
	var records []clusterRecord
	var wg sync.WaitGroup
	var rev *revisionRecord
	if o.revClusters > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := d.revisionPhase(ctx, o.revClusters)
			mu.Lock()
			rev = &r
			mu.Unlock()
		}()
	}
	next := 0
	for slot := 0; slot < o.inFlight; slot++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for first := true; ; first = false {
				select {
				case <-faultsDone:
					if !first {
						return
					}
				default:
				}
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				next++
				name := fmt.Sprintf("c%d", next)
				mu.Unlock()
				r := d.life(ctx, name)
				mu.Lock()
				records = append(records, r)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	<-faultsDone
	ok := report(o.convergeReport, o, records, in.faults(), time.Since(started))
	if rev != nil {
		ok = reportRevisions(o.convergeReport, *rev) && ok
	}
	return ok, nil
}

// setup makes the namespace (labelled for the extension's namespaceSelector) and registers the
// extension.
func setup(ctx context.Context, kc *kube.Client, ns string, ext *extension.Server, root string) error {
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns, "labels": map[string]any{"topoflow.dev/soak": ns}}}}
	if _, err := kc.Apply(ctx, nsObj, fieldManager); err != nil {
		return err
	}
	_, err := kc.Apply(ctx, ext.Config(ns, "topoflow.dev/soak", ns, nil), fieldManager)
	return err
}

// applyClass applies the sample ClusterClass and its templates, the class listing the versions
// of a chained upgrade.
func applyClass(ctx context.Context, kc *kube.Client, ns, root string) error {
	docs, err := sampleDocs(root, "clusterclass.yaml")
	if err != nil {
		return err
	}
	for _, doc := range docs {
		if doc.GetKind() == "" {
			continue
		}
		doc.SetNamespace(ns)
		if doc.GetKind() == "ClusterClass" {
			if err := unstructured.SetNestedStringSlice(doc.Object, []string{fromVersion, viaVersion, targetVersion}, "spec", "kubernetesVersions"); err != nil {
				return err
			}
		}
		if _, err := kc.Apply(ctx, doc, fieldManager); err != nil {
			return err
		}
	}
	return nil
}

// sampleDocs are the objects of a file in deploy/samples.
func sampleDocs(root, file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(root, "deploy/samples", file))
	if err != nil {
		return nil, err
	}
	return decode.Documents(strings.NewReader(string(data)))
}

func cleanup(kc *kube.Client, ns string, logf func(string, ...any)) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ecs := schema.GroupVersionResource{Group: "runtime.cluster.x-k8s.io", Version: "v1alpha1", Resource: "extensionconfigs"}
	if err := kc.Dynamic.Resource(ecs).Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		logf("cleanup: %v", err)
	}
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	if err := kc.Dynamic.Resource(namespaces).Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		logf("cleanup: %v", err)
	}
}

// report prints the table and says whether the soak passed.
func report(w io.Writer, o options, records []clusterRecord, faults []fault, took time.Duration) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "soak: seed %d, %d Clusters (%d in flight), %d faults, %s\n\n", o.seed, len(records), o.inFlight, len(faults), took.Round(time.Second))

	fmt.Fprintf(tw, "Fault\tcount\ttotal time away\n")
	byKind := map[string]int{}
	away := map[string]time.Duration{}
	var lastFault time.Time
	for _, f := range faults {
		byKind[f.Kind]++
		away[f.Kind] += f.End.Sub(f.Start)
		if f.End.After(lastFault) {
			lastFault = f.End
		}
	}
	for _, k := range faultKinds {
		fmt.Fprintf(tw, "  %s\t%d\t%s\n", k, byKind[k], away[k].Round(time.Second))
	}

	reached := map[string]int{}
	violations := map[string][]string{}
	dupes, viaRollouts := 0, 0
	var lastDone time.Time
	for _, r := range records {
		for _, stage := range []string{"created", "upgraded", "deleted"} {
			if stageIndex(r.Reached) >= stageIndex(stage) {
				reached[stage]++
			}
		}
		v := check(r)
		dupes += v.DuplicatePasses
		if r.ViaRollout {
			viaRollouts++
		}
		for k, ds := range v.Violations {
			violations[k] = append(violations[k], ds...)
		}
		if r.Done.After(lastDone) {
			lastDone = r.Done
		}
	}
	fmt.Fprintf(tw, "\nClusters converged\t%d/%d\t(created %d, upgraded %d, deleted %d)\n", reached["deleted"], len(records), reached["created"], reached["upgraded"], reached["deleted"])
	fmt.Fprintf(tw, "  upgraded by a Rollout of their own\t%d\n", viaRollouts)
	fmt.Fprintf(tw, "Invariant violations\t%d\n", countAll(violations))
	for _, k := range violationKinds {
		fmt.Fprintf(tw, "  %s\t%d\n", k, len(violations[k]))
	}
	fmt.Fprintf(tw, "Duplicate hook passes\t%d\t(calls after the same hook had passed for the Cluster and version)\n", dupes)
	if !lastFault.IsZero() && lastDone.After(lastFault) {
		fmt.Fprintf(tw, "Converged after the last fault\t%s\n", lastDone.Sub(lastFault).Round(time.Second))
	}
	tw.Flush()
	for _, k := range violationKinds {
		for _, d := range violations[k] {
			fmt.Fprintf(w, "VIOLATION %s: %s\n", k, d)
		}
	}
	for _, r := range records {
		if r.Reached != "deleted" {
			fmt.Fprintf(w, "NOT CONVERGED %s: reached %q\n", r.Name, r.Reached)
		}
	}
	return reached["deleted"] == len(records) && countAll(violations) == 0
}

// reportRevisions prints the class-revision rollout phase's lines and says whether it passed.
func reportRevisions(w io.Writer, r revisionRecord) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	moved := 0
	for _, c := range r.Clusters {
		if obs := r.Observations[c]; len(obs) > 0 && obs[len(obs)-1].Applied == revision.Name(r.Class, 2) {
			moved++
		}
	}
	violations := checkRevisions(r)
	fmt.Fprintf(tw, "\nClass-revision rollout\t%d/%d\t(Clusters moved %s -> %s by one Rollout in %d stages; reached %q)\n",
		moved, len(r.Clusters), revision.Name(r.Class, 1), revision.Name(r.Class, 2), len(r.Stages), r.Reached)
	fmt.Fprintf(tw, "Class-revision violations\t%d\n", countAll(violations))
	for _, k := range revViolationKinds {
		fmt.Fprintf(tw, "  %s\t%d\n", k, len(violations[k]))
	}
	tw.Flush()
	for _, k := range revViolationKinds {
		for _, d := range violations[k] {
			fmt.Fprintf(w, "VIOLATION %s: %s\n", k, d)
		}
	}
	if r.Reached != "deleted" {
		fmt.Fprintf(w, "NOT CONVERGED class-revision phase: reached %q\n", r.Reached)
	}
	return r.Reached == "deleted" && countAll(violations) == 0
}

func stageIndex(s string) int { return slices.Index([]string{"", "created", "upgraded", "deleted"}, s) }

func countAll(m map[string][]string) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}
