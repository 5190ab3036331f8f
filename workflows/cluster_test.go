package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/upgrade"
)

var ref = activities.ClusterRef{Namespace: "ns", Name: "c1"}

// fakeWorld scripts what the activities see, and records what the workflow asked of them. Its
// upgrades are decided by the real model (upgrade.Compute and the ledger the workflow sends).
type fakeWorld struct {
	mu     sync.Mutex
	gone   bool
	paused bool
	// deleting: the Cluster has a deletion timestamp.
	deleting   bool
	deleteStep func(activities.DeleteInput) *activities.DeleteResult
	released   bool
	// notCreated: the Cluster has no topology objects yet (creation waits for BeforeClusterCreate).
	notCreated bool
	// hookAnswers are popped per call; an empty queue answers success.
	hookAnswers map[string][]activities.HookOutcome
	// hookTimes records the test clock at each hook call.
	hookTimes map[string][]time.Time
	// pending records every pending-hooks annotation written.
	pending    [][]string
	missing    string // non-empty: ApplyTopology fails with MissingDependency
	infraReady bool
	cpInit     bool
	// counters is the digest of the replica counters the providers report (Provisioning.Counters).
	counters string
	calls    []string
	statuses []activities.StatusInput
	// workerPasses counts the passes that applied the workers.
	workerPasses int
	// upgrade, when set, is the Cluster's upgrade state, moved by each pass as the decision allows.
	upgrade *upgradeSim
	// ledgers records the ledger each pass was given.
	ledgers []upgrade.Ledger
	// hookCalls records every hook call, and statusesAtHook how many statuses were written before
	// each.
	hookCalls      []activities.HookCall
	statusesAtHook []int
	// skip is what every pass reports as the hooks that pass without a call.
	skip []string
	// okToDelete: the deleting Cluster carries the ok-to-delete annotation.
	okToDelete bool
	// failLocal fails that many passes run inside the workflow task; localPasses and
	// regularPasses count the passes run inside it and as activities of their own.
	failLocal, localPasses, regularPasses int
	// slowCalls makes the n-th call of the pass's activity (1-based, local or not) take that long
	// on the workflow's clock; applyCalls counts the calls.
	slowCalls  map[int]time.Duration
	applyCalls int
}

// upgradeSim is a Cluster whose control plane and pools move to the versions each decision gives
// them; a rollout is seen in progress by exactly one later pass, then it has finished.
type upgradeSim struct {
	in       upgrade.Input
	finishes bool
	// rolls is how many later passes see a rollout in progress before it finishes (0: it has
	// finished by the next pass); rolled counts them.
	rolls, rolled int
}

// decide runs the real decision on the simulated state with the ledger a pass carries (the hooks
// in skip pass without a call, as the pass lets them), moves what it allows, and says what the
// pass reports.
func (s *upgradeSim) decide(l upgrade.Ledger, skip []string) (*upgrade.Summary, *upgrade.Due, []upgrade.Due) {
	if s.finishes && s.rolled < s.rolls {
		s.rolled++
	} else if s.finishes {
		s.rolled = 0
		s.in.ControlPlane.StatusVersion, s.in.ControlPlane.Stable = s.in.ControlPlane.SpecVersion, true
		for i := range s.in.Pools {
			s.in.Pools[i].RollingOut = false
		}
		s.finishes = false
	}
	dec, err := l.Decide(s.in, skip)
	if err != nil {
		panic(err)
	}
	res, held, v, due := dec.Result, dec.HeldBy, dec.HeldVersion, dec.Owed
	summary := upgrade.Summarize(s.in, res, held, v, "", l.Finishing(s.in.Target, res))
	if cp := &s.in.ControlPlane; res.ControlPlane != cp.SpecVersion {
		cp.SpecVersion, cp.Stable, s.finishes = res.ControlPlane, false, true
	}
	for i := range s.in.Pools {
		if p := &s.in.Pools[i]; res.Pools[p.Key()] != p.Version {
			p.Version, p.RollingOut, s.finishes = res.Pools[p.Key()], true, true
		}
	}
	return summary, due, dec.Passed
}

// upgradeTo is a Cluster at v1.31.2 with one pool, asked for target along the class's versions.
func upgradeTo(target string) *upgradeSim {
	return &upgradeSim{in: upgrade.Input{Target: target, KubernetesVersions: []string{"v1.31.2", "v1.32.4", "v1.33.1", "v1.34.0"},
		ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true},
		Pools:        []upgrade.Pool{{Name: "md-0", Exists: true, Version: "v1.31.2"}}}}
}

func (w *fakeWorld) apply(ctx context.Context, in activities.ApplyInput) (*activities.ApplyResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if activity.GetInfo(ctx).IsLocalActivity {
		w.localPasses++
		if w.failLocal > 0 {
			w.failLocal--
			return nil, errors.New("the API server is away")
		}
	} else {
		w.regularPasses++
	}
	w.ledgers = append(w.ledgers, in.Ledger)
	res, err := w.pass(in)
	if res != nil && res.Skip != activities.SkipGone {
		res.SkipHooks = w.skip
		res.Provisioning = w.provisioning()
	}
	if res != nil && res.Skip == "" {
		w.workerPasses++
		w.calls = append(w.calls, "pass: workers applied")
	} else {
		w.calls = append(w.calls, "pass")
	}
	return res, err
}

func (w *fakeWorld) pass(in activities.ApplyInput) (*activities.ApplyResult, error) {
	// The Cluster as the gate reads it: references set once its topology was created.
	hubCluster := &hubv1.Cluster{}
	if !w.notCreated {
		hubCluster.Spec.ControlPlaneRef = hubv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "SimControlPlane", Name: "cp"}
	}
	gate := in.Ledger.CreateGate(hubCluster, !slices.Contains(w.skip, hooksv1.BeforeClusterCreate))
	switch {
	case w.gone:
		return &activities.ApplyResult{Skip: activities.SkipGone}, nil
	case w.paused:
		return &activities.ApplyResult{Skip: activities.SkipPaused, HasInfrastructure: true}, nil
	case gate == upgrade.CreateHeld:
		return &activities.ApplyResult{Skip: activities.SkipCreateHeld}, nil
	case w.deleting:
		return &activities.ApplyResult{Skip: activities.SkipDeleting, OkToDelete: w.okToDelete, HasInfrastructure: true}, nil
	case w.missing != "":
		return nil, temporal.NewNonRetryableApplicationError(w.missing, activities.ErrMissingDependency, errors.New(w.missing))
	}
	res := &activities.ApplyResult{Generation: 2, Class: "quick-start", Version: "v1.31.2", HasInfrastructure: true}
	ledger := in.Ledger
	if gate == upgrade.CreateUnhandled {
		// No extension handles BeforeClusterCreate: the pass creates, marking the hooks owed first.
		res.Passed = []upgrade.Due{{Hook: hooksv1.BeforeClusterCreate}}
		ledger.Record(res.Passed[0])
	}
	w.notCreated = false
	if w.upgrade != nil {
		res.Version = w.upgrade.in.Target
		var passed []upgrade.Due
		res.Upgrade, res.Owed, passed = w.upgrade.decide(ledger, w.skip)
		res.Passed = append(res.Passed, passed...)
	}
	// The pass writes the annotation the hooks it let through leave (activities.applyPass).
	if res.PendingHooks = in.Ledger.PendingAfter(res.Passed); res.PendingHooks != nil {
		w.pending = append(w.pending, res.PendingHooks)
	}
	return res, nil
}

