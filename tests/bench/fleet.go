package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// fieldManager is the bench's own, as a user's kubectl would be.
const fieldManager = "topoflow-bench"

// upgradeTo is one minor above the sample's version.
const upgradeTo = "v1.32.0"

// fleet is topoflow running on one namespace of Clusters, and what the bench saw of them.
type fleet struct {
	kc      *kube.Client
	tc      client.Client
	o       options
	sample  *sample
	ns      string
	procs   *processes
	metrics string // the worker's metrics address
	logDir  string // the stack's directory (pid files, logs)
	stop    context.CancelFunc

	mu sync.Mutex
	// firstSeen is when each topology object (kind/name) first appeared; applied when each
	// Cluster was applied; provisioned when each reached phase Provisioned.
	firstSeen   map[string]time.Time
	objCluster  map[string]string
	applied     map[string]time.Time
	provisioned map[string]time.Time
	// rolled: Cluster name -> when the bench saw the rollout's version written to it and when its
	// topology was first reported reconciled for it (rollout.NewlyReconciled).
	rolled map[string]*rolledTimes
}

type rolledTimes struct{ written, reconciled time.Time }

func newFleet(ctx context.Context, kc *kube.Client, tc client.Client, o options, s *sample, ns string) (*fleet, error) {
	if err := applyNamespace(ctx, kc, ns); err != nil {
		return nil, err
	}
	if err := s.applyClass(ctx, kc, ns); err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(context.Background())
	f := &fleet{kc: kc, tc: tc, o: o, sample: s, ns: ns, stop: cancel,
		firstSeen: map[string]time.Time{}, objCluster: map[string]string{}, applied: map[string]time.Time{}, provisioned: map[string]time.Time{}, rolled: map[string]*rolledTimes{}}

	// Instant providers: the simulator answers as soon as it sees an object.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sim := provider.New(kc.Dynamic, provider.Options{Namespace: ns, ProvisionDelay: time.Millisecond, RolloutDuration: time.Millisecond, DeleteDelay: time.Millisecond}, quiet)
	go func() { _ = sim.Run(fctx) }()

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(kc.Dynamic, 0, ns, nil)
	for _, gvr := range provider.TopologyKinds {
		_, _ = factory.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: f.sawObject})
	}
	// Clusters are watched as the starter watches them: in the version the API server serves, read
	// on the hub (v1beta2) whatever that is.
	clusters := factory.ForResource(kc.Wire(kube.Clusters)).Informer()
	if kc.Wire(kube.Clusters) != kube.Clusters {
		_ = clusters.SetTransform(kc.ModelledTransform(kube.Clusters))
	}
	_, _ = clusters.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: f.sawCluster, UpdateFunc: func(old, obj any) { f.sawCluster(obj); f.sawRolled(old, obj) }})
	factory.Start(fctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	queue := "topoflow-" + ns
	f.metrics = freeAddr()
	starterAddr := freeAddr()
	logDir := os.Getenv("TOPOFLOW_STACK_DIR")
	if logDir == "" {
		logDir = filepath.Join(o.root, ".stack", os.Getenv("TOPOFLOW_STACK"))
	}
	workerArgs := []string{binPath(o, "worker"), "--task-queue", queue, "--metrics-addr", f.metrics, "--profiling"}
	if o.workerArgs != "" {
		workerArgs = append(workerArgs, strings.Fields(o.workerArgs)...)
	}
	f.logDir = logDir
	env := map[string][]string{}
	if o.memLimit != "" {
		env["worker"] = []string{"GOMEMLIMIT=" + o.memLimit}
	}
	f.procs = &processes{cmds: map[string]*exec.Cmd{}, logs: logDir, env: env, args: map[string][]string{
		"worker":  workerArgs,
		"starter": append([]string{binPath(o, "starter"), "run", "--task-queue", queue, "--namespace", ns, "--metrics-addr", starterAddr}, strings.Fields(o.starterArgs)...),
	}}
	for _, name := range []string{"worker", "starter"} {
		if err := f.procs.start(name); err != nil {
			f.close()
			return nil, err
		}
	}
	// Measure topoflow working, not starting: both processes connected first.
	for _, addr := range []string{f.metrics, starterAddr} {
		if err := waitReady(ctx, addr); err != nil {
			f.close()
			return nil, err
		}
	}
	return f, nil
}

