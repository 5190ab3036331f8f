package main

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// latencies are durations, one per Cluster.
type latencies []time.Duration

// sum is the latencies added up.
func (l latencies) sum() time.Duration {
	var t time.Duration
	for _, d := range l {
		t += d
	}
	return t
}

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// counts are numbers, one per workflow run.
type counts []int

func (c counts) pct(p float64) int {
	if len(c) == 0 {
		return 0
	}
	s := slices.Clone(c)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

type report struct {
	Date                          string
	Clusters                      int
	Raw                           rawResult
	Create                        createResult
	Single                        singleResult
	NoOp                          noOpResult
	CreateHistory, UpgradeHistory counts
	Upgrade                       upgradeResult
	Rollout                       rolloutResult
	WorkerRSS, WorkerPeakRSS      int64
	WorkerMemoryLimit             string
	// WorkflowTaskWarnings counts the worker's "Workflow task duration exceeded" warnings.
	WorkflowTaskWarnings int
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

func (r *report) print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "topoflow bench, %s, %d Clusters of the sample (%d topology objects each)\n\n", r.Date, r.Clusters, r.Create.Objects/max(1, r.Clusters))
	fmt.Fprintf(tw, "Raw server-side apply (%d workers, no client limit)\t%d objects in %s\t%.1f objects/s\n", r.Raw.Workers, r.Raw.Objects, ms(r.Raw.Took), r.Raw.Rate())
	fmt.Fprintf(tw, "Fleet create, all applied at once\t%d objects in %s\t%.1f objects/s (%.0f%% of raw), peak %d/s\n",
		r.Create.Objects, ms(r.Create.Took), r.Create.Rate(), 100*r.Create.Ratio, r.Create.PeakPerSecond)
	fmt.Fprintf(tw, "  all Provisioned\t%s\n", ms(r.Create.AllProvisioned))
	fmt.Fprintf(tw, "  CPU during the create\t%s\n", r.Create.CPU)
	fmt.Fprintf(tw, "  worker's API requests per Cluster\t%s\n", perVerb(r.Create.Requests))
	fmt.Fprintf(tw, "  worker's writes per Cluster, by resource\t%s\n", largestFirst(r.Create.Writes))
	fmt.Fprintf(tw, "  per Cluster: all objects applied\tp50 %s\tp99 %s\n", ms(r.Create.AllObjects.pct(0.5)), ms(r.Create.AllObjects.pct(0.99)))
	fmt.Fprintf(tw, "  per Cluster: Provisioned\tp50 %s\tp99 %s\n", ms(r.Create.Provisioned.pct(0.5)), ms(r.Create.Provisioned.pct(0.99)))
	fmt.Fprintf(tw, "One Cluster created alone (%d, one after the other)\tall objects p50 %s, max %s\tProvisioned p50 %s\t%d server-side applies\n",
		r.Single.Runs, ms(r.Single.AllObjects.pct(0.5)), ms(r.Single.AllObjects.pct(1)), ms(r.Single.Provisioned.pct(0.5)), r.Single.Applies)
	fmt.Fprintf(tw, "  history of the first one's workflow\t%d events\t%s\n", r.Single.Events, byCount(r.Single.History))
	local, own := r.Single.History["MarkerRecorded LocalActivity ApplyTopology"], r.Single.History["ActivityTaskScheduled ApplyTopology"]
	fmt.Fprintf(tw, "  passes of the first one's create\t%d decide-and-apply activities\t%d inside the workflow task, %d of their own\n", local+own, local, own)
	fmt.Fprintf(tw, "API requests per no-op resync per Cluster\t%s\t(%d Clusters)\n", perVerb(r.NoOp.PerCluster), r.NoOp.Clusters)
	fmt.Fprintf(tw, "History events per Cluster workflow (create, resync)\tp50 %d\tmax %d\n", r.CreateHistory.pct(0.5), r.CreateHistory.pct(1))
	if r.Rollout.Took > 0 {
		fmt.Fprintf(tw, "Fleet rollout to %s (%d stages, %s soak after each)\ttook %s\tlower bound %s (%.2fx; one Cluster alone %s)\n",
			rolloutTo, r.Rollout.Stages, benchSoak, ms(r.Rollout.Took), ms(r.Rollout.Bound), r.Rollout.Took.Seconds()/max(r.Rollout.Bound.Seconds(), 1e-9), ms(r.Rollout.Single))
		fmt.Fprintf(tw, "  Rollout workflow history\t%d events\tworker's API requests %.1f/s\n", r.Rollout.History, r.Rollout.RequestsPerSecond)
		fmt.Fprintf(tw, "  worker's writes per Cluster, by resource\t%s\n", largestFirst(r.Rollout.Writes))
		for _, s := range r.Rollout.PerStage {
			fmt.Fprintf(tw, "  stage %s: %d Clusters, %d batches\ttook %s\tbound %s; upgrade per Cluster p50 %s, max %s\n",
				s.Name, s.Clusters, s.Batches, ms(s.Took), ms(s.Bound), ms(s.Upgrades.pct(0.5)), ms(s.Upgrades.pct(1)))
			fmt.Fprintf(tw, "    upgrading %s (first write to last done), %.1f Clusters/s\tin flight %.1f of %d on average\tthe rollout's own time %s (neither upgrading nor soaking)\n",
				ms(s.Busy), s.PerSecond(), s.InFlight, s.Limit, ms(s.Own()))
		}
		fmt.Fprintf(tw, "  CPU during the rollout\t%.2f s per Cluster\t%s\n", r.Rollout.CPUPerCluster, r.Rollout.CPU)
		if rate := r.Upgrade.rate(); rate > 0 {
			at := time.Duration(r.Rollout.Stages)*benchSoak + time.Duration(float64(r.Rollout.clusters())/rate*float64(time.Second))
			fmt.Fprintf(tw, "  at the fleet upgrade's rate (%.1f Clusters/s, no Rollout)\tits Clusters and soaks take %s\tthe rollout took %.2fx that (a comparison, not the bound)\n",
				rate, ms(at), r.Rollout.Took.Seconds()/at.Seconds())
		}
	}
	if r.Upgrade.Took > 0 {
		fmt.Fprintf(tw, "Fleet upgrade by one minor (%s)\tall done in %s (%.1f Clusters/s)\tper Cluster p50 %s, p99 %s\n", upgradeTo, ms(r.Upgrade.Took),
			r.Upgrade.rate(), ms(r.Upgrade.PerCluster.pct(0.5)), ms(r.Upgrade.PerCluster.pct(0.99)))
		fmt.Fprintf(tw, "History events per upgrade workflow\tp50 %d\tmax %d\n", r.UpgradeHistory.pct(0.5), r.UpgradeHistory.pct(1))
	}
	limit := "no Go memory limit"
	if r.WorkerMemoryLimit != "" {
		limit = "GOMEMLIMIT=" + r.WorkerMemoryLimit
	}
	fmt.Fprintf(tw, "Workflow tasks over 5 s (worker log warnings)\t%d\n", r.WorkflowTaskWarnings)
	fmt.Fprintf(tw, "Worker memory (RSS)\tnow %d MiB\tpeak %d MiB\t%s\n", r.WorkerRSS>>20, r.WorkerPeakRSS>>20, limit)
}

