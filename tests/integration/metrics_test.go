//go:build integration

package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/internal/kube"
)

// freeAddr returns a loopback address with a port nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// scrape reads a /metrics page into "series -> value" ("name{labels}" as exposed).
func scrape(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// sum adds the values of the series whose text starts with prefix and contains every label.
func sum(m map[string]float64, prefix string, labels ...string) float64 {
	total := 0.0
	for series, v := range m {
		if !strings.HasPrefix(series, prefix) {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(series, l)
		}
		if ok {
			total += v
		}
	}
	return total
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMetrics (#10): the worker and starter processes serve /metrics, /healthz and /readyz;
// after a create, topoflow's series and the Temporal SDK's are there with non-zero values.
func TestMetrics(t *testing.T) {
	e := newEnv(t, envOptions{noWorker: true, noWatcher: true})
	dir := t.TempDir()
	for _, c := range []string{"worker", "starter"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, c), "./cmd/"+c)
		build.Dir = repoFile(".")
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	workerAddr, starterAddr := freeAddr(t), freeAddr(t)
	run := func(args ...string) {
		cmd := exec.Command(filepath.Join(dir, args[0]), args[1:]...)
		cmd.Stdout, cmd.Stderr = testWriter{t}, testWriter{t}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	run("worker", "--task-queue", e.taskQueue, "--metrics-addr", workerAddr, "--log-format", "json")
	run("starter", "run", "--task-queue", e.taskQueue, "--namespace", e.ns, "--metrics-addr", starterAddr,
		"--leader-election-namespace", e.ns, "--leader-election-id", "starter-"+e.ns)
	for _, addr := range []string{workerAddr, starterAddr} {
		e.eventually(30*time.Second, "ready at "+addr, func() (bool, string) {
			resp, err := http.Get("http://" + addr + "/readyz")
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
		code, body := get(t, "http://"+addr+"/healthz")
		assert.Equal(t, http.StatusOK, code, body)
	}

	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	w := scrape(t, workerAddr)
	assert.Positive(t, sum(w, "topoflow_api_requests_total", `verb="apply"`, `code="2xx"`), "server-side applies counted")
	assert.Positive(t, sum(w, "topoflow_api_requests_total", `verb="get"`), "reads counted")
	assert.Positive(t, sum(w, "temporal_request{"), "the Temporal SDK's client requests")
	assert.Positive(t, sum(w, "temporal_activity_execution_latency_seconds_count"), "the Temporal SDK's activity metrics")
	assert.Positive(t, sum(w, "go_goroutines"))

	s := scrape(t, starterAddr)
	assert.Positive(t, sum(s, "topoflow_watch_events_received_total", `kind="Cluster"`))
	assert.Positive(t, sum(s, "topoflow_signals_sent_total", `result="ok"`))
	_, ok := s["topoflow_watch_queue_depth"]
	assert.True(t, ok, "queue depth exposed")
	assert.Positive(t, sum(s, "topoflow_watch_coalesce_hold_seconds"), "the hold of the last queued event (--coalesce)")
	_, ok = s["topoflow_upgrades_in_progress"]
	assert.True(t, ok, "upgrades in progress exposed")
	assert.Positive(t, sum(s, "topoflow_api_requests_total", `verb="watch"`), "the starter's watches counted")
	assert.Positive(t, sum(s, "topoflow_watch_echoes_skipped_total"), "topoflow's own writes not signalled")

	// A hook nobody handles is not called (no count), except the ones that announce a step with
	// an Event, like BeforeClusterDelete.
	assert.Zero(t, sum(w, "topoflow_hook_calls_total", `hook="BeforeClusterCreate"`))
	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Delete(e.ctx, "demo", metav1.DeleteOptions{}))
	e.eventually(60*time.Second, "BeforeClusterDelete counted", func() (bool, string) {
		w = scrape(t, workerAddr)
		n := sum(w, "topoflow_hook_calls_total", `hook="BeforeClusterDelete"`, `outcome="no-handler"`)
		return n > 0 && sum(w, "topoflow_hook_call_duration_seconds_count", `hook="BeforeClusterDelete"`) > 0, fmt.Sprint(n)
	})
	var names []string
	for k := range w {
		if name, _, _ := strings.Cut(k, "{"); strings.HasPrefix(name, "temporal_") && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	t.Logf("Temporal SDK series on the worker: %s", strings.Join(names, " "))
}
