//go:build integration

package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/workflows"
)

// TestCreateHistoryIsLean: the create of the sample Cluster, with no Runtime Extension, records
// no activity of its own (the steps are local activities; hooks nobody handles pass without a
// call), one version marker (the baseline), fewer than 60 events in all, and the recorded history
// replays against the workflow code.
func TestCreateHistoryIsLean(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	e.waitSettled("demo")

	id := workflows.WorkflowID(e.ns, "demo")
	hist := &historypb.History{}
	byType := map[string]int{}
	iter := tc.GetWorkflowHistory(e.ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
		name := ev.GetEventType().String()
		if m := ev.GetMarkerRecordedEventAttributes(); m != nil {
			name += " " + m.GetMarkerName()
		}
		if sig := ev.GetWorkflowExecutionSignaledEventAttributes(); sig != nil {
			var got workflows.ClusterEvent
			if p := sig.GetInput().GetPayloads(); len(p) > 0 && json.Unmarshal(p[0].GetData(), &got) == nil {
				kind, _, _ := strings.Cut(got.Source, " ")
				name += " " + kind // where the change was seen
			}
		}
		byType[name]++
	}
	t.Logf("history of the create: %d events: %v", len(hist.Events), byType)
	assert.Zero(t, byType["ActivityTaskScheduled"], "no regular activity: %v", byType)
	assert.Equal(t, 1, byType["MarkerRecorded Version"], "one version marker: %v", byType)
	// #11's target; topoflow's own writes coming back through the watch are not signalled (the
	// starter's echo filter), only the providers' progress and the class.
	assert.Less(t, len(hist.Events), 60, "history events of one create: %v", byType)

	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.ClusterTopology, workflow.RegisterOptions{Name: workflows.ClusterWorkflowType})
	r.RegisterWorkflowWithOptions(workflows.ClusterUpgrade, workflow.RegisterOptions{Name: workflows.ClusterUpgradeWorkflowType})
	require.NoError(t, r.ReplayWorkflowHistory(nil, hist), "the recorded create replays")
}
