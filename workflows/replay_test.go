package workflows

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays histories recorded on a real stack (exported with
// `temporal workflow show -w ID -o json`) against the current workflow code. A failure means a
// change is not deterministic for running workflows: guard it with workflow.GetVersion, then
// record new histories next to the old ones.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/histories/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(ClusterTopology, workflow.RegisterOptions{Name: ClusterWorkflowType})
			r.RegisterWorkflowWithOptions(ClusterUpgrade, workflow.RegisterOptions{Name: ClusterUpgradeWorkflowType})
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
		})
	}
}
