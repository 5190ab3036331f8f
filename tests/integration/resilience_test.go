//go:build integration

package integration

import (
	"fmt"
	"os/exec"
	"path/filepath"
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

// TestWorkerCrashMidUpgrade kills the worker process (SIGKILL) in the middle of a chained upgrade
// and starts another: the upgrade resumes where it stopped and completes, every hook called
// exactly once per step and no part skipping or repeating a version.
func TestWorkerCrashMidUpgrade(t *testing.T) {
	bin := workerBinary(t)
	e := newEnv(t, envOptions{noWorker: true, sim: provider.Options{RolloutDuration: 3 * time.Second}})
	first := e.startWorkerProcess(bin)
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")

	e.setVersion("demo", "v1.33.1")
	e.eventually(60*time.Second, "the control plane's first step rolling out", func() (bool, string) {
		cp, _, _ := unstructured.NestedString(e.get(e.cluster("demo").Spec.ControlPlaneRef).Object, "spec", "version")
		return cp == "v1.32.4", cp
	})
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	crashed := time.Now()
	time.Sleep(3 * time.Second) // the rollout goes on without topoflow; events queue up in Temporal
	e.startWorkerProcess(bin)

	e.eventually(150*time.Second, "upgrade completed by the second worker", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.33.1")
		return len(at) == 4 && len(ext.Calls(hooksv1.AfterClusterUpgrade)) > 0, fmt.Sprintf("%v %s", at, msg)
	})
	t.Logf("upgrade completed %s after the crash", time.Since(crashed).Round(time.Second))
	time.Sleep(2 * time.Second) // nothing more comes
	assert.Equal(t, chainedUpgradeHooks, hookCalls(ext), "each hook exactly once, in order, across the crash")
	versions := map[string][]string{}
	for _, tr := range e.sim.Transitions() {
		versions[tr.Kind+"/"+poolOf(tr)] = append(versions[tr.Kind+"/"+poolOf(tr)], tr.Version)
	}
	assert.Equal(t, []string{"v1.31.2", "v1.32.4", "v1.33.1"}, versions["SimControlPlane/"])
	for _, p := range []string{"MachineDeployment/md-0", "MachineDeployment/md-1", "MachinePool/mp-0"} {
		assert.Equal(t, []string{"v1.31.2", "v1.33.1"}, versions[p], p)
	}
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
	e.eventually(60*time.Second, "upgrade completed", func() (bool, string) {
		at, msg := e.upgradeProgress("v1.32.0")
		return len(at) == 4 && len(ext.Calls(hooksv1.AfterClusterUpgrade)) > 0, fmt.Sprintf("%v %s", at, msg)
	})
	time.Sleep(2 * time.Second)
	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.32.0)", "BeforeControlPlaneUpgrade(v1.32.0)",
		"AfterControlPlaneUpgrade(v1.32.0)", "AfterControlPlaneUpgrade(v1.32.0)",
		"BeforeWorkersUpgrade(v1.32.0)", "AfterWorkersUpgrade(v1.32.0)", "AfterClusterUpgrade(v1.32.0)",
	}, hookCalls(ext))
}
