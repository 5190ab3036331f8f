//go:build integration

package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	passes := func() int {
		v, err := tc.QueryWorkflow(context.Background(), workflows.WorkflowID(e.ns, "demo"), "", workflows.QueryState)
		require.NoError(t, err)
		var s workflows.State
		require.NoError(t, v.Get(&s))
		return s.Passes
	}
	before := snapshot()
	require.Len(t, before, 15, fmt.Sprint(before))
	start := passes()

	// Unrelated changes to the Cluster wake the workflow; each runs a full pass. The field
	// manager's times have one-second resolution: the passes are spread over several seconds.
	for i := range 3 {
		time.Sleep(1100 * time.Millisecond)
		c := e.cluster("demo")
		c.Annotations = map[string]string{"example.com/touched": fmt.Sprint(i)}
		e.updateTopology(c)
	}
	e.eventually(30*time.Second, "three more passes", func() (bool, string) {
		n := passes()
		return n >= start+3, fmt.Sprint(n-start, " passes")
	})
	e.waitReconciled("demo", 30*time.Second)
	assert.Equal(t, before, snapshot(), "no topology object was written")
}
