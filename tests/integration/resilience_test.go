//go:build integration

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// workerBinary builds cmd/worker once per test binary run.
func workerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/worker")
	cmd.Dir = repoFile(".")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "building the worker: %s", out)
	return bin
}

// startWorkerProcess runs topoflow's worker binary for the test's task queue; the test may kill it.
func (e *env) startWorkerProcess(bin string) *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(bin, "--task-queue", e.taskQueue)
	cmd.Stdout, cmd.Stderr = testWriter{e.t}, testWriter{e.t}
	require.NoError(e.t, cmd.Start())
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// upgradeHooks are the hooks of an upgrade, in Cluster API's order.
var upgradeHooks = []string{hooksv1.BeforeClusterUpgrade, hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade,
	hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade, hooksv1.AfterClusterUpgrade}

// hookCalls lists an extension's calls as "Hook(version)", in order.
func hookCalls(ext *extension.Server) []string {
	var out []string
	for _, call := range ext.Calls("") {
		v, _ := call.Body["kubernetesVersion"].(string)
		if v == "" {
			v, _ = call.Body["toKubernetesVersion"].(string)
		}
		out = append(out, call.Hook+"("+v+")")
	}
	return out
}

// assertChainedVersions checks what each part ran through an upgrade from v1.31.2 to v1.33.1: the
// control plane stepped through v1.32.4, each pool went straight to v1.33.1, nothing repeated.
func (e *env) assertChainedVersions() {
	e.t.Helper()
	versions := map[string][]string{}
	for _, tr := range e.sim.Transitions() {
		versions[tr.Kind+"/"+poolOf(tr)] = append(versions[tr.Kind+"/"+poolOf(tr)], tr.Version)
	}
	assert.Equal(e.t, []string{"v1.31.2", "v1.32.4", "v1.33.1"}, versions["SimControlPlane/"])
	for _, p := range []string{"MachineDeployment/md-0", "MachineDeployment/md-1", "MachinePool/mp-0"} {
		assert.Equal(e.t, []string{"v1.31.2", "v1.33.1"}, versions[p], p)
	}
}

// startChainedUpgrade creates the hooked sample Cluster, bumps it from v1.31.2 to v1.33.1 and
// waits until the control plane's first step (v1.32.4) is rolling out.
func (e *env) startChainedUpgrade() *extension.Server {
	e.t.Helper()
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	e.setVersion("demo", "v1.33.1")
	e.eventually(60*time.Second, "the control plane's first step rolling out", func() (bool, string) {
		cp, _, _ := unstructured.NestedString(e.get(e.cluster("demo").Spec.ControlPlaneRef).Object, "spec", "version")
		return cp == "v1.32.4", cp
	})
	return ext
}

// waitUpgraded waits until all four parts of the sample Cluster rolled out version and
// AfterClusterUpgrade was called.
func (e *env) waitUpgraded(ext *extension.Server, version string, timeout time.Duration) {
	e.t.Helper()
	e.eventually(timeout, "upgrade to "+version+" completed", func() (bool, string) {
		at, msg := e.upgradeProgress(version)
		return len(at) == 4 && len(ext.Calls(hooksv1.AfterClusterUpgrade)) > 0, fmt.Sprintf("%v %s", at, msg)
	})
}

// TestWorkerCrashMidUpgrade kills the worker process (SIGKILL) in the middle of a chained upgrade
// and starts another: the upgrade resumes where it stopped and completes, every hook called
// exactly once per step and no part skipping or repeating a version.
func TestWorkerCrashMidUpgrade(t *testing.T) {
	bin := workerBinary(t)
	e := newEnv(t, envOptions{noWorker: true, sim: provider.Options{RolloutDuration: 3 * time.Second}})
	first := e.startWorkerProcess(bin)
	ext := e.startChainedUpgrade()
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	crashed := time.Now()
	time.Sleep(3 * time.Second) // the rollout goes on without topoflow; events queue up in Temporal
	e.startWorkerProcess(bin)

	e.waitUpgraded(ext, "v1.33.1", 150*time.Second)
	t.Logf("upgrade completed %s after the crash", time.Since(crashed).Round(time.Second))
	e.runPasses("demo") // nothing more comes
	assert.Equal(t, chainedUpgradeHooks, hookCalls(ext), "each hook exactly once, in order, across the crash")
	e.assertChainedVersions()
	e.waitReconciled("demo", 30*time.Second)
}

// TestWorkerCrashDuringHookCall kills the worker while it waits for a slow extension's answer to
// AfterControlPlaneUpgrade. The activity heartbeats, so the lost attempt is noticed within the
// heartbeat timeout (not the two-minute start-to-close timeout) and retried by the next worker;
// the interrupted hook is called again (it never answered), every other hook once.
func TestWorkerCrashDuringHookCall(t *testing.T) {
	bin := workerBinary(t)
	e := newEnv(t, envOptions{noWorker: true})
	first := e.startWorkerProcess(bin)
	ext := e.hookedCluster()

	ext.Script(hooksv1.AfterControlPlaneUpgrade, extension.Answer{Delay: time.Minute})
	e.setVersion("demo", "v1.32.0")
	e.eventually(60*time.Second, "AfterControlPlaneUpgrade in flight", func() (bool, string) {
		return len(ext.Calls(hooksv1.AfterControlPlaneUpgrade)) == 1, fmt.Sprint(hookCalls(ext))
	})
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	e.startWorkerProcess(bin)

	// Within a minute: the heartbeat timeout, not the start-to-close timeout, bounds the pause.
	e.waitUpgraded(ext, "v1.32.0", 60*time.Second)
	e.runPasses("demo")
	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.32.0)", "BeforeControlPlaneUpgrade(v1.32.0)",
		"AfterControlPlaneUpgrade(v1.32.0)", "AfterControlPlaneUpgrade(v1.32.0)",
		"BeforeWorkersUpgrade(v1.32.0)", "AfterWorkersUpgrade(v1.32.0)", "AfterClusterUpgrade(v1.32.0)",
	}, hookCalls(ext))
}