func (w *fakeWorld) provisioning() *activities.Provisioning {
	p := &activities.Provisioning{ClusterGone: w.gone, RefsSet: w.missing == "", InfrastructureReady: w.infraReady, ControlPlaneInitialized: w.cpInit, ControlPlaneReady: w.cpInit,
		Counters: w.counters}
	if w.infraReady {
		p.Endpoint = &activities.Endpoint{Host: "h", Port: 6443}
	}
	return p
}

func (w *fakeWorld) observe(_ context.Context, in activities.ObserveInput) (*activities.Provisioning, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, "observe")
	return w.provisioning(), nil
}

func (w *fakeWorld) setStatus(_ context.Context, in activities.StatusInput) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, "status "+in.Phase)
	w.statuses = append(w.statuses, in)
	return true, nil
}

func (w *fakeWorld) set(f func(*fakeWorld)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w)
}

func (w *fakeWorld) lastStatus() activities.StatusInput {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.statuses[len(w.statuses)-1]
}

func topologyCondition(in activities.StatusInput) status.Condition {
	for _, c := range in.Conditions {
		if c.Type == status.TopologyReconciled {
			return c
		}
	}
	return status.Condition{}
}

func newEnv(t *testing.T, w *fakeWorld) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(ClusterTopology, workflow.RegisterOptions{Name: ClusterWorkflowType})
	env.RegisterWorkflowWithOptions(ClusterUpgrade, workflow.RegisterOptions{Name: ClusterUpgradeWorkflowType})
	env.RegisterActivity(&activities.Activities{})
	env.OnActivity(acts.ApplyTopology, mock.Anything, mock.Anything).Return(w.apply).AfterFn(func() time.Duration {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.applyCalls++
		return w.slowCalls[w.applyCalls]
	})
	env.OnActivity(acts.ObserveProvisioning, mock.Anything, mock.Anything).Return(w.observe)
	env.OnActivity(acts.SetClusterStatus, mock.Anything, mock.Anything).Return(w.setStatus)
	env.OnActivity(acts.DeleteTopologyStep, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.DeleteInput) (*activities.DeleteResult, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, "delete "+string(in.Step))
		if w.deleteStep != nil {
			return w.deleteStep(in), nil
		}
		return &activities.DeleteResult{}, nil
	})
	env.OnActivity(acts.SetPendingHooks, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.PendingHooksInput) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.pending = append(w.pending, orNil(in.Hooks))
		return nil
	})
	env.OnActivity(acts.CallLifecycleHook, mock.Anything, mock.Anything).Return(func(_ context.Context, in activities.HookCall) (*activities.HookOutcome, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = append(w.calls, "hook "+in.Hook)
		w.hookCalls = append(w.hookCalls, in)
		w.statusesAtHook = append(w.statusesAtHook, len(w.statuses))
		if w.hookTimes == nil {
			w.hookTimes = map[string][]time.Time{}
		}
		w.hookTimes[in.Hook] = append(w.hookTimes[in.Hook], env.Now())
		if q := w.hookAnswers[in.Hook]; len(q) > 0 {
			w.hookAnswers[in.Hook] = q[1:]
			return &q[0], nil
		}
		return &activities.HookOutcome{}, nil
	})
	env.OnActivity(acts.RemoveFinalizer, mock.Anything, mock.Anything).Return(func(context.Context, activities.ClusterRef) error {
		w.set(func(w *fakeWorld) { w.released = true })
		return nil
	})
	return env
}

// callsWith are the calls that start with one of the prefixes, in order.
func callsWith(calls []string, prefixes ...string) []string {
	var out []string
	for _, c := range calls {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(c, p) }) {
			out = append(out, c)
		}
	}
	return out
}

func signal(env *testsuite.TestWorkflowEnvironment, after time.Duration, f func()) {
	env.RegisterDelayedCallback(func() {
		f()
		env.SignalWorkflow(SignalClusterEvent, ClusterEvent{Source: "test"})
	}, after)
}

// runUntilGone runs a Cluster's workflow on env until the Cluster is gone, after the given time,
// and requires that it ended without an error.
func runUntilGone(t *testing.T, env *testsuite.TestWorkflowEnvironment, w *fakeWorld, after time.Duration, in ClusterInput) {
	t.Helper()
	env.RegisterDelayedCallback(func() { w.set(func(w *fakeWorld) { w.gone = true }) }, after)
	env.ExecuteWorkflow(ClusterWorkflowType, in)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}

func queryState(t *testing.T, env *testsuite.TestWorkflowEnvironment) State {
	t.Helper()
	v, err := env.QueryWorkflow(QueryState)
	require.NoError(t, err)
	var s State
	require.NoError(t, v.Get(&s))
	return s
}

