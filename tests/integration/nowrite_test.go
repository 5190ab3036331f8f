//go:build integration

package integration

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/workflows"
)

// topologyObjects are the kinds of a sample Cluster's topology, by group and resource.
var topologyObjects = [][2]string{
	{"cluster.x-k8s.io", "machinedeployments"}, {"cluster.x-k8s.io", "machinepools"}, {"cluster.x-k8s.io", "machinehealthchecks"},
	{"infrastructure.cluster.x-k8s.io", "simclusters"}, {"controlplane.cluster.x-k8s.io", "simcontrolplanes"},
	{"infrastructure.cluster.x-k8s.io", "simmachinetemplates"}, {"bootstrap.cluster.x-k8s.io", "simconfigtemplates"},
	{"infrastructure.cluster.x-k8s.io", "simmachinepools"}, {"bootstrap.cluster.x-k8s.io", "simconfigs"},
}

// TestNoWriteWhenNothingChanged: passes over an unchanged topology send no request that changes
// the managedFields of any topology object (every manager's entry of the object itself: the
// topology's capi-topology and the Cluster controller role's topoflow), nor the topoflow entries
// of the Cluster (its topology fields come with a regular patch, only when they differ); every
// object keeps its generation.
func TestNoWriteWhenNothingChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.settledSample()

	entries := func(u unstructured.Unstructured, only string) string {
		var out []string
		for _, mf := range u.GetManagedFields() {
			if mf.Subresource != "" || (only != "" && mf.Manager != only) {
				continue
			}
			fields := ""
			if mf.FieldsV1 != nil {
				fields = string(mf.FieldsV1.Raw)
			}
			out = append(out, fmt.Sprintf("%s %s %s %s", mf.Manager, mf.Operation, mf.Time, fields))
		}
		sort.Strings(out)
		return strings.Join(out, "\n")
	}
	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, gr := range topologyObjects {
			for _, u := range e.list(schemaGVR(gr[0], gr[1]), labels.ClusterName+"=demo") {
				out[u.GetKind()+"/"+u.GetName()] = fmt.Sprintf("generation %d\n%s", u.GetGeneration(), entries(u, ""))
			}
		}
		cluster := e.get(&corev1.ObjectReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: "demo"})
		out["Cluster/demo"] = entries(*cluster, activities.StatusFieldManager)
		return out
	}
	before := snapshot()
	require.Len(t, before, 16, fmt.Sprint(before))
	assert.Contains(t, before["Cluster/demo"], activities.StatusFieldManager+" Update", "the Cluster's topology fields came with a regular patch (Cluster API v1.14)")
	assert.NotContains(t, before["Cluster/demo"], labels.FieldManager+" Apply")
	// The field manager's times have one-second resolution: the passes are spread over seconds.
	e.touchPasses("demo", 3, 1100*time.Millisecond, func(i int) {
		e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", fmt.Sprint(i))
	})
	e.waitReconciled("demo", 30*time.Second)
	after := snapshot()
	for k, v := range before {
		assert.Equal(t, v, after[k], "managedFields of %s changed", k)
	}
	assert.Len(t, after, len(before))
}

// passes is how many passes a Cluster's workflow has run (in its current run).
func (e *env) passes(name string) int {
	e.t.Helper()
	v, err := tc.QueryWorkflow(context.Background(), workflows.WorkflowID(e.ns, name), "", workflows.QueryState)
	require.NoError(e.t, err)
	var s workflows.State
	require.NoError(e.t, v.Get(&s))
	return s.Passes
}

// passWorkflow is the workflow that runs a Cluster's passes now (its upgrade's while one runs),
// its current run, and how many passes that run has made.
func (e *env) passWorkflow(name string) (id, run string, passes int) {
	e.t.Helper()
	id = workflows.WorkflowID(e.ns, name)
	var s workflows.State
	v, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryState)
	require.NoError(e.t, err)
	require.NoError(e.t, v.Get(&s))
	passes = s.Passes
	if s.Upgrade != nil {
		if v, err := tc.QueryWorkflow(context.Background(), s.Upgrade.Workflow, "", workflows.QueryState); err == nil {
			var us workflows.State
			if v.Get(&us) == nil {
				id, passes = s.Upgrade.Workflow, us.Passes
			}
		}
	}
	if d, err := tc.DescribeWorkflowExecution(context.Background(), id, ""); err == nil {
		run = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	}
	return id, run, passes
}