func (f *fleet) close() {
	f.procs.stopAll()
	f.stop()
}

func (f *fleet) sawObject(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := u.GetKind() + "/" + u.GetName()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, seen := f.firstSeen[key]; !seen {
		f.firstSeen[key] = time.Now()
		f.objCluster[key] = u.GetLabels()[labels.ClusterName]
	}
}

func (f *fleet) sawCluster(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	if phase != "Provisioned" {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, done := f.provisioned[u.GetName()]; !done {
		f.provisioned[u.GetName()] = time.Now()
	}
}

// sawRolled records when a Cluster got the rollout's version and when its topology was first
// reported reconciled for it: its upgrade's time, to the rollout's own observation.
func (f *fleet) sawRolled(oldObj, obj any) {
	o, ok1 := oldObj.(*unstructured.Unstructured)
	u, ok2 := obj.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "topology", "version"); v != rolloutTo {
		return
	}
	var old, cur clusterv1.Cluster
	if _, err := decode.Lenient(o, &old); err != nil {
		return
	}
	if _, err := decode.Lenient(u, &cur); err != nil {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.rolled[cur.Name]
	if r == nil {
		r = &rolledTimes{written: now}
		f.rolled[cur.Name] = r
	}
	if r.reconciled.IsZero() && rollout.NewlyReconciled(&old, &cur) {
		r.reconciled = now
	}
}

// createResult is what one create (of the fleet, or of one Cluster) measured.
type createResult struct {
	Objects        int
	Took           time.Duration // apply of the first Cluster to the last topology object seen
	PeakPerSecond  int
	AllProvisioned time.Duration
	// Provisioned and AllObjects are per-Cluster latencies from its apply.
	Provisioned, AllObjects latencies
	Ratio                   float64 // of the raw apply rate
	// CPU is where the CPU time of the create went (see cpuShare).
	CPU string
	// Requests are the worker's API requests during the create, by verb, per Cluster; Writes its
	// writes by verb and resource, per Cluster.
	Requests, Writes map[string]float64
}

func (c createResult) Rate() float64 { return float64(c.Objects) / c.Took.Seconds() }

// create applies n Clusters at once and waits until each is Provisioned and has all its objects.
func (f *fleet) create(ctx context.Context, n int) (createResult, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
	}
	start := time.Now()
	cpu := f.cpuSeconds()
	reqs, err := scrapeRequests(f.metrics)
	if err != nil {
		reqs = map[string]float64{} // the worker is still starting: it has sent nothing
	}
	writes, err := scrapeWrites(f.metrics)
	if err != nil {
		writes = map[string]float64{}
	}
	profiled := f.profileWorker(n)
	if err := f.applyClusters(ctx, names); err != nil {
		return createResult{}, err
	}
	res, err := f.waitCreated(ctx, names, start)
	<-profiled
	f.heapProfile()
	res.CPU = cpuShare(cpu, f.cpuSeconds(), time.Since(start))
	if after, serr := scrapeRequests(f.metrics); serr == nil {
		delete(after, "watch")
		res.Requests = perCluster(reqs, after, len(names))
	}
	if after, serr := scrapeWrites(f.metrics); serr == nil {
		res.Writes = perCluster(writes, after, len(names))
	}
	return res, err
}

// applyClusters applies the sample Cluster under each name, 32 at a time.
func (f *fleet) applyClusters(ctx context.Context, names []string) error {
	return parallel(ctx, 32, len(names), func(i int) error {
		c := f.sample.cluster(names[i], f.ns)
		f.mu.Lock()
		f.applied[names[i]] = time.Now()
		f.mu.Unlock()
		_, err := f.kc.Apply(ctx, c, fieldManager)
		return err
	})
}