// TestCreateAppliesWorkersWithControlPlane follows the create steps as Cluster API v1.14 takes
// them: the pools are applied in the pass that creates the control plane (the bootstrap provider
// holds their machines), the topology is reconciled at once, and the workflow re-checks the
// providers sooner until the infrastructure is ready and the control plane initialized.
func TestCreateAppliesWorkersWithControlPlane(t *testing.T) {
	w := &fakeWorld{}
	env := newEnv(t, w)
	var midState State
	signal(env, time.Second, func() {
		midState = queryState(t, env)
		assert.Equal(t, 1, w.workerPasses, "the workers with the control plane")
		st := w.lastStatus()
		assert.Equal(t, clusterv1.ClusterPhaseProvisioning, st.Phase)
		assert.True(t, topologyCondition(st).Status, "the topology is reconciled while the providers work")
		w.set(func(w *fakeWorld) { w.infraReady, w.cpInit = true, true })
	})
	signal(env, 2*time.Second, func() {
		st := w.lastStatus()
		assert.Equal(t, clusterv1.ClusterPhaseProvisioned, st.Phase)
		assert.True(t, topologyCondition(st).Status)
		assert.EqualValues(t, 2, st.ObservedGeneration)
		require.NotNil(t, st.Endpoint, "endpoint handed to the Cluster")
		assert.Equal(t, "settled", queryState(t, env).Step)
		w.set(func(w *fakeWorld) { w.gone = true })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	assert.Equal(t, "wait for providers", midState.Step)
	assert.Contains(t, midState.Waiting, "infrastructure")
	assert.Equal(t, 2, w.workerPasses)
	assert.Equal(t, []string{
		"pass: workers applied", "status Provisioning", // pass 1: everything applied, the providers work
		"pass: workers applied", "status Provisioned", // pass 2: the providers are done
		"pass", // pass 3: the Cluster is gone
	}, w.calls)
}

// TestMissingDependencyBlocksThenRecovers: a missing ClusterClass is reported on the Cluster and
// the workflow keeps running; when the class appears (an event), it converges.
func TestMissingDependencyBlocksThenRecovers(t *testing.T) {
	w := &fakeWorld{missing: "ClusterClass ns/quick-start (spec.topology.class) not found"}
	env := newEnv(t, w)
	signal(env, time.Second, func() {
		st := w.lastStatus()
		assert.Equal(t, clusterv1.ClusterPhasePending, st.Phase)
		cond := topologyCondition(st)
		assert.False(t, cond.Status)
		assert.Equal(t, status.ReasonReconcileFailed, cond.Reason)
		assert.Equal(t, status.SeverityError, cond.Severity)
		assert.Equal(t, "ClusterClass ns/quick-start (spec.topology.class) not found", cond.Message)
		s := queryState(t, env)
		assert.Equal(t, "blocked", s.Step)
		assert.Contains(t, s.LastError, "not found")
		w.set(func(w *fakeWorld) { w.missing, w.infraReady, w.cpInit = "", true, true })
	})
	signal(env, 2*time.Second, func() {
		assert.True(t, topologyCondition(w.lastStatus()).Status)
		assert.Empty(t, queryState(t, env).LastError)
		w.set(func(w *fakeWorld) { w.gone = true })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 1, w.workerPasses)
}

// TestResyncWithoutEvents: with no watch events at all (a missed event), the wait resync still
// re-checks and the Cluster converges.
func TestResyncWithoutEvents(t *testing.T) {
	w := &fakeWorld{}
	env := newEnv(t, w)
	env.RegisterDelayedCallback(func() { w.set(func(w *fakeWorld) { w.infraReady, w.cpInit = true, true }) }, 10*time.Second)
	runUntilGone(t, env, w, 5*time.Minute, ClusterInput{Cluster: ref, Timing: Timing{WaitResync: 30 * time.Second, Resync: 10 * time.Minute}})
	assert.Equal(t, 2, w.workerPasses, "the create, then the wait resync")
	assert.Equal(t, clusterv1.ClusterPhaseProvisioned, w.lastStatus().Phase, "the wait resync saw the providers ready")
}

// TestSettledReplacesWaitResync: the wait resync a Cluster got while its providers worked does
// not outlive the wait: once an event shows it settled, the next re-check is the settled resync,
// not a pass with nothing to do at the end of the shorter wait.
func TestSettledReplacesWaitResync(t *testing.T) {
	w := &fakeWorld{}
	env := newEnv(t, w)
	signal(env, 10*time.Second, func() { w.set(func(w *fakeWorld) { w.infraReady, w.cpInit = true, true }) })
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		assert.Equal(t, 2, w.workerPasses, "the create and the event's pass; no re-check at the 30 s wait resync")
	}, 9*time.Minute)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		assert.Equal(t, 3, w.workerPasses, "the settled resync re-checked")
		w.gone = true
	}, 10*time.Minute+20*time.Second)
	signal(env, 11*time.Minute, func() {})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Timing: Timing{WaitResync: 30 * time.Second, Resync: 10 * time.Minute}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
}

// TestContinueAsNew: a run ends with continue-as-new after its pass budget, keeping history small.
func TestContinueAsNew(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true}
	env := newEnv(t, w)
	for i := 1; i <= 3; i++ {
		signal(env, time.Duration(i)*time.Second, func() {})
	}
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Timing: Timing{PassesBeforeContinueAsNew: 3}})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	assert.Equal(t, 3, w.workerPasses)
}

// TestPausedHoldsEverything: while paused nothing is applied and the Cluster says so; lifting the
// pause (an event) resumes.
func TestPausedHoldsEverything(t *testing.T) {
	w := &fakeWorld{paused: true, infraReady: true, cpInit: true}
	env := newEnv(t, w)
	signal(env, time.Second, func() {
		cond := topologyCondition(w.lastStatus())
		assert.False(t, cond.Status)
		assert.Equal(t, status.ReasonPaused, cond.Reason)
		assert.Equal(t, "paused", queryState(t, env).Step)
		assert.Equal(t, 0, w.workerPasses)
		w.set(func(w *fakeWorld) { w.paused = false })
	})
	signal(env, 2*time.Second, func() {
		assert.True(t, topologyCondition(w.lastStatus()).Status)
		w.set(func(w *fakeWorld) { w.gone = true })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 1, w.workerPasses)
}

// TestDeletingTearsDownInOrder: a deleting Cluster goes to the teardown (the workflow does not
// simply end, which would leave the Cluster stuck on topoflow's finalizer): BeforeClusterDelete,
// then every step in order, then the finalizer is released.
func TestDeletingTearsDownInOrder(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, deleting: true}
	env := newEnv(t, w)
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, []string{"pass", "hook BeforeClusterDelete",
		"delete Workers", "delete ControlPlane", "delete Infrastructure", "delete Templates"}, w.calls, "every step, in order")
	assert.True(t, w.released, "finalizer released after the last step")
}