// runPasses waits for a fact instead of a while: it asks the Cluster's workflow for a resync pass
// twice, each once the pass before has run, so at least one whole pass begins after the call.
// Whatever the Cluster's passes would do has then been done, and an assertion that nothing more
// happened can fail. (A run that continued as new counts its passes from zero.)
func (e *env) runPasses(name string) {
	e.t.Helper()
	for range 2 {
		id, run, before := e.passWorkflow(name)
		require.NoError(e.t, tc.SignalWorkflow(e.ctx, workflows.WorkflowID(e.ns, name), "", workflows.SignalClusterEvent, workflows.ClusterEvent{Source: "resync"}))
		e.eventually(60*time.Second, "a pass after the mark", func() (bool, string) {
			nowID, nowRun, got := e.passWorkflow(name)
			switch {
			case nowID != id:
				return true, ""
			case nowRun != run:
				return got >= 1, fmt.Sprintf("%s: a new run, %d passes", nowID, got)
			}
			return got > before, fmt.Sprintf("%s: %d passes", nowID, got-before)
		})
	}
}

// touchPasses makes a Cluster's workflow run n more passes over an unchanged topology: touch(i)
// makes an unrelated change that wakes it, at least gap apart, each once the previous pass ran
// (events that arrive together are coalesced into one pass).
func (e *env) touchPasses(name string, n int, gap time.Duration, touch func(i int)) {
	e.t.Helper()
	for i := range n {
		start := e.passes(name)
		time.Sleep(gap)
		touch(i)
		e.eventually(30*time.Second, "another pass", func() (bool, string) {
			got := e.passes(name)
			return got > start, fmt.Sprint(got-start, " passes")
		})
	}
}

// annotate sets an annotation of an object in the test namespace with its own field manager.
func (e *env) annotate(apiVersion, kind, name, key, value string) {
	e.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": e.ns, "annotations": map[string]any{key: value}}}}
	_, err := kc.Apply(e.ctx, obj, "integration-test-annotate")
	require.NoError(e.t, err)
}

// TestNoRequestsWhenNothingChanged (#11): once a Cluster is settled, passes over it (woken by an
// unrelated annotation and by the safety-net resync) send no request to the API server at all:
// reads come from the worker's informers and every apply is found to change nothing
// (model/ssa). Then a real change is still applied.
func TestNoRequestsWhenNothingChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.settledSample()
	// Let the last pass of the create finish (its status write included).
	e.touchPasses("demo", 1, 0, func(int) {
		e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", "settle")
	})
	e.runPasses("demo")

	before := e.requests.snapshot()
	start := e.passes("demo")
	e.touchPasses("demo", 3, 200*time.Millisecond, func(i int) {
		e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", fmt.Sprint(i))
	})
	require.NoError(t, tc.SignalWorkflow(e.ctx, workflows.WorkflowID(e.ns, "demo"), "", workflows.SignalClusterEvent, workflows.ClusterEvent{Source: "resync"}))
	e.eventually(30*time.Second, "the resync pass", func() (bool, string) {
		return e.passes("demo") >= start+4, fmt.Sprint(e.passes("demo")-start, " passes")
	})
	// The pass counter moves once a pass's activities have ended: every request is counted.
	after := e.requests.snapshot()
	for verb, n := range after {
		if verb == "watch" {
			continue
		}
		assert.Equal(t, before[verb], n, "%s requests during %d passes over an unchanged Cluster", verb, e.passes("demo")-start)
	}

	// A change is seen and applied: the MachineDeployment's replicas follow the topology.
	c := e.cluster("demo")
	c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr(int32(4))
	e.updateTopology(c)
	e.eventually(30*time.Second, "the new replicas applied", func() (bool, string) {
		md := e.machineDeployments("demo")[c.Spec.Topology.Workers.MachineDeployments[0].Name]
		if md == nil || md.Spec.Replicas == nil {
			return false, "no MachineDeployment with replicas"
		}
		return *md.Spec.Replicas == 4, fmt.Sprint(*md.Spec.Replicas)
	})
	assert.Greater(t, e.requests.snapshot()["apply"], after["apply"], "the change was applied")
}

// settledSample creates the sample Cluster and waits until it is reconciled and its shim Secret
// is gone (the shim goes once the Cluster owns what it guarded): a settled topology.
func (e *env) settledSample() {
	e.t.Helper()
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	e.eventually(30*time.Second, "the cluster shim Secret deleted", func() (bool, string) {
		_, err := kc.Dynamic.Resource(corev1.SchemeGroupVersion.WithResource("secrets")).Namespace(e.ns).Get(e.ctx, "demo-shim", metav1.GetOptions{})
		return kube.IsNotFound(err), fmt.Sprint(err)
	})
}
