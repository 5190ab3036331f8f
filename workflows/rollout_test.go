package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
)

// fakeFleet stands in for the API server and the Clusters' own workflows: a written Cluster is
// done settle after its write.
type fakeFleet struct {
	mu       sync.Mutex
	spec     rolloutv1.RolloutSpec
	n        int
	settle   time.Duration
	ann      map[string]string
	written  map[string]time.Time
	order    []string
	statuses int
	env      *testsuite.TestWorkflowEnvironment
	deleting bool
	released bool
}

func (f *fakeFleet) key(i int) string { return fmt.Sprintf("fleet/c%04d", i) }

func (f *fakeFleet) read() activities.RolloutRead {
	f.mu.Lock()
	defer f.mu.Unlock()
	ann := map[string]string{}
	for k, v := range f.ann {
		ann[k] = v
	}
	return activities.RolloutRead{Exists: true, Generation: 1, Spec: f.spec, Annotations: ann, Deleting: f.deleting}
}

// events counts one run's history from above, independently of the workflow's own count (a step
// inside the workflow task counted as an activity of its own), and which steps ran how (own:
// activities of their own, local: inside the workflow task), by activity type.
type events struct {
	activities, timers, signals int
	own, local                  map[string]int
}

func (e events) bound() int {
	return 3*e.activities + 2*e.timers + e.signals + 3*(e.activities+e.timers+e.signals+1) + 2
}

func newRolloutEnv(t *testing.T, f *fakeFleet, count *events) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	f.env = env
	env.RegisterWorkflowWithOptions(Rollout, workflow.RegisterOptions{Name: RolloutWorkflowType})
	env.RegisterActivity(&activities.Activities{})
	count.own, count.local = map[string]int{}, map[string]int{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		count.activities++
		count.own[info.ActivityType.Name]++
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		count.activities++
		count.local[info.ActivityType.Name]++
	})
	env.SetOnTimerScheduledListener(func(string, time.Duration) { count.timers++ })
	env.OnActivity(acts.ReadRollout, mock.Anything, mock.Anything).Return(func(context.Context, activities.RolloutRef) (activities.RolloutRead, error) {
		return f.read(), nil
	})
	env.OnActivity(acts.SelectClusters, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.SelectInput) (activities.SelectResult, error) {
		out := activities.SelectResult{Spec: in.Spec}
		for i := 0; i < f.n; i++ {
			out.Candidates = append(out.Candidates, rollout.Candidate{Namespace: "fleet", Name: fmt.Sprintf("c%04d", i)})
		}
		return out, nil
	})
	env.OnActivity(acts.WriteRolloutChange, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.WriteInput) ([]rollout.WriteResult, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		var out []rollout.WriteResult
		for _, k := range in.Clusters {
			if _, again := f.written[k]; again {
				t.Errorf("%s written twice", k)
			}
			f.written[k] = env.Now()
			f.order = append(f.order, k)
			out = append(out, rollout.WriteResult{Key: k, Generation: 2})
		}
		return out, nil
	})
	env.OnActivity(acts.ObserveRollout, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.RolloutObserveInput) (activities.RolloutObservation, error) {
		out := activities.RolloutObservation{Rollout: f.read(), Clusters: map[string]rollout.Seen{}}
		f.mu.Lock()
		defer f.mu.Unlock()
		for k, gen := range in.Clusters {
			if gen != 2 {
				t.Errorf("%s followed at generation %d, want the one written (2)", k, gen)
			}
			out.Clusters[k] = rollout.Seen{Holds: true, Done: !env.Now().Before(f.written[k].Add(f.settle)), Why: "rolling out"}
		}
		return out, nil
	})
	env.OnActivity(acts.SetRolloutStatus, mock.Anything, mock.Anything).Return(func(context.Context, activities.RolloutStatusInput) error {
		f.mu.Lock()
		f.statuses++
		f.mu.Unlock()
		return nil
	})
	env.OnActivity(acts.ReleaseRollout, mock.Anything, mock.Anything).Return(func(context.Context, activities.RolloutRef) error {
		f.released = true
		return nil
	})
	return env
}

func newFakeFleet(spec rolloutv1.RolloutSpec, n int) *fakeFleet {
	return &fakeFleet{spec: spec, n: n, settle: 2 * time.Minute, ann: map[string]string{}, written: map[string]time.Time{}}
}

func pct(v int32) *int32 { return &v }