// TestTeardownWaitsForEachStep: a step with objects left makes the workflow wait (an event or the
// resync) before going on, and later steps do not start early.
func TestTeardownWaitsForEachStep(t *testing.T) {
	cpLeft := true
	w := &fakeWorld{infraReady: true, cpInit: true, deleting: true}
	w.deleteStep = func(in activities.DeleteInput) *activities.DeleteResult {
		if in.Step == activities.DeleteControlPlane && cpLeft {
			return &activities.DeleteResult{Remaining: []string{"SimControlPlane cp"}}
		}
		return &activities.DeleteResult{}
	}
	env := newEnv(t, w)
	signal(env, time.Second, func() {
		w.mu.Lock()
		assert.Equal(t, []string{"pass", "hook BeforeClusterDelete", "delete Workers", "delete ControlPlane", "status Deleting"}, w.calls,
			"waiting on the control plane; nothing later started")
		w.mu.Unlock()
		st := w.lastStatus()
		assert.Equal(t, clusterv1.ClusterPhaseDeleting, st.Phase)
		assert.Contains(t, topologyCondition(st).Message, "SimControlPlane cp")
		assert.Contains(t, queryState(t, env).Waiting, "deletion of SimControlPlane cp")
		assert.False(t, w.released)
		w.set(func(*fakeWorld) { cpLeft = false })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, w.released)
	assert.Equal(t, []string{"delete Workers", "delete ControlPlane", "delete Infrastructure", "delete Templates"}, w.calls[len(w.calls)-4:])
}

func retry(seconds int32, msg string) activities.HookOutcome {
	var o activities.HookOutcome
	o.RetryAfterSeconds, o.Message = seconds, msg
	return o
}

// TestBeforeClusterCreateBlocks: a blocking BeforeClusterCreate holds creation for the
// retryAfterSeconds it asks (a durable timer), the Cluster says which hook blocks, and once the
// hook passes the Cluster is created and AfterControlPlaneInitialized is called exactly once.
func TestBeforeClusterCreateBlocks(t *testing.T) {
	w := &fakeWorld{notCreated: true, infraReady: true, cpInit: true,
		hookAnswers: map[string][]activities.HookOutcome{hooksv1.BeforeClusterCreate: {retry(30, "quota check"), retry(20, "")}}}
	env := newEnv(t, w)
	env.RegisterDelayedCallback(func() {
		cond := topologyCondition(w.lastStatus())
		assert.Equal(t, status.ReasonClusterCreating, cond.Reason)
		assert.Equal(t, "hook BeforeClusterCreate asked to retry in 30s: quota check", cond.Message)
		assert.Equal(t, 0, w.workerPasses, "nothing created while the hook blocks")
	}, 10*time.Second)
	runUntilGone(t, env, w, 5*time.Minute, ClusterInput{Cluster: ref})

	assert.Equal(t, [][]string{nil, {hooksv1.AfterControlPlaneInitialized}, nil}, w.pending,
		"the pending-hooks annotation: empty, AfterControlPlaneInitialized owed once creation starts, then cleared")
	times := w.hookTimes[hooksv1.BeforeClusterCreate]
	require.Len(t, times, 3, "blocked twice, then passed")
	assert.Equal(t, 30*time.Second, times[1].Sub(times[0]).Round(time.Second), "waited the 30s the hook asked")
	assert.Equal(t, 20*time.Second, times[2].Sub(times[1]).Round(time.Second))
	assert.Len(t, w.hookTimes[hooksv1.AfterControlPlaneInitialized], 1, "AfterControlPlaneInitialized called once")
	assert.Equal(t, 1, w.workerPasses)
}

// TestAfterControlPlaneInitializedOnceAcrossContinueAsNew: the memory that the hook was called
// travels across continue-as-new, so the hook is never called again.
func TestAfterControlPlaneInitializedOnceAcrossContinueAsNew(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true}
	env := newEnv(t, w)
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Timing: Timing{PassesBeforeContinueAsNew: 1},
		Ledger: upgrade.Ledger{CreatePassed: true, InitializedOwed: true}})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	assert.Contains(t, w.calls, "hook AfterControlPlaneInitialized")
	var next ClusterInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	assert.False(t, next.Ledger.InitializedOwed, "carried: already called")
	assert.True(t, next.Ledger.CreatePassed)
}

// TestSkippedHooksPassWithoutACall: a hook the apply reports as passing without a call (no
// extension handles it, and its call has nothing else to do) passes without its activity, logged
// as passed with no handler, and the lifecycle goes on as if it had been called (Cluster API calls
// no handler and passes); any other hook is still called.
func TestSkippedHooksPassWithoutACall(t *testing.T) {
	for _, tt := range []struct {
		name   string
		skip   []string
		called []string
		// first is the first pass: one that creates at once when BeforeClusterCreate needs no
		// call (Cluster API goes on in the same reconcile), else one held for the hook.
		first string
	}{
		{"no extension (BeforeClusterDelete announces the teardown)", []string{hooksv1.BeforeClusterCreate, hooksv1.AfterControlPlaneInitialized},
			[]string{"hook " + hooksv1.BeforeClusterDelete}, "pass: workers applied"},
		{"only AfterControlPlaneInitialized called", []string{hooksv1.BeforeClusterCreate, hooksv1.BeforeClusterDelete},
			[]string{"hook " + hooksv1.AfterControlPlaneInitialized}, "pass: workers applied"},
		{"nothing known (an extension not yet discovered)", nil,
			[]string{"hook " + hooksv1.BeforeClusterCreate, "hook " + hooksv1.AfterControlPlaneInitialized, "hook " + hooksv1.BeforeClusterDelete}, "pass"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &fakeWorld{notCreated: true, infraReady: true, cpInit: true, skip: tt.skip}
			env := newEnv(t, w)
			var created State
			signal(env, time.Minute, func() {
				created = queryState(t, env)
				w.set(func(w *fakeWorld) { w.deleting = true })
			})
			env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())

			assert.Equal(t, tt.called, callsWith(w.calls, "hook "))
			assert.Equal(t, tt.first, w.calls[0], "calls: %v", w.calls)
			assert.Equal(t, "settled", created.Step, "created: %+v", created)
			assert.Equal(t, 1, w.workerPasses, "the workers were applied")
			assert.True(t, w.released, "the teardown ran")
			assert.Equal(t, [][]string{{hooksv1.AfterControlPlaneInitialized}, nil}, w.pending,
				"the pending-hooks annotation: AfterControlPlaneInitialized owed from the create until it passed")
			var log []string
			for _, h := range queryState(t, env).Hooks {
				log = append(log, h.Hook+": "+h.Outcome)
			}
			assert.Equal(t, []string{
				"BeforeClusterCreate: passed (no handler registered)",
				"AfterControlPlaneInitialized: passed (no handler registered)",
				"BeforeClusterDelete: passed (no handler registered)",
			}, log)
		})
	}
}

// TestOkToDeleteSkipsBeforeClusterDelete: a run that finds the deleting Cluster marked
// ok-to-delete (an earlier run's hook passed and released the Cluster, and Cluster API's finalizer
// still holds it) does not call BeforeClusterDelete again; the teardown goes on. The real-providers
// test once saw the hook pass three times, once per run started by the Cluster's later events.
func TestOkToDeleteSkipsBeforeClusterDelete(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, deleting: true, okToDelete: true}
	env := newEnv(t, w)
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.NotContains(t, w.calls, "hook BeforeClusterDelete")
	assert.Contains(t, w.calls, "delete Workers")
	assert.True(t, w.released)
}

// TestBeforeClusterDeleteBlocks: nothing is deleted while BeforeClusterDelete blocks; it is not
// asked again once it passed.
func TestBeforeClusterDeleteBlocks(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, deleting: true,
		hookAnswers: map[string][]activities.HookOutcome{hooksv1.BeforeClusterDelete: {retry(15, "backing up")}}}
	env := newEnv(t, w)
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		assert.NotContains(t, w.calls, "delete Workers")
		w.mu.Unlock()
		assert.Equal(t, "hook BeforeClusterDelete asked to retry in 15s: backing up", topologyCondition(w.lastStatus()).Message)
	}, 10*time.Second)
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	n := 0
	for _, c := range w.calls {
		if c == "hook BeforeClusterDelete" {
			n++
		}
	}
	assert.Equal(t, 2, n)
	assert.True(t, w.released)
}

// hookSeq lists the hook calls as "Hook(version)" (the version the call is about).
func hookSeq(calls []activities.HookCall) []string {
	var seq []string
	for _, c := range calls {
		seq = append(seq, c.Hook+"("+hookVersion(c)+")")
	}
	return seq
}