func (f *fleet) waitCreated(ctx context.Context, names []string, start time.Time) (createResult, error) {
	want := f.sample.perCluster
	deadline := time.Now().Add(f.o.timeout)
	for {
		f.mu.Lock()
		done := 0
		perCluster := map[string]int{}
		for _, c := range f.objCluster {
			perCluster[c]++
		}
		for _, n := range names {
			if _, ok := f.provisioned[n]; ok && perCluster[n] >= want {
				done++
			}
		}
		f.mu.Unlock()
		if done == len(names) {
			break
		}
		if time.Now().After(deadline) {
			return createResult{}, fmt.Errorf("%d of %d Clusters created after %s", done, len(names), f.o.timeout)
		}
		select {
		case <-ctx.Done():
			return createResult{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	member := map[string]bool{}
	for _, n := range names {
		member[n] = true
	}
	res := createResult{}
	perSecond := map[int64]int{}
	lastObj := map[string]time.Time{}
	var last time.Time
	for key, at := range f.firstSeen {
		c := f.objCluster[key]
		if !member[c] {
			continue
		}
		res.Objects++
		perSecond[at.Unix()]++
		if at.After(lastObj[c]) {
			lastObj[c] = at
		}
		if at.After(last) {
			last = at
		}
	}
	for _, v := range perSecond {
		res.PeakPerSecond = max(res.PeakPerSecond, v)
	}
	res.Took = last.Sub(start)
	var lastProv time.Time
	for _, n := range names {
		p := f.provisioned[n]
		if p.After(lastProv) {
			lastProv = p
		}
		res.Provisioned = append(res.Provisioned, p.Sub(f.applied[n]))
		res.AllObjects = append(res.AllObjects, lastObj[n].Sub(f.applied[n]))
	}
	res.AllProvisioned = lastProv.Sub(start)
	return res, nil
}

// singleResult is Clusters created alone, one after the other, into the settled fleet.
type singleResult struct {
	Runs                    int
	AllObjects, Provisioned latencies
	Applies                 int // server-side applies the worker sent for the first
	// History is the first one's workflow history by event type (markers by name), and Events
	// its length: what a create costs Temporal.
	History map[string]int
	Events  int
}

// singles is how many Clusters are created alone.
const singles = 5

func (f *fleet) single(ctx context.Context) (singleResult, error) {
	res := singleResult{Runs: singles}
	for i := range singles {
		before, err := scrapeRequests(f.metrics)
		if err != nil {
			return res, err
		}
		name := fmt.Sprintf("single%d", i)
		start := time.Now()
		if err := f.applyClusters(ctx, []string{name}); err != nil {
			return res, err
		}
		cr, err := f.waitCreated(ctx, []string{name}, start)
		if err != nil {
			return res, err
		}
		// Let the create's last passes finish before counting, and before the next.
		if err := f.waitQuiet(ctx); err != nil {
			return res, err
		}
		after, err := scrapeRequests(f.metrics)
		if err != nil {
			return res, err
		}
		res.AllObjects = append(res.AllObjects, cr.AllObjects[0])
		res.Provisioned = append(res.Provisioned, cr.Provisioned[0])
		if i == 0 {
			res.Applies = int(after["apply"] - before["apply"])
			if res.History, res.Events, err = f.eventTypes(ctx, workflows.WorkflowID(f.ns, name)); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// waitQuiet waits until the worker has sent no request for two seconds.
func (f *fleet) waitQuiet(ctx context.Context) error {
	deadline := time.Now().Add(f.o.timeout)
	prev, err := scrapeRequests(f.metrics)
	if err != nil {
		return err
	}
	for quiet := 0; quiet < 4; {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		cur, err := scrapeRequests(f.metrics)
		if err != nil {
			return err
		}
		if totalWithout(cur, "watch") == totalWithout(prev, "watch") {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
		if time.Now().After(deadline) {
			return errors.New("the worker did not go quiet")
		}
	}
	return nil
}

// noOpResult is the requests a resync of every unchanged Cluster cost.
type noOpResult struct {
	Clusters   int
	PerCluster map[string]float64
}

// noOpResync signals every Cluster's workflow once (as the starter's resync does) and counts the
// worker's requests until every workflow has passed again.
func (f *fleet) noOpResync(ctx context.Context) (noOpResult, error) {
	if err := f.waitQuiet(ctx); err != nil {
		return noOpResult{}, err
	}
	names := f.names()
	passes := map[string]int{}
	for _, n := range names {
		st, err := f.state(ctx, n)
		if err != nil {
			return noOpResult{}, err
		}
		passes[n] = st.Passes
	}
	before, err := scrapeRequests(f.metrics)
	if err != nil {
		return noOpResult{}, err
	}
	err = parallel(ctx, 16, len(names), func(i int) error {
		return f.tc.SignalWorkflow(ctx, workflows.WorkflowID(f.ns, names[i]), "", workflows.SignalClusterEvent, workflows.ClusterEvent{Source: "resync"})
	})
	if err != nil {
		return noOpResult{}, err
	}
	for _, n := range names {
		for {
			st, err := f.state(ctx, n)
			if err != nil {
				return noOpResult{}, err
			}
			if st.Passes > passes[n] && st.Step != "" && !strings.HasPrefix(st.Step, "apply") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := f.waitQuiet(ctx); err != nil {
		return noOpResult{}, err
	}
	after, err := scrapeRequests(f.metrics)
	if err != nil {
		return noOpResult{}, err
	}
	res := noOpResult{Clusters: len(names), PerCluster: map[string]float64{}}
	for verb, v := range after {
		if verb == "watch" {
			continue
		}
		res.PerCluster[verb] = (v - before[verb]) / float64(len(names))
	}
	return res, nil
}

// state queries a Cluster's workflow, retrying for a minute: under load a query waits for a
// workflow task of its own and may time out.
func (f *fleet) state(ctx context.Context, name string) (workflows.State, error) {
	var st workflows.State
	var err error
	for deadline := time.Now().Add(time.Minute); ; {
		var v converter.EncodedValue
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		v, err = f.tc.QueryWorkflow(qctx, workflows.WorkflowID(f.ns, name), "", workflows.QueryState)
		cancel()
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return st, err
		}
		time.Sleep(time.Second)
	}
}

// upgradeResult is the fleet's upgrade by one minor.
type upgradeResult struct {
	Took       time.Duration
	PerCluster latencies
}

// rate is the fleet upgrade's Clusters per second: the stack's upgrade rate with every Cluster
// written at once and no Rollout (0 when it did not run).
func (u upgradeResult) rate() float64 {
	if u.Took <= 0 {
		return 0
	}
	return float64(len(u.PerCluster)) / u.Took.Seconds()
}

func (f *fleet) upgradeAll(ctx context.Context) (upgradeResult, error) {
	names := f.names()
	start := time.Now()
	began := make([]time.Time, len(names))
	err := parallel(ctx, 32, len(names), func(i int) error {
		began[i] = time.Now()
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": clusterv1.GroupVersion.String(), "kind": "Cluster",
			"metadata": map[string]any{"name": names[i], "namespace": f.ns},
			"spec":     map[string]any{"topology": map[string]any{"version": upgradeTo}}}}
		_, err := f.kc.Apply(ctx, u, fieldManager+"-upgrade")
		return err
	})
	if err != nil {
		return upgradeResult{}, err
	}
	res := upgradeResult{}
	deadline := time.Now().Add(f.o.timeout)
	pending := map[int]bool{}
	for i := range names {
		pending[i] = true
	}
	for len(pending) > 0 {
		for i := range pending {
			st, err := f.state(ctx, names[i])
			if err != nil {
				continue
			}
			if st.Upgrade == nil && strings.Contains(st.LastUpgrade, "-> "+upgradeTo) && strings.Contains(st.LastUpgrade, "completed") {
				res.PerCluster = append(res.PerCluster, time.Since(began[i]))
				delete(pending, i)
			}
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%d of %d Clusters upgraded after %s", len(names)-len(pending), len(names), f.o.timeout)
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(time.Second):
		}
	}
	res.Took = time.Since(start)
	return res, nil
}

// history is the history length of every run of this namespace's workflows of a type (running
// ones described one by one: visibility records a history length only when a run closes).
func (f *fleet) history(ctx context.Context, workflowType string) (counts, error) {
	query := fmt.Sprintf("WorkflowType = '%s' AND WorkflowId STARTS_WITH '%s'", workflowType, workflows.WorkflowID(f.ns, ""))
	var out counts
	var token []byte
	for {
		resp, err := f.tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: query, NextPageToken: token})
		if err != nil {
			return nil, fmt.Errorf("listing %s workflows: %w", workflowType, err)
		}
		for _, e := range resp.Executions {
			n := e.GetHistoryLength()
			if n == 0 {
				d, err := f.tc.DescribeWorkflowExecution(ctx, e.GetExecution().GetWorkflowId(), e.GetExecution().GetRunId())
				if err != nil {
					return nil, err
				}
				n = d.GetWorkflowExecutionInfo().GetHistoryLength()
			}
			out = append(out, int(n))
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return out, nil
		}
	}
}

// eventTypes counts the events of a workflow's current run by type (markers by marker name).
func (f *fleet) eventTypes(ctx context.Context, id string) (map[string]int, int, error) {
	out := map[string]int{}
	n := 0
	it := f.tc.GetWorkflowHistory(ctx, id, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, 0, fmt.Errorf("history of %s: %w", id, err)
		}
		n++
		name := strings.TrimPrefix(e.GetEventType().String(), "EVENT_TYPE_")
		if m := e.GetMarkerRecordedEventAttributes(); m != nil {
			name += " " + m.GetMarkerName()
			// A local activity's marker names its activity type in its data.
			for _, p := range m.GetDetails()["data"].GetPayloads() {
				var d struct{ ActivityType string }
				if json.Unmarshal(p.GetData(), &d) == nil && d.ActivityType != "" {
					name += " " + d.ActivityType
				}
			}
		}
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			name += " " + a.GetActivityType().GetName()
		}
		out[name]++
	}
	return out, n, nil
}

func applyNamespace(ctx context.Context, kc *kube.Client, ns string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	_, err := kc.Apply(ctx, obj, fieldManager)
	return err
}

// parallel runs fn(0..n-1) on `workers` goroutines; the first error wins.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return err
}

func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer l.Close()
	return l.Addr().String()
}

