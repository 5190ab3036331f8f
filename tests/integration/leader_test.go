//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/activities/temporalx"
)

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestStarterLeaderElection (#10): two starter processes; one takes the Lease and drives the
// Clusters, the other follows. Killed with SIGKILL, the leader is replaced within the lease time,
// the new leader drives a new Cluster, survives an API server outage longer than its renew
// deadline (it loses the Lease and takes it again), and no workflow run was ever terminated by a second starter
// (before leader election both started the ClusterClass's registry workflow, terminating each
// other's runs, and doubled every signal).
func TestStarterLeaderElection(t *testing.T) {
	e := newEnv(t, envOptions{noWatcher: true})
	bin := filepath.Join(t.TempDir(), "starter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/starter")
	build.Dir = repoFile(".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	lease := "starter-" + e.ns
	type proc struct {
		cmd *exec.Cmd
		out *lockedBuffer
	}
	start := func() proc {
		p := proc{cmd: exec.Command(bin, "run", "--task-queue", e.taskQueue, "--namespace", e.ns,
			"--leader-election-namespace", e.ns, "--leader-election-id", lease, "--leader-election-lease-duration", "6s",
			"--leader-election-renew-deadline", "4s", "--leader-election-retry-period", "1s"), out: &lockedBuffer{}}
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		require.NoError(t, p.cmd.Start())
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
		return p
	}
	a, b := start(), start()
	leading := func(p proc) bool { return strings.Contains(p.out.String(), "leading: watching and signalling") }
	var leader, follower proc
	e.eventually(30*time.Second, "one starter leads", func() (bool, string) {
		switch {
		case leading(a) && leading(b):
			t.Fatalf("two leaders:\n%s\n%s", a.out, b.out)
		case leading(a):
			leader, follower = a, b
		case leading(b):
			leader, follower = b, a
		}
		return leader.cmd != nil, ""
	})

	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	assert.False(t, leading(follower), "the follower stayed a follower")

	require.NoError(t, leader.cmd.Process.Kill())
	killed := time.Now()
	// The Lease (6 s) must expire first; how long the hand-over takes beyond that depends on the
	// machine's load, so it is logged, not asserted (the wait's bound is three leases).
	e.eventually(3*6*time.Second, "the follower takes over", func() (bool, string) { return leading(follower), "" })
	t.Logf("hand-over took %s", time.Since(killed).Round(100*time.Millisecond))

	// The new leader drives a new Cluster.
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetName("demo2")
		}
	})
	e.waitReconciled("demo2", 90*time.Second)

	// The API server away longer than the renew deadline: the leader loses its Lease, stands for
	// election again (it has no supervisor to restart it) and drives the next Cluster.
	e.outage("kube-apiserver", 8*time.Second)
	e.eventually(60*time.Second, "leading again after the lost Lease", func() (bool, string) {
		return strings.Count(follower.out.String(), "leading: watching and signalling") >= 2, ""
	})
	assert.Contains(t, follower.out.String(), "standing for election again")
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetName("demo3")
		}
	})
	e.waitReconciled("demo3", 90*time.Second)

	resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Namespace: temporalx.Options{}.FromEnv().Namespace,
		Query:     fmt.Sprintf(`ExecutionStatus = 'Terminated' AND (WorkflowId STARTS_WITH 'topology/%s/' OR WorkflowId STARTS_WITH 'clusterclass/%s/')`, e.ns, e.ns)})
	require.NoError(t, err)
	var terminated []string
	for _, x := range resp.Executions {
		terminated = append(terminated, x.Execution.WorkflowId)
	}
	assert.Empty(t, terminated, "no workflow run terminated by a second starter")

	leases := schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	l, err := kc.Dynamic.Resource(leases).Namespace(e.ns).Get(context.Background(), lease, metav1.GetOptions{})
	require.NoError(t, err)
	holder, _, _ := unstructured.NestedString(l.Object, "spec", "holderIdentity")
	assert.NotEmpty(t, holder)
}