// TestUpgradeHookSequence runs a chained upgrade through the workflows against a simulated
// Cluster whose versions move only as the real decision (upgrade.Compute and the ledger the
// workflow sends) allows: every upgrade hook is called once, in Cluster API's order, with its
// versions; the after-hooks come once the parts have settled; the ledger and the pending-hooks
// annotation follow; the Cluster's workflow takes the upgrade's hook log back.
func TestUpgradeHookSequence(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, upgrade: upgradeTo("v1.33.1")}
	w.upgrade.rolls = 1 // each rollout is seen in progress by one pass
	env := newEnv(t, w)
	runUntilGone(t, env, w, 3*time.Hour, ClusterInput{Cluster: ref, Ledger: upgrade.Ledger{CreatePassed: true}})

	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.33.1)",
		"BeforeControlPlaneUpgrade(v1.32.4)", "AfterControlPlaneUpgrade(v1.32.4)",
		"BeforeControlPlaneUpgrade(v1.33.1)", "AfterControlPlaneUpgrade(v1.33.1)",
		"BeforeWorkersUpgrade(v1.33.1)", "AfterWorkersUpgrade(v1.33.1)",
		"AfterClusterUpgrade(v1.33.1)",
	}, hookSeq(w.hookCalls))
	first := w.hookCalls[0]
	assert.Equal(t, "v1.31.2", first.FromKubernetesVersion)
	assert.Equal(t, []string{"v1.32.4", "v1.33.1"}, first.ControlPlaneUpgrades)
	assert.Equal(t, []string{"v1.33.1"}, first.WorkersUpgrades)
	assert.Equal(t, "v1.31.2", w.hookCalls[1].FromKubernetesVersion, "BeforeControlPlaneUpgrade names the step's from")
	sim := w.upgrade.in
	assert.Equal(t, "v1.33.1", sim.ControlPlane.StatusVersion)
	assert.Equal(t, "v1.33.1", sim.Pools[0].Version)
	assert.Equal(t, upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.33.1", ControlPlaneApproved: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1",
		WorkersApproved: "v1.33.1", WorkersAcknowledged: "v1.33.1", Completed: "v1.33.1"}, w.ledgers[len(w.ledgers)-1], "the last pass got the whole ledger back from the upgrade")
	assert.Equal(t, [][]string{{hooksv1.AfterControlPlaneUpgrade, hooksv1.AfterClusterUpgrade}, {hooksv1.AfterClusterUpgrade}, nil}, w.pending,
		"pending-hooks annotation follows the upgrade")

	var log []string
	for _, h := range queryState(t, env).Hooks {
		log = append(log, h.Hook+"("+h.Version+"): "+h.Outcome)
	}
	assert.Len(t, log, 8, "the Cluster's workflow took the upgrade's hook log back")
	assert.True(t, strings.HasPrefix(log[7], "AfterClusterUpgrade(v1.33.1): passed"), log[7])
	assert.Nil(t, queryState(t, env).Upgrade, "no upgrade in progress any more")
	assert.Equal(t, "v1.31.2 -> v1.33.1: completed", queryState(t, env).LastUpgrade)

	// TopologyReconciled is never True between BeforeClusterUpgrade and AfterClusterUpgrade, also
	// while the pools roll out with every version at the target (Cluster API: ClusterUpgrading).
	from, to := w.statusesAtHook[0], w.statusesAtHook[len(w.statusesAtHook)-1]
	rolling := false
	for _, st := range w.statuses[from:to] {
		cond := topologyCondition(st)
		assert.False(t, cond.Status, "TopologyReconciled True mid-upgrade: %s", cond.Message)
		rolling = rolling || strings.Contains(cond.Message, "Worker pools upgrading: md-0")
	}
	assert.True(t, rolling, "a status said the pool rolls out")
	assert.True(t, topologyCondition(w.lastStatus()).Status, "reconciled after the upgrade")

	// The status reports the upgrade plan as it shrinks (Cluster API v1.14's
	// status.controlPlane.upgradePlan and status.workers.upgradePlan), and none once it is over.
	var plans []string
	for _, st := range w.statuses {
		if st.UpgradePlan == nil {
			continue
		}
		p := fmt.Sprintf("cp=%v workers=%v", st.UpgradePlan.ControlPlane, st.UpgradePlan.Workers)
		if len(plans) == 0 || plans[len(plans)-1] != p {
			plans = append(plans, p)
		}
	}
	assert.Equal(t, []string{
		"cp=[v1.32.4 v1.33.1] workers=[v1.33.1]",
		"cp=[v1.33.1] workers=[v1.33.1]",
		"cp=[] workers=[v1.33.1]",
		"cp=[] workers=[]",
	}, plans)
	assert.Equal(t, &status.UpgradePlan{}, w.lastStatus().UpgradePlan, "no plan once the upgrade is over")
}

// TestUnhandledUpgradeHooksPassInThePass: upgrade hooks no extension handles pass inside the pass
// that owes them (upgrade.Ledger.Decide), as Cluster API's reconcile goes on when a hook has no
// handler: the same chained upgrade as TestUpgradeHookSequence calls only the hooks that announce
// (BeforeClusterUpgrade, AfterClusterUpgrade), logs the others as passed without a handler in
// Cluster API's order, keeps the pending-hooks annotation in step, and takes one pass fewer for
// every hook let through (none goes again just to record a hook).
func TestUnhandledUpgradeHooksPassInThePass(t *testing.T) {
	run := func(skip []string) (*fakeWorld, []string, int) {
		w := &fakeWorld{infraReady: true, cpInit: true, upgrade: upgradeTo("v1.33.1"), skip: skip}
		w.upgrade.rolls = 1
		env := newEnv(t, w)
		runUntilGone(t, env, w, 3*time.Hour, ClusterInput{Cluster: ref, Ledger: upgrade.Ledger{CreatePassed: true}})
		var log []string
		for _, h := range queryState(t, env).Hooks {
			log = append(log, h.Hook+"("+h.Version+"): "+h.Outcome)
		}
		upgrading := 0 // passes between BeforeClusterUpgrade and AfterClusterUpgrade
		for _, l := range w.ledgers {
			if l.ApprovedTarget == "v1.33.1" && l.Completed == "" {
				upgrading++
			}
		}
		return w, log, upgrading
	}
	handled, _, handledPasses := run(nil)
	skip := []string{hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade}
	w, log, passes := run(skip)

	assert.Equal(t, []string{"BeforeClusterUpgrade(v1.33.1)", "AfterClusterUpgrade(v1.33.1)"}, hookSeq(w.hookCalls))
	assert.Equal(t, []string{
		"BeforeClusterUpgrade(v1.33.1): passed (no handler registered)", // called: the fake answers without handlers
		"BeforeControlPlaneUpgrade(v1.32.4): passed (no handler registered)",
		"AfterControlPlaneUpgrade(v1.32.4): passed (no handler registered)",
		"BeforeControlPlaneUpgrade(v1.33.1): passed (no handler registered)",
		"AfterControlPlaneUpgrade(v1.33.1): passed (no handler registered)",
		"BeforeWorkersUpgrade(v1.33.1): passed (no handler registered)",
		"AfterWorkersUpgrade(v1.33.1): passed (no handler registered)",
		"AfterClusterUpgrade(v1.33.1): passed (no handler registered)",
	}, log)
	assert.Equal(t, handled.pending, w.pending, "the pending-hooks annotation follows the upgrade alike")
	assert.Equal(t, handled.upgrade.in, w.upgrade.in, "the Cluster ends where it does with every hook handled")
	assert.Equal(t, handledPasses-6, passes, "no pass goes again for a hook let through (%d with every hook handled)", handledPasses)
}