// deleteAll deletes every object of the topology kinds in a namespace (the local stack has no
// namespace controller to do it).
func deleteAll(ctx context.Context, kc *kube.Client, ns string) {
	for _, gvr := range append([]schema.GroupVersionResource{kc.Wire(kube.Clusters)}, provider.TopologyKinds...) {
		_ = kc.Dynamic.Resource(gvr).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
}

// profileWorker records a CPU profile of the worker for about the length of a create of n
// Clusters into -worker-profile (closed channel at once when not asked for).
func (f *fleet) profileWorker(n int) <-chan struct{} {
	done := make(chan struct{})
	if f.o.profile == "" || n == 0 {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		secs := min(60, 5+n/5)
		f.saveProfile(fmt.Sprintf("profile?seconds=%d", secs), f.o.profile)
	}()
	return done
}

// heapProfile writes the worker's live heap (after a collection) into -worker-heap, when asked:
// what the worker holds once a fleet exists.
func (f *fleet) heapProfile() {
	if f.o.heap != "" {
		f.saveProfile("heap?gc=1", f.o.heap)
	}
}

// saveProfile writes one of the worker's /debug/pprof/ answers into a file; a failure is logged.
func (f *fleet) saveProfile(query, file string) {
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/%s", f.metrics, query))
	if err == nil {
		defer resp.Body.Close()
		var out *os.File
		if out, err = os.Create(file); err == nil {
			_, err = io.Copy(out, resp.Body)
			out.Close()
		}
	}
	if err != nil {
		logf("worker profile %s: %v", query, err)
	}
}

// waitReady polls a process's /readyz until it answers 200 (a minute at most).
func waitReady(ctx context.Context, addr string) error {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after a minute", addr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// names are the Clusters the bench applied, sorted.
func (f *fleet) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var names []string
	for n := range f.applied {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