// TestRolloutApprovalByUpdateAndAnnotation: the canary stage waits for its after-approval (an
// Update refuses a wrong token, accepts the right one), the last stage for an approval by
// annotation; every Cluster is written once, stage by stage.
func TestRolloutApprovalByUpdateAndAnnotation(t *testing.T) {
	f := newFakeFleet(rolloutv1.RolloutSpec{Change: rolloutv1.Change{Version: "v1.35.0"}, Stages: []rolloutv1.Stage{
		{Name: "canary", Count: pct(1), ApproveAfter: true},
		{Name: "middle", Count: pct(2), MaxConcurrent: 2},
		{Name: "rest", ApproveBefore: true, MaxConcurrent: 3},
	}}, 6)
	var count events
	env := newRolloutEnv(t, f, &count)
	query := func() rolloutv1.RolloutStatus {
		v, err := env.QueryWorkflow(QueryRollout)
		require.NoError(t, err)
		var st rolloutv1.RolloutStatus
		require.NoError(t, v.Get(&st))
		return st
	}
	// Updates are answered when the workflow next runs: record the answers, check them at the end.
	answers := map[string]error{}
	update := func(id string, c rollout.Control) {
		answers[id] = fmt.Errorf("no answer")
		env.UpdateWorkflow(UpdateRolloutControl, id, &testsuite.TestUpdateCallback{
			OnReject: func(e error) { answers[id] = e }, OnAccept: func() { answers[id] = nil }, OnComplete: func(any, error) {}}, c)
	}
	env.RegisterDelayedCallback(func() {
		st := query()
		require.Equal(t, rollout.PhaseWaitingForApproval, st.Phase)
		require.Equal(t, "canary/after@gen-1", st.PendingApproval)
		require.Len(t, f.order, 1, "only the canary is written before the approval")
		update("wrong", rollout.Control{Action: "approve", Token: "rest@gen-1"})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, "canary/after@gen-1", query().PendingApproval, "a refused approval opened nothing")
		update("right", rollout.Control{Action: "approve", Token: "canary/after@gen-1", By: "test"})
	}, time.Hour+time.Minute)
	env.RegisterDelayedCallback(func() {
		st := query()
		require.Equal(t, "rest@gen-1", st.PendingApproval)
		require.Len(t, f.order, 3)
		f.mu.Lock()
		f.ann[rollout.ApproveAnnotation] = "rest@gen-1"
		f.mu.Unlock()
		env.SignalWorkflow(SignalRolloutEvent, nil)
	}, 2*time.Hour)
	env.ExecuteWorkflow(RolloutWorkflowType, RolloutInput{Rollout: activities.RolloutRef{Namespace: "fleet", Name: "r"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Equal(t, []string{"fleet/c0000", "fleet/c0001", "fleet/c0002", "fleet/c0003", "fleet/c0004", "fleet/c0005"}, f.order)
	require.Equal(t, rollout.PhaseCompleted, query().Phase)
	require.ErrorContains(t, answers["wrong"], "canary/after@gen-1", "an approval naming another gate is refused")
	require.NoError(t, answers["right"])
}

// TestRolloutDecisionsAreActivities: the rollout's reads and reports run inside the workflow task,
// but freezing the selection and writing Clusters always run as activities of their own, so each
// decision is in the history before a Cluster is written (a crash mid-task cannot make the next
// decision leave a written Cluster unfollowed).
func TestRolloutDecisionsAreActivities(t *testing.T) {
	f := newFakeFleet(rolloutv1.RolloutSpec{Change: rolloutv1.Change{Version: "v1.35.0"}, Stages: []rolloutv1.Stage{
		{Name: "canary", Count: pct(1)},
		{Name: "rest", MaxConcurrent: 2},
	}}, 5)
	var count events
	env := newRolloutEnv(t, f, &count)
	env.ExecuteWorkflow(RolloutWorkflowType, RolloutInput{Rollout: activities.RolloutRef{Namespace: "fleet", Name: "r"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, f.order, 5)
	for _, decisive := range []string{"SelectClusters", "WriteRolloutChange"} {
		require.Positive(t, count.own[decisive], "%s ran as an activity of its own: %v", decisive, count.own)
		require.Zero(t, count.local[decisive], "%s never inside the workflow task: %v", decisive, count.local)
	}
	for _, read := range []string{"ReadRollout", "ObserveRollout", "SetRolloutStatus"} {
		require.Positive(t, count.local[read], "%s inside the workflow task: %v", read, count.local)
		require.Zero(t, count.own[read], "%s not as an activity of its own (it answered at once): %v", read, count.own)
	}
}

// TestRolloutThousandClustersContinuesAsNew: 1,000 Clusters through four stages; each run's
// history, counted from above, stays under 10,000 events, and the state carried across
// continue-as-new brings every Cluster to done, each written once.
func TestRolloutThousandClustersContinuesAsNew(t *testing.T) {
	f := newFakeFleet(rolloutv1.RolloutSpec{Change: rolloutv1.Change{Version: "v1.35.0"}, Stages: []rolloutv1.Stage{
		{Name: "canary", Percent: pct(1), MaxConcurrent: 2},
		{Name: "early", Percent: pct(10), MaxConcurrent: 10},
		{Name: "main", Percent: pct(50), MaxConcurrent: 10},
		{Name: "rest", MaxConcurrent: 25},
	}}, 1000)
	in := RolloutInput{Rollout: activities.RolloutRef{Namespace: "fleet", Name: "big"}}
	runs := 0
	for ; runs < 20; runs++ {
		var count events
		env := newRolloutEnv(t, f, &count)
		env.ExecuteWorkflow(RolloutWorkflowType, in)
		require.True(t, env.IsWorkflowCompleted())
		t.Logf("run %d: %d activities, %d timers: at most %d events", runs, count.activities, count.timers, count.bound())
		require.Less(t, count.bound(), 10000, "run %d: history bound (%d activities, %d timers)", runs, count.activities, count.timers)
		err := env.GetWorkflowError()
		if err == nil {
			break
		}
		var can *workflow.ContinueAsNewError
		require.ErrorAs(t, err, &can)
		require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
		require.NotNil(t, in.State)
	}
	t.Logf("%d runs", runs+1)
	require.Greater(t, runs, 0, "a rollout this long continues as new at least once")
	require.Len(t, f.written, 1000)
	require.Len(t, f.order, 1000)
}