// TestUpgradeSuperseded: a new target set while BeforeClusterUpgrade blocks the first ends the
// first upgrade as superseded and starts the second, whose BeforeClusterUpgrade is asked for the
// new target; no hook is called for the old one after that.
func TestUpgradeSuperseded(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, upgrade: upgradeTo("v1.33.1"),
		hookAnswers: map[string][]activities.HookOutcome{hooksv1.BeforeClusterUpgrade: {retry(600, "change freeze")}}}
	env := newEnv(t, w)
	signal(env, time.Minute, func() { w.set(func(w *fakeWorld) { w.upgrade.in.Target = "v1.34.0" }) })
	runUntilGone(t, env, w, 3*time.Hour, ClusterInput{Cluster: ref, Ledger: upgrade.Ledger{CreatePassed: true}})
	seq := hookSeq(w.hookCalls)
	require.GreaterOrEqual(t, len(seq), 2)
	assert.Equal(t, []string{"BeforeClusterUpgrade(v1.33.1)", "BeforeClusterUpgrade(v1.34.0)"}, seq[:2])
	assert.Equal(t, "AfterClusterUpgrade(v1.34.0)", seq[len(seq)-1])
	assert.NotContains(t, seq[1:], "BeforeClusterUpgrade(v1.33.1)", "the superseded target is not asked again")
	assert.NotContains(t, seq, "AfterClusterUpgrade(v1.33.1)", "nor completed")
	assert.Equal(t, "v1.34.0", w.upgrade.in.ControlPlane.StatusVersion)
}

// TestUpgradeStateAndContinueAsNew: an upgrade held by a blocking hook shows its plan, the hook
// that holds it and every call in its state; after its pass budget it continues as new, carrying
// the memory, plan and hook log (so a hook that blocks for days cannot grow one history forever).
func TestUpgradeStateAndContinueAsNew(t *testing.T) {
	plan := []string{"v1.32.4", "v1.33.1"}
	w := blockedUpgrade(3)
	w.hookAnswers[hooksv1.BeforeClusterUpgrade] = []activities.HookOutcome{retry(30, "change freeze"), retry(30, "change freeze"), retry(30, "change freeze")}
	env := newEnv(t, w)
	env.RegisterDelayedCallback(func() {
		st := queryState(t, env)
		require.NotNil(t, st.Upgrade)
		assert.Equal(t, "topology/ns/c1/upgrade/v1.33.1", st.Upgrade.Workflow)
		assert.Equal(t, "[v1.31.2] -> v1.32.4 -> v1.33.1", st.Upgrade.PlanLine())
		assert.Equal(t, hooksv1.BeforeClusterUpgrade, st.Upgrade.HeldBy)
		assert.Equal(t, "hook BeforeClusterUpgrade", st.Step)
		assert.Equal(t, "hook BeforeClusterUpgrade asked to retry in 30s: change freeze", st.Waiting)
		require.Len(t, st.Hooks, 2, "called at the start and after the first 30s")
		assert.Equal(t, HookRecord{At: st.Hooks[0].At, Hook: hooksv1.BeforeClusterUpgrade, Version: "v1.33.1", Outcome: "retry in 30s: change freeze"}, st.Hooks[0])
		assert.Equal(t, 30*time.Second, st.Hooks[1].At.Sub(st.Hooks[0].At))
	}, 45*time.Second)
	in := UpgradeInput{Cluster: ref, From: "v1.31.2", To: "v1.33.1", Plan: plan, PlannedBy: "plan.ext", Timing: Timing{PassesBeforeContinueAsNew: 3},
		Ledger: upgrade.Ledger{CreatePassed: true}}
	env.ExecuteWorkflow(ClusterUpgradeWorkflowType, in)
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	assert.Equal(t, ClusterUpgradeWorkflowType, can.WorkflowType.Name)
	var next UpgradeInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	assert.Equal(t, plan, next.Plan)
	assert.Equal(t, "plan.ext", next.PlannedBy)
	assert.Equal(t, in.Ledger, next.Ledger, "nothing approved yet")
	require.Len(t, next.Hooks, 3, "the hook log travels to the next run")
	assert.Equal(t, "retry in 30s: change freeze", next.Hooks[2].Outcome)
	assert.Equal(t, 3, len(w.hookTimes[hooksv1.BeforeClusterUpgrade]))
}

// TestHookLogIsBounded: the log keeps only the newest records.
func TestHookLogIsBounded(t *testing.T) {
	var log []HookRecord
	for i := 0; i < maxHookRecords+5; i++ {
		log = appendHooks(log, HookRecord{Hook: fmt.Sprint(i)})
	}
	require.Len(t, log, maxHookRecords)
	assert.Equal(t, "5", log[0].Hook)
	assert.Equal(t, fmt.Sprint(maxHookRecords+4), log[maxHookRecords-1].Hook)
}

func TestPlanLine(t *testing.T) {
	for _, tc := range []struct {
		u    UpgradeState
		want string
	}{
		{UpgradeState{From: "v1.31.2", Plan: []string{"v1.32.4", "v1.33.1"}}, "[v1.31.2] -> v1.32.4 -> v1.33.1"},
		{UpgradeState{From: "v1.31.2", Plan: []string{"v1.32.4", "v1.33.1"}, ControlPlane: "v1.32.4"}, "v1.31.2 -> [v1.32.4] -> v1.33.1"},
		{UpgradeState{From: "v1.31.2", Plan: []string{"v1.32.0"}, ControlPlane: "v1.32.0"}, "v1.31.2 -> [v1.32.0]"},
		{UpgradeState{From: "v1.31.2"}, "[v1.31.2]"},
	} {
		assert.Equal(t, tc.want, tc.u.PlanLine())
	}
}

// blockedUpgrade is a world where an upgrade to v1.33.1 waits for BeforeClusterUpgrade.
func blockedUpgrade(answers int) *fakeWorld {
	w := &fakeWorld{infraReady: true, cpInit: true, upgrade: upgradeTo("v1.33.1"), hookAnswers: map[string][]activities.HookOutcome{}}
	for i := 0; i < answers; i++ {
		w.hookAnswers[hooksv1.BeforeClusterUpgrade] = append(w.hookAnswers[hooksv1.BeforeClusterUpgrade], retry(600, "change freeze"))
	}
	return w
}

