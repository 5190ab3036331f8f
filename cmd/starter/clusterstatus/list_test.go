package clusterstatus

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteList: one aligned line per Cluster; a workflow that could not be asked shows why, in
// the step column; no Cluster says so.
func TestWriteList(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, WriteList(&out, []Row{
		{Cluster: "a/demo", Class: "quick-start", Version: "v1.31.2", Phase: "Provisioned", Topology: "True", Step: "settled"},
		{Cluster: "b/new", Class: "quick-start", Version: "v1.32.0", StateError: "no workflow topology/b/new\nmore"},
	}))
	assert.Equal(t, ""+
		"CLUSTER  CLASS        VERSION  PHASE        TOPOLOGY  STEP\n"+
		"a/demo   quick-start  v1.31.2  Provisioned  True      settled\n"+
		"b/new    quick-start  v1.32.0  -            -         (no workflow topology/b/new)\n", out.String())

	out.Reset()
	require.NoError(t, WriteList(&out, nil))
	assert.Equal(t, "No managed Cluster (none has spec.topology).\n", out.String())
}