// byCount lists a breakdown, largest first.
func byCount(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", strings.ToLower(k), m[k])
	}
	return strings.Join(parts, ", ")
}

// scrapeRequests reads topoflow_api_requests_total from a metrics endpoint, summed by verb.
func scrapeRequests(addr string) (map[string]float64, error) {
	return scrapeRequestsBy(addr, func(verb, _ string) string { return verb })
}

// scrapeWrites reads the writes (every verb but get, list and watch) from
// topoflow_api_requests_total, summed by "verb resource".
func scrapeWrites(addr string) (map[string]float64, error) {
	return scrapeRequestsBy(addr, func(verb, resource string) string {
		switch verb {
		case "get", "list", "watch":
			return ""
		}
		return verb + " " + resource
	})
}

// scrapeRequestsBy sums topoflow_api_requests_total by key(verb, resource); an empty key skips.
func scrapeRequestsBy(addr string, key func(verb, resource string) string) (map[string]float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "topoflow_api_requests_total{") {
			continue
		}
		k := key(label(line, "verb"), label(line, "resource"))
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err != nil || k == "" {
			continue
		}
		out[k] += v
	}
	return out, sc.Err()
}

// label is a label's value in a Prometheus text line.
func label(line, name string) string {
	_, rest, _ := strings.Cut(line, name+`="`)
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

func totalWithout(m map[string]float64, skip string) float64 {
	t := 0.0
	for k, v := range m {
		if k != skip {
			t += v
		}
	}
	return t
}

// processes runs topoflow's binaries, each logging to <logs>/bench-<name>.log.
type processes struct {
	cmds map[string]*exec.Cmd
	logs string
	args map[string][]string
	// env adds environment variables by process name.
	env map[string][]string
}

func (p *processes) start(name string) error {
	args := p.args[name]
	logFile, err := os.Create(filepath.Join(p.logs, "bench-"+name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if env := p.env[name]; len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p.cmds[name] = cmd
	go func() { _ = cmd.Wait(); logFile.Close() }()
	return nil
}

func (p *processes) stopAll() {
	for _, cmd := range p.cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	time.Sleep(time.Second)
	for _, cmd := range p.cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
}

// rss reads a process's resident memory now and at its peak (VmRSS, VmHWM), in bytes.
func (p *processes) rss(name string) (now, peak int64) {
	cmd := p.cmds[name]
	if cmd == nil || cmd.Process == nil {
		return 0, 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return now, peak
}

// cpuSeconds reads the CPU time (user and system) each process of the stack and topoflow has used
// so far, by name: the profile of where a phase's work went.
func (f *fleet) cpuSeconds() map[string]float64 {
	pids := map[string]int{"bench": os.Getpid()}
	for _, name := range []string{"etcd", "kube-apiserver", "temporal"} {
		if data, err := os.ReadFile(filepath.Join(f.logDir, name+".pid")); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				pids[name] = pid
			}
		}
	}
	for name, cmd := range f.procs.cmds {
		if cmd.Process != nil {
			pids[name] = cmd.Process.Pid
		}
	}
	out := map[string]float64{}
	for name, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
		rest := string(data)[strings.LastIndex(string(data), ")")+2:]
		fields := strings.Fields(rest)
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(fields[11], 64)
		stime, _ := strconv.ParseFloat(fields[12], 64)
		out[name] = (utime + stime) / 100 // USER_HZ
	}
	return out
}

// cpuShare formats the CPU seconds used between two readings, largest first.
func cpuShare(before, after map[string]float64, wall time.Duration) string {
	type use struct {
		name string
		s    float64
	}
	var uses []use
	for name, a := range after {
		uses = append(uses, use{name, a - before[name]})
	}
	sort.Slice(uses, func(i, j int) bool { return uses[i].s > uses[j].s })
	var parts []string
	for _, u := range uses {
		parts = append(parts, fmt.Sprintf("%s %.1fs (%.0f%% of a core)", u.name, u.s, 100*u.s/wall.Seconds()))
	}
	return strings.Join(parts, ", ")
}

// perVerb formats request counts by verb ("0" when there were none).
// perCluster is how much each counter grew from before to after, divided by n.
func perCluster(before, after map[string]float64, n int) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if v > before[k] {
			out[k] = (v - before[k]) / float64(max(1, n))
		}
	}
	return out
}

// largestFirst prints counts largest first.
func largestFirst(m map[string]float64) string {
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, m[k]))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func perVerb(m map[string]float64) string {
	var verbs []string
	for v, n := range m {
		if n != 0 {
			verbs = append(verbs, fmt.Sprintf("%s %.2f", v, n))
		}
	}
	sort.Strings(verbs)
	if len(verbs) == 0 {
		return "0"
	}
	return strings.Join(verbs, ", ")
}

// countInLog counts the lines of a log file that contain s (0 when it cannot be read).
func countInLog(path, s string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			n++
		}
	}
	return n
}