// TestClusterWorkflowHandsOverDuringLongUpgrade: while an upgrade runs, the Cluster's workflow
// forwards events to it; after its budget it continues as new, handing the running upgrade to
// the next run instead of growing its history (or ending the upgrade).
func TestClusterWorkflowHandsOverDuringLongUpgrade(t *testing.T) {
	w := blockedUpgrade(10)
	env := newEnv(t, w)
	for i := 1; i <= 4; i++ {
		signal(env, time.Duration(i)*time.Minute, func() {})
	}
	// The abandoned upgrade runs on in the test environment until the Cluster is gone.
	env.RegisterDelayedCallback(func() { w.set(func(w *fakeWorld) { w.gone = true }) }, 5*time.Minute)
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Timing: Timing{PassesBeforeContinueAsNew: 4}, Ledger: upgrade.Ledger{CreatePassed: true}})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	var next ClusterInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
	require.NotNil(t, next.Upgrade, "the running upgrade is handed to the next run")
	assert.Equal(t, "topology/ns/c1/upgrade/v1.33.1", next.Upgrade.Workflow)
	assert.Equal(t, []string{"v1.32.4", "v1.33.1"}, next.Upgrade.Plan)
	assert.Equal(t, upgrade.Ledger{CreatePassed: true}, next.Ledger, "the upgrade holds the hook answers, not this run")
	w.mu.Lock()
	defer w.mu.Unlock()
	assert.GreaterOrEqual(t, len(w.hookTimes[hooksv1.BeforeClusterUpgrade]), 3, "the upgrade got the forwarded events and asked again")
}

// TestAdoptedUpgradeEndsBySignal: a run that took over a running upgrade forwards an event to it
// at once, waits for its end signal without a pass of its own, then takes its memory and hook log.
func TestAdoptedUpgradeEndsBySignal(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true}
	env := newEnv(t, w)
	id := "topology/ns/c1/upgrade/v1.33.1"
	forwarded := 0
	env.OnSignalExternalWorkflow(mock.Anything, id, "", SignalClusterEvent, mock.Anything).Return(func(string, string, string, string, interface{}) error {
		forwarded++
		return nil
	})
	done := upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.33.1", ControlPlaneAcknowledged: "v1.33.1", Completed: "v1.33.1"}
	env.RegisterDelayedCallback(func() {
		w.mu.Lock()
		assert.Empty(t, w.calls, "no pass of its own while the upgrade runs")
		w.mu.Unlock()
		st := queryState(t, env)
		require.NotNil(t, st.Upgrade)
		assert.Equal(t, id, st.Upgrade.Workflow)
		assert.Equal(t, 1, forwarded, "one event forwarded on taking over")
		env.SignalWorkflow(SignalUpgradeEnded, UpgradeOutput{Workflow: "topology/ns/c1/upgrade/v1.31.2", Ended: "completed"})
		env.SignalWorkflow(SignalUpgradeEnded, UpgradeOutput{Workflow: id, Ledger: done, Ended: "completed",
			Hooks: []HookRecord{{Hook: hooksv1.AfterClusterUpgrade, Version: "v1.33.1", Outcome: "passed"}}})
	}, 30*time.Second)
	signal(env, time.Minute, func() {
		st := queryState(t, env)
		assert.Nil(t, st.Upgrade)
		require.Len(t, st.Hooks, 2)
		assert.Equal(t, hooksv1.AfterClusterUpgrade, st.Hooks[1].Hook, "the upgrade's log follows this run's own")
		w.set(func(w *fakeWorld) { w.gone = true })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Ledger: upgrade.Ledger{CreatePassed: true},
		Hooks:   []HookRecord{{Hook: hooksv1.BeforeClusterCreate, Outcome: "passed"}},
		Upgrade: &UpgradeState{Workflow: id, From: "v1.31.2", To: "v1.33.1"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, "pass: workers applied", w.calls[0], "passes resumed after the upgrade ended")
	assert.Empty(t, w.pending, "the annotation is the upgrade's: not rewritten from this run's memory")
}

// TestAdoptedUpgradeGone: when the upgrade handed over has ended without an answer (terminated),
// the run says so and goes back to its passes.
func TestAdoptedUpgradeGone(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true}
	env := newEnv(t, w)
	tries := 0
	env.OnSignalExternalWorkflow(mock.Anything, mock.Anything, "", SignalClusterEvent, mock.Anything).Return(func(string, string, string, string, interface{}) error {
		tries++
		return errors.New("workflow execution already completed")
	})
	signal(env, time.Second, func() {
		assert.Nil(t, queryState(t, env).Upgrade, "no upgrade in progress any more")
		w.set(func(w *fakeWorld) { w.gone = true })
	})
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref, Ledger: upgrade.Ledger{CreatePassed: true},
		Upgrade: &UpgradeState{Workflow: "topology/ns/c1/upgrade/v1.33.1", From: "v1.31.2", To: "v1.33.1"}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	require.NotEmpty(t, w.calls)
	assert.Equal(t, "pass", w.calls[0], "back to its own passes")
	assert.Equal(t, 1, tries, "one forward found the upgrade gone")
}

// TestUpgradeStateObserve: what the apply reports replaces what was shown; a report of no upgrade
// in progress means every part has the target.
func TestUpgradeStateObserve(t *testing.T) {
	u := &UpgradeState{Workflow: "w", From: "v1.31.2", To: "v1.33.1", Plan: []string{"v1.32.4", "v1.33.1"}, PlannedBy: "plan.ext"}
	u.observe(&activities.UpgradeSummary{Reached: "v1.32.4", ControlPlane: "v1.33.1", HeldBy: hooksv1.BeforeControlPlaneUpgrade, Pending: []string{"md-0"}})
	assert.Equal(t, "v1.31.2 -> [v1.32.4] -> v1.33.1", u.PlanLine())
	assert.Equal(t, hooksv1.BeforeControlPlaneUpgrade, u.HeldBy)
	u.observe(nil)
	assert.Equal(t, UpgradeState{Workflow: "w", From: "v1.31.2", To: "v1.33.1", Plan: []string{"v1.32.4", "v1.33.1"}, PlannedBy: "plan.ext",
		ControlPlane: "v1.33.1", ControlPlaneTarget: "v1.33.1"}, *u, "the plan and who planned it stay")
	assert.Equal(t, "v1.31.2 -> v1.32.4 -> [v1.33.1]", u.PlanLine())
}

// TestHookFailureBackoff: a blocking hook that fails (its extension down) is called again after a
// short backoff, 2s doubling, not at the 60s wait resync; once it answers it is not called sooner.
func TestHookFailureBackoff(t *testing.T) {
	var failed activities.HookOutcome
	failed.Failed, failed.Message = []string{"create-handler.ext"}, "connection refused"
	failed.Failure = `failed to call extension handlers for hook "BeforeClusterCreate.hooks.runtime.cluster.x-k8s.io": ...`
	w := &fakeWorld{notCreated: true, infraReady: true, cpInit: true,
		hookAnswers: map[string][]activities.HookOutcome{hooksv1.BeforeClusterCreate: {failed, failed, failed, failed}}}
	env := newEnv(t, w)
	runUntilGone(t, env, w, 5*time.Minute, ClusterInput{Cluster: ref})
	times := w.hookTimes[hooksv1.BeforeClusterCreate]
	require.Len(t, times, 5, "failed four times, then passed")
	var gaps []time.Duration
	for i := 1; i < len(times); i++ {
		gaps = append(gaps, times[i].Sub(times[i-1]).Round(time.Second))
	}
	assert.Equal(t, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, gaps)
	assert.Equal(t, 1, w.workerPasses, "created once the hook passed")
	cond := topologyCondition(w.statuses[0])
	assert.Equal(t, status.ReasonReconcileFailed, cond.Reason, "a failed hook is a failed reconcile (Cluster API v1.14)")
	assert.Equal(t, failed.Failure, cond.Message, "with the extension's error")
}

