//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// TestNoWriteWhenNothingChanged: passes over an unchanged topology write nothing: every object
// keeps its generation and the time topoflow's field manager last changed it.
func TestNoWriteWhenNothingChanged(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	snapshot := func() map[string]string {
		out := map[string]string{}
		for _, gr := range topologyObjects {
			for _, u := range e.list(schemaGVR(gr[0], gr[1]), labels.ClusterName+"=demo") {
				applied := ""
				for _, mf := range u.GetManagedFields() {
					if mf.Manager == "capi-topology" && mf.Subresource == "" {
						applied = mf.Time.String()
					}
				}
				out[u.GetKind()+"/"+u.GetName()] = fmt.Sprintf("generation %d, applied %s", u.GetGeneration(), applied)
			}
		}
		return out
	}
	before := snapshot()
	require.Len(t, before, 15, fmt.Sprint(before))
	// The field manager's times have one-second resolution: the passes are spread over seconds.
	e.touchPasses("demo", 3, 1100*time.Millisecond, func(i int) {
		e.annotate(clusterv1.GroupVersion.String(), "Cluster", "demo", "example.com/touched", fmt.Sprint(i))
	})
	e.waitReconciled("demo", 30*time.Second)
	assert.Equal(t, before, snapshot(), "no topology object was written")
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