// outage stops a component of the test stack (deploy/stack/stop.sh), waits, and brings the
// stack back (deploy/stack/up.sh): its state survives, as after a crash.
func (e *env) outage(component string, d time.Duration) {
	e.t.Helper()
	if os.Getenv("TOPOFLOW_STACK") == "" {
		e.t.Fatal("outage drills restart the test stack: run with `make test`, or after `source .stack/test/env`")
	}
	for _, args := range [][]string{{"stop.sh", component}, nil, {"up.sh"}} {
		if args == nil {
			time.Sleep(d)
			continue
		}
		out, err := exec.Command(repoFile("deploy/stack/"+args[0]), args[1:]...).CombinedOutput()
		require.NoError(e.t, err, "%s: %s", args, out)
	}
}

// folded drops consecutive repeats.
func folded(calls []string) []string {
	var out []string
	for _, c := range calls {
		if len(out) == 0 || out[len(out)-1] != c {
			out = append(out, c)
		}
	}
	return out
}

// upgradeThroughOutage runs a chained upgrade with hooks and takes a component of the stack away
// for a while once the control plane's first step is rolling out; the upgrade completes, in order.
func upgradeThroughOutage(t *testing.T, component string) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 3 * time.Second}})
	ext := e.startChainedUpgrade()
	down := time.Now()
	e.outage(component, 5*time.Second)
	t.Logf("%s was away for %s", component, time.Since(down).Round(100*time.Millisecond))

	e.waitUpgraded(ext, "v1.33.1", 150*time.Second)
	t.Logf("upgrade completed %s after the outage began; hook calls %v", time.Since(down).Round(time.Second), hookCalls(ext))
	e.runPasses("demo")
	// A call whose answer was lost with the outage is made again; the order never changes, and
	// nothing is called again once its answer was recorded.
	assert.Equal(t, chainedUpgradeHooks, folded(hookCalls(ext)))
	assert.Len(t, ext.Calls(hooksv1.AfterClusterUpgrade), 1)
	e.assertChainedVersions()
	e.waitReconciled("demo", 60*time.Second)
}

// TestTemporalRestartMidUpgrade: the Temporal server goes away mid-upgrade and comes back with its
// database; the worker and the watcher reconnect and the upgrade goes on.
func TestTemporalRestartMidUpgrade(t *testing.T) { upgradeThroughOutage(t, "temporal") }

// TestAPIServerOutageMidUpgrade: the kube-apiserver goes away mid-upgrade; activities retry, the
// watches resume, and the upgrade goes on.
func TestAPIServerOutageMidUpgrade(t *testing.T) { upgradeThroughOutage(t, "kube-apiserver") }

// TestHookAnswerSurvivesTemporalOutage (#12 item 6): Temporal goes away while the extension is
// answering BeforeClusterUpgrade, and stays away longer than the activity's heartbeat timeout, so
// the attempt that received the answer cannot report it and Temporal retries the activity. The
// retry takes the answer the worker already received: the extension is called once, and the
// upgrade goes on when Temporal is back.
func TestHookAnswerSurvivesTemporalOutage(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	stopped := make(chan time.Time, 1)
	var once sync.Once
	ext.Respond(hooksv1.BeforeClusterUpgrade, func(map[string]any) map[string]any {
		once.Do(func() {
			// Stop Temporal before the answer leaves: the attempt's completion is lost.
			stopped <- time.Now()
			out, err := exec.Command(repoFile("deploy/stack/stop.sh"), "temporal").CombinedOutput()
			assert.NoError(t, err, "%s", out)
		})
		return nil
	})
	e.setVersion("demo", "v1.32.4")
	var down time.Time
	select {
	case down = <-stopped:
	case <-time.After(60 * time.Second):
		t.Fatal("BeforeClusterUpgrade not called")
	}
	time.Sleep(time.Until(down.Add(25 * time.Second))) // past the heartbeat timeout (20s)
	out, err := exec.Command(repoFile("deploy/stack/up.sh")).CombinedOutput()
	require.NoError(t, err, "%s", out)

	e.waitUpgraded(ext, "v1.32.4", 150*time.Second)
	calls := ext.Calls(hooksv1.BeforeClusterUpgrade)
	require.Equal(t, 1, len(calls), "BeforeClusterUpgrade called once: %v", hookCalls(ext))
	assert.NotEmpty(t, calls[0].IdempotencyKey)
	e.waitReconciled("demo", 60*time.Second)
}