// TestAfterControlPlaneInitializedFailure: a failing AfterControlPlaneInitialized does not hold
// the topology, but the Cluster is not reported reconciled while it fails (Cluster API's
// reconcile fails on it) and it is called again after the failure backoff, not at the resync.
func TestAfterControlPlaneInitializedFailure(t *testing.T) {
	var failed activities.HookOutcome
	failed.Failed, failed.Message = []string{"init-handler.ext"}, "inventory down"
	failed.Failure = `failed to call extension handlers for hook "AfterControlPlaneInitialized.hooks.runtime.cluster.x-k8s.io": ...`
	w := &fakeWorld{notCreated: true, infraReady: true, cpInit: true,
		hookAnswers: map[string][]activities.HookOutcome{hooksv1.AfterControlPlaneInitialized: {failed, failed}}}
	env := newEnv(t, w)
	runUntilGone(t, env, w, 5*time.Minute, ClusterInput{Cluster: ref})
	times := w.hookTimes[hooksv1.AfterControlPlaneInitialized]
	require.Len(t, times, 3, "failed twice, then passed, then never called again")
	assert.Equal(t, 2*time.Second, times[1].Sub(times[0]).Round(time.Second))
	assert.Equal(t, 4*time.Second, times[2].Sub(times[1]).Round(time.Second))
	var reasons []string
	for _, st := range w.statuses {
		if c := topologyCondition(st); c.Status {
			reasons = append(reasons, "True")
		} else {
			reasons = append(reasons, c.Reason)
			assert.Equal(t, "error reconciling the Cluster topology: "+failed.Failure, c.Message)
		}
	}
	assert.Equal(t, []string{status.ReasonReconcileFailed, "True"}, slices.Compact(reasons))
}

func TestHookRetry(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 4: 16 * time.Second, 5: 30 * time.Second, 50: 30 * time.Second} {
		assert.Equal(t, want, hookRetry(n, time.Minute), "failure %d", n)
	}
	assert.Equal(t, 10*time.Second, hookRetry(5, 10*time.Second), "never past the wait resync")
}

// orNil treats an empty list as none: a local activity's input arrives as the workflow built it,
// a regular activity's after a JSON round trip.
func orNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestSlowPassRunsAsActivity: a pass that fails inside the workflow task for a reason a retry may
// fix (a timeout, the API server away) is run again as an activity of its own, which retries.
func TestSlowPassRunsAsActivity(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, failLocal: 1}
	env := newEnv(t, w)
	signal(env, time.Minute, func() { w.set(func(w *fakeWorld) { w.gone = true }) })
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, 1, w.regularPasses, "the first pass ran again as an activity of its own")
	assert.Equal(t, 2, w.localPasses, "later passes ran inside the workflow task")
	assert.Equal(t, 1, w.workerPasses, "the first pass applied the workers")
	assert.True(t, topologyCondition(w.lastStatus()).Status)
}

// TestOvertakenPassLeavesTheStatusToTheNext: a pass during which events came goes again at once,
// and that pass writes the status from fresher reads; only once in a row, so a Cluster whose
// events never stop still has its status written.
func TestOvertakenPassLeavesTheStatusToTheNext(t *testing.T) {
	// Each pass's first try inside the workflow task fails, so it runs as an activity of its own,
	// which takes 10s; an event comes during each of the first two.
	w := &fakeWorld{infraReady: true, cpInit: true, failLocal: 2, slowCalls: map[int]time.Duration{2: 10 * time.Second, 4: 10 * time.Second}}
	env := newEnv(t, w)
	signal(env, 5*time.Second, func() {})
	signal(env, 15*time.Second, func() {})
	signal(env, time.Minute, func() { w.set(func(w *fakeWorld) { w.gone = true }) })
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	var seq []string
	for _, c := range callsWith(w.calls, "pass", "status ") {
		seq = append(seq, strings.TrimSuffix(strings.Fields(c)[0], ":"))
	}
	require.GreaterOrEqual(t, len(seq), 4, "calls: %v", w.calls)
	assert.Equal(t, []string{"pass", "pass", "status", "pass"}, seq[:4],
		"the first pass, overtaken, writes no status; the second, overtaken too, does (calls: %v)", w.calls)
	assert.True(t, topologyCondition(w.lastStatus()).Status)
}

// TestCountersAloneRewriteTheStatus: a pass whose status would be the same as the last one written
// writes it again when only the replica counters moved (Provisioning.Counters: the activity
// computes them from its own reads), and not while they stay.
func TestCountersAloneRewriteTheStatus(t *testing.T) {
	w := &fakeWorld{infraReady: true, cpInit: true, counters: "cp=1,w=1"}
	env := newEnv(t, w)
	statuses := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.statuses)
	}
	var afterCreate, afterSame, afterScale int
	env.RegisterDelayedCallback(func() { afterCreate = statuses() }, 5*time.Second)
	signal(env, 10*time.Second, func() {})
	env.RegisterDelayedCallback(func() { afterSame = statuses() }, 15*time.Second)
	signal(env, 20*time.Second, func() { w.set(func(w *fakeWorld) { w.counters = "cp=3,w=1" }) })
	env.RegisterDelayedCallback(func() { afterScale = statuses() }, 25*time.Second)
	signal(env, 30*time.Second, func() { w.set(func(w *fakeWorld) { w.gone = true }) })
	env.ExecuteWorkflow(ClusterWorkflowType, ClusterInput{Cluster: ref})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())

	require.Positive(t, afterCreate, "calls: %v", w.calls)
	assert.Equal(t, afterCreate, afterSame, "nothing moved: no write (calls: %v)", w.calls)
	assert.Equal(t, afterSame+1, afterScale, "only the counters moved: written again (calls: %v)", w.calls)
}

// TestTaskClock: the steps of one workflow task share its budget, counted on the workflow's clock
// (which moves inside a task only as local activities complete); a new task, seen as a clock
// reading other than where the last step ended, or a step run as an activity, starts the count
// again.
func TestTaskClock(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var c taskClock
	assert.Equal(t, taskBudget, c.left(at(0), taskBudget), "the first step has the whole task")
	c.stepped(at(2400), false) // a slow pass inside the task
	assert.Equal(t, 1600*time.Millisecond, c.left(at(2400), taskBudget), "the next step of the same task")
	c.stepped(at(3900), false)
	assert.Less(t, c.left(at(3900), taskBudget), minStep, "no time left: the next step runs as an activity")
	c.stepped(at(5000), true)
	assert.Equal(t, taskBudget, c.left(at(5000), taskBudget), "after an activity, a new task")
	c.stepped(at(5100), false)
	assert.Equal(t, taskBudget, c.left(at(9000), taskBudget), "a timer or signal later: a new task")
}
