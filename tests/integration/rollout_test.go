//go:build integration

package integration

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/metrics"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// readyClusters creates a sample Cluster per name (edit may change each before it is applied)
// and waits until each is reconciled.
func (e *env) readyClusters(names []string, edit func(i int, u *unstructured.Unstructured)) {
	e.t.Helper()
	for i, name := range names {
		e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
			if u.GetKind() == "Cluster" {
				u.SetName(name)
				if edit != nil {
					edit(i, u)
				}
			}
		})
	}
	for _, name := range names {
		e.waitReconciled(name, 90*time.Second)
	}
}

// createRollout creates a Rollout of the test's namespace with the given spec.
func (e *env) createRollout(name string, spec map[string]any) {
	e.t.Helper()
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": name, "namespace": e.ns}, "spec": spec}}
	_, err := kc.Dynamic.Resource(kube.Rollouts).Namespace(e.ns).Create(e.ctx, r, metav1.CreateOptions{})
	require.NoError(e.t, err)
}

// allToVersion is a Rollout spec: every Cluster of the namespace to version, in one stage.
func allToVersion(version string, stage map[string]any) map[string]any {
	stage["name"] = "all"
	return map[string]any{"clusters": map[string]any{"selector": map[string]any{}},
		"change": map[string]any{"version": version}, "stages": []any{stage}}
}

func (e *env) rolloutStatus(name string) rolloutv1.RolloutStatus {
	ro := &rolloutv1.Rollout{}
	e.getTyped(kube.Rollouts, name, ro)
	return ro.Status
}

// waitRolloutEvent waits for an Event of the type and reason on the Rollout whose message
// contains the text.
func (e *env) waitRolloutEvent(name, typ, reason, text string) {
	e.t.Helper()
	e.eventually(30*time.Second, fmt.Sprintf("a %s Event %s on Rollout %s", typ, reason, name), func() (bool, string) {
		evs, err := kc.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(e.ns).List(e.ctx,
			metav1.ListOptions{FieldSelector: "involvedObject.kind=Rollout,involvedObject.name=" + name})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range evs.Items {
			r, _, _ := unstructured.NestedString(ev.Object, "reason")
			t, _, _ := unstructured.NestedString(ev.Object, "type")
			msg, _, _ := unstructured.NestedString(ev.Object, "message")
			if r == reason && t == typ && strings.Contains(msg, text) {
				return true, ""
			}
			seen = append(seen, t+" "+r+": "+msg)
		}
		return false, fmt.Sprint(seen)
	})
}

// rolloutControl sends a control as `starter rollout` does: an Update, validated by the workflow.
func (e *env) rolloutControl(name string, c rollout.Control) error {
	c.By = "test"
	h, err := tc.UpdateWorkflow(e.ctx, client.UpdateWorkflowOptions{WorkflowID: workflows.RolloutWorkflowID(e.ns, name),
		UpdateName: workflows.UpdateRolloutControl, WaitForStage: client.WorkflowUpdateStageCompleted, Args: []any{c}})
	if err != nil {
		return err
	}
	return h.Get(e.ctx, nil)
}

// TestRolloutStagesApprovalsAndConcurrency: a Rollout moves four Clusters to a new version in two
// stages: the canary (by label) first, held after it until approved by annotation; the rest
// held before it until approved by the Update the CLI sends (a wrong token refused), then at
// most two at a time. Each Cluster's own workflow does the upgrade; the Rollout writes only
// spec.topology.version, as topoflow-rollout. The canary soaks after itself and after its stage.
// A Cluster created after the start is reported as a late match and left alone; the status and
// the metrics say when each stage ran.
func TestRolloutStagesApprovalsAndConcurrency(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second, Idle: 3 * time.Second}})
	e.applyFile(classFile)
	names := []string{"c0", "c1", "c2", "c3"}
	e.readyClusters(names, func(i int, u *unstructured.Unstructured) {
		if i == 0 {
			u.SetLabels(map[string]string{"ring": "canary"})
		}
	})

	e.createRollout("to-1-31-3", map[string]any{
		"clusters": map[string]any{"selector": map[string]any{}},
		"change":   map[string]any{"version": "v1.31.3"},
		"stages": []any{
			map[string]any{"name": "canary", "selector": map[string]any{"matchLabels": map[string]any{"ring": "canary"}}, "approveAfter": true,
				"soakAfterCluster": "4s", "soakAfterStage": "4s"},
			map[string]any{"name": "rest", "maxConcurrent": 2, "approveBefore": true},
		},
	})
	status := func() rolloutv1.RolloutStatus { return e.rolloutStatus("to-1-31-3") }
	e.eventually(2*time.Minute, "the canary done and its result waiting for approval", func() (bool, string) {
		st := status()
		return st.PendingApproval == "canary/after@gen-1", fmt.Sprintf("phase %s, approval %q, %+v", st.Phase, st.PendingApproval, st.Counts)
	})
	for _, name := range names {
		want := "v1.31.2"
		if name == "c0" {
			want = "v1.31.3"
		}
		assert.Equal(t, want, e.cluster(name).Spec.Topology.Version, "%s before the approval", name)
	}
	canary := e.cluster("c0")
	assert.Equal(t, e.ns+"/to-1-31-3", canary.Annotations[rollout.ClaimAnnotation])
	assert.True(t, slices.ContainsFunc(canary.ManagedFields, func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == rollout.FieldManager && strings.Contains(string(m.FieldsV1.Raw), `"f:version"`)
	}), "spec.topology.version is the rollout's field")

	// A Cluster that matches only now is reported, not added.
	e.readyClusters([]string{"late"}, nil)
	e.eventually(time.Minute, "the late Cluster reported", func() (bool, string) {
		st := status()
		return st.Counts.LateMatches == 1 && slices.Equal(st.LateMatches, []string{e.ns + "/late"}), fmt.Sprintf("%d %v", st.Counts.LateMatches, st.LateMatches)
	})
	assert.True(t, slices.ContainsFunc(status().Conditions, func(c metav1.Condition) bool {
		return c.Type == "LateMatches" && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, e.ns+"/late")
	}), "condition LateMatches names it: %+v", status().Conditions)

	// Approve the canary's result by annotation (GitOps).
	_, err := kc.Dynamic.Resource(kube.Rollouts).Namespace(e.ns).Patch(e.ctx, "to-1-31-3", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+rollout.ApproveAnnotation+`":"canary/after@gen-1"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	e.eventually(time.Minute, "the rest held before it, for its own approval", func() (bool, string) {
		st := status()
		return st.PendingApproval == "rest@gen-1", fmt.Sprintf("approval %q", st.PendingApproval)
	})

	// Approve the rest as `starter rollout approve` does: an Update, validated by the workflow.
	update := func(token string) error {
		return e.rolloutControl("to-1-31-3", rollout.Control{Action: "approve", Token: token})
	}
	require.ErrorContains(t, update("canary@gen-1"), "rest@gen-1", "an approval naming another gate is refused")
	require.NoError(t, update("rest@gen-1"))

	e.eventually(3*time.Minute, "the rollout completed", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s, %+v", st.Phase, st.Counts)
	})
	st := status()
	assert.Equal(t, rolloutv1.Counts{Total: 4, Done: 4, LateMatches: 1}, st.Counts)
	for _, name := range names {
		c := e.cluster(name)
		assert.Equal(t, "v1.31.3", c.Spec.Topology.Version, name)
	}
	assert.Equal(t, "v1.31.2", e.cluster("late").Spec.Topology.Version, "the late match is not changed")
	// When each stage ran: the canary's before the rest's, each in the metric too.
	require.Len(t, st.Stages, 2)
	canaryStage, restStage := st.Stages[0], st.Stages[1]
	assert.Equal(t, []string{"canary", "rest"}, []string{canaryStage.Name, restStage.Name})
	require.True(t, canaryStage.FinishedAt != nil && restStage.StartedAt != nil && restStage.FinishedAt != nil, "%+v", st.Stages)
	assert.False(t, restStage.StartedAt.Before(canaryStage.FinishedAt), "the rest started after the canary's stage (and its approval): %+v", st.Stages)
	// The soaks were honoured (times are whole seconds): the canary was done 4 s after it settled
	// (its TopologyReconciled turned True), and the stage soaked 4 s more before its approval gate.
	c0 := st.Clusters[slices.IndexFunc(st.Clusters, func(c rolloutv1.ClusterStatus) bool { return c.Name == "c0" })]
	settled := e.cluster("c0").Status.Conditions.Get("TopologyReconciled")
	require.NotNil(t, settled)
	assert.GreaterOrEqual(t, c0.FinishedAt.Sub(settled.LastTransitionTime.Time), 3*time.Second, "the canary's soak after it settled at %s: %+v", settled.LastTransitionTime, c0)
	assert.GreaterOrEqual(t, canaryStage.FinishedAt.Sub(c0.FinishedAt.Time), 3*time.Second, "the stage's soak: %+v, canary done %s", canaryStage, c0.FinishedAt)
	for _, stage := range st.Stages {
		assert.Equal(t, stage.FinishedAt.Sub(stage.StartedAt.Time).Seconds(),
			testutil.ToFloat64(metrics.RolloutStageSeconds.WithLabelValues(e.ns+"/to-1-31-3", stage.Name)), "stage %s's duration metric", stage.Name)
	}
	// Never more than two of the rest changing at once, and the limit used.
	most := 0
	for _, a := range st.Clusters {
		if a.Stage != "rest" {
			continue
		}
		n := 0
		for _, b := range st.Clusters {
			if b.Stage == "rest" && !b.StartedAt.After(a.StartedAt.Time) && a.StartedAt.Before(b.FinishedAt) {
				n++
			}
		}
		most = max(most, n)
	}
	assert.Equal(t, 2, most, "at most two of the rest at once: %+v", st.Clusters)
}

// TestRolloutWokenByItsClusters: the Rollout's poll and the starter's resync are longer than the
// test, so a rollout can complete only if each write reaches the Cluster's workflow and each
// Cluster's end wakes the Rollout (the starter signals the Rollout that claims a Cluster when the
// Cluster's topology is first reported reconciled for its generation). Two Clusters one at a
// time, twice: the second Rollout rewrites a field the first one owns (not an echo of the
// Cluster's own workflow).
func TestRolloutWokenByItsClusters(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Hour, Idle: time.Hour}})
	e.applyFile(classFile)
	e.readyClusters([]string{"c0", "c1"}, nil)
	for _, version := range []string{"v1.31.3", "v1.31.4"} {
		name := "to-" + strings.ReplaceAll(version, ".", "-")
		e.createRollout(name, allToVersion(version, map[string]any{"maxConcurrent": 1}))
		e.eventually(2*time.Minute, name+" completed", func() (bool, string) {
			st := e.rolloutStatus(name)
			return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s, %+v", st.Phase, st.Counts)
		})
		st := e.rolloutStatus(name)
		assert.Equal(t, rolloutv1.Counts{Total: 2, Done: 2}, st.Counts, name)
		require.Len(t, st.Clusters, 2)
		first, second := st.Clusters[0], st.Clusters[1]
		assert.False(t, second.StartedAt.Before(first.FinishedAt), "%s one at a time: %+v", name, st.Clusters)
		for _, c := range []string{"c0", "c1"} {
			assert.Equal(t, version, e.cluster(c).Spec.Topology.Version, c)
		}
	}
}

// TestRolloutHaltsOnHandChangeAndResumes: a Cluster whose version another manager changes
// after the rollout wrote it fails (the rollout never writes it back) and, with a failure budget
// of zero, halts the rollout before the next Cluster; an operator pauses, skips the failed
// Cluster, resumes, and the rest complete.
func TestRolloutHaltsOnHandChangeAndResumes(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second}, sim: provider.Options{RolloutDuration: 6 * time.Second}})
	e.applyFile(classFile)
	names := []string{"c0", "c1", "c2"}
	e.readyClusters(names, nil)
	e.createRollout("r", allToVersion("v1.31.3", map[string]any{}))
	e.eventually(time.Minute, "c0 written by the rollout", func() (bool, string) {
		v := e.cluster("c0").Spec.Topology.Version
		return v == "v1.31.3", v
	})
	// A hand change while c0 upgrades.
	_, err := kc.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(e.ns).Patch(e.ctx, "c0", types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.31.4"}}}`), metav1.PatchOptions{FieldManager: "someone-else"})
	require.NoError(t, err)
	status := func() rolloutv1.RolloutStatus { return e.rolloutStatus("r") }
	e.eventually(time.Minute, "the rollout halted", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhaseHalted, fmt.Sprintf("phase %s %+v", st.Phase, st.Counts)
	})
	st := status()
	assert.Equal(t, int32(1), st.Counts.Failed)
	assert.Contains(t, st.Clusters[0].Message, "another field manager")
	assert.Equal(t, "v1.31.4", e.cluster("c0").Spec.Topology.Version, "the hand change is not fought")
	e.waitRolloutEvent("r", "Warning", "ClusterFailed", "")
	for _, name := range names[1:] {
		assert.Equal(t, "v1.31.2", e.cluster(name).Spec.Topology.Version, "%s not started past the failure budget", name)
	}

	control := func(c rollout.Control) error { return e.rolloutControl("r", c) }
	require.NoError(t, control(rollout.Control{Action: "pause"}))
	require.ErrorContains(t, control(rollout.Control{Action: "skip", Cluster: "elsewhere/x"}), "not selected")
	require.NoError(t, control(rollout.Control{Action: "skip", Cluster: e.ns + "/c0"}))
	require.NoError(t, control(rollout.Control{Action: "resume"}))
	e.eventually(2*time.Minute, "the rollout completed", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s %+v", st.Phase, st.Counts)
	})
	assert.Equal(t, rolloutv1.Counts{Total: 3, Done: 2, Skipped: 1}, status().Counts)
	for _, name := range names[1:] {
		assert.Equal(t, "v1.31.3", e.cluster(name).Spec.Topology.Version, name)
	}
	// The status says Completed a moment before the workflow has closed: wait for that, then a
	// control is refused because the workflow has ended.
	require.NoError(t, tc.GetWorkflow(e.ctx, workflows.RolloutWorkflowID(e.ns, "r"), "").Get(e.ctx, nil))
	require.ErrorContains(t, control(rollout.Control{Action: "abort"}), "completed", "a finished rollout takes no controls (its workflow has ended)")
}

// TestRolloutWaitsForWindow: a Cluster whose maintenance window (its own annotation, overriding
// the Rollout's) opens at the next full minute waits, reported as OutsideWindow, unchanged; the
// change starts when the window opens.
func TestRolloutWaitsForWindow(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second}})
	e.applyFile(classFile)
	opens := time.Now().UTC().Truncate(time.Minute).Add(time.Minute)
	if time.Until(opens) < 15*time.Second {
		opens = opens.Add(time.Minute) // time to see it wait
	}
	window := fmt.Sprintf("* %s-%s UTC", opens.Format("15:04"), opens.Add(time.Hour).Format("15:04"))
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetAnnotations(map[string]string{rollout.WindowsAnnotation: window})
		}
	})
	e.waitReconciled("demo", 90*time.Second)
	spec := allToVersion("v1.31.3", map[string]any{})
	spec["maintenanceWindows"] = []any{"Mon 00:00-00:01 UTC"} // overridden by the Cluster's
	e.createRollout("r", spec)
	status := func() rolloutv1.RolloutStatus { return e.rolloutStatus("r") }
	e.eventually(time.Minute, "the Cluster waiting for its window", func() (bool, string) {
		st := status()
		if len(st.Clusters) == 0 {
			return false, st.Phase
		}
		return st.Clusters[0].State == string(rollout.WaitingForWindow), st.Clusters[0].State
	})
	st := status()
	require.True(t, slices.ContainsFunc(st.Conditions, func(c metav1.Condition) bool {
		return c.Type == "OutsideWindow" && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, opens.Format(time.RFC3339))
	}), "OutsideWindow names the opening: %+v", st.Conditions)
	require.Equal(t, "v1.31.2", e.cluster("demo").Spec.Topology.Version, "not changed outside its window")

	e.eventually(3*time.Minute, "the rollout completed after the window opened", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s %+v", st.Phase, st.Counts)
	})
	st = status()
	assert.False(t, st.Clusters[0].StartedAt.Time.Before(opens), "started %s, before the window opened at %s", st.Clusters[0].StartedAt, opens)
	assert.Equal(t, "v1.31.3", e.cluster("demo").Spec.Topology.Version)
}

// TestRolloutConflictYoungerWaits: of two Rollouts over the same Cluster, the younger waits
// (its condition names the older) until the older ends (aborted here, by annotation); then it
// runs.
func TestRolloutConflictYoungerWaits(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second}})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	create := func(name, version string, approveBefore bool) {
		e.createRollout(name, allToVersion(version, map[string]any{"approveBefore": approveBefore}))
	}
	status := e.rolloutStatus
	create("older", "v1.31.3", true)
	e.eventually(time.Minute, "the older waiting for its approval", func() (bool, string) {
		st := status("older")
		return st.PendingApproval == "all@gen-1", st.Phase
	})
	// Created in the same second, the order falls to the names: "older" first either way.
	create("younger", "v1.31.4", false)
	e.eventually(time.Minute, "the younger waiting for the older", func() (bool, string) {
		st := status("younger")
		for _, c := range st.Conditions {
			if c.Type == "Progressing" && strings.Contains(c.Message, "Rollout "+e.ns+"/older") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s %+v", st.Phase, st.Conditions)
	})
	require.Equal(t, "v1.31.2", e.cluster("demo").Spec.Topology.Version)
	e.waitRolloutEvent("younger", "Normal", "Waiting", "Rollout "+e.ns+"/older")

	_, err := kc.Dynamic.Resource(kube.Rollouts).Namespace(e.ns).Patch(e.ctx, "older", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+rollout.AbortAnnotation+`":"true"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	e.eventually(time.Minute, "the older aborted", func() (bool, string) {
		st := status("older")
		return st.Phase == rollout.PhaseAborted, st.Phase
	})
	e.eventually(2*time.Minute, "the younger completed", func() (bool, string) {
		st := status("younger")
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("%s %+v", st.Phase, st.Counts)
	})
	assert.Equal(t, "v1.31.4", e.cluster("demo").Spec.Topology.Version)
}

// TestRolloutPauseAcrossWorkerKill: a paused rollout stays paused across a worker crash (the
// Cluster in flight finishes, no new one starts), and resumes to the end on the next worker.
func TestRolloutPauseAcrossWorkerKill(t *testing.T) {
	bin := workerBinary(t)
	e := newEnv(t, envOptions{noWorker: true, rolloutTiming: workflows.RolloutTiming{Poll: time.Second}, sim: provider.Options{RolloutDuration: 3 * time.Second}})
	first := e.startWorkerProcess(bin)
	e.applyFile(classFile)
	names := []string{"c0", "c1", "c2"}
	e.readyClusters(names, nil)
	e.createRollout("r", allToVersion("v1.31.3", map[string]any{}))
	e.eventually(time.Minute, "c0 written", func() (bool, string) {
		v := e.cluster("c0").Spec.Topology.Version
		return v == "v1.31.3", v
	})
	control := func(action string) { require.NoError(t, e.rolloutControl("r", rollout.Control{Action: action})) }
	control("pause")
	require.NoError(t, first.Process.Kill())
	_ = first.Wait()
	e.startWorkerProcess(bin)

	status := func() rolloutv1.RolloutStatus { return e.rolloutStatus("r") }
	// The fact to wait for: the new worker has followed c0 to done, still paused.
	e.eventually(2*time.Minute, "c0 done while paused, on the new worker", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhasePaused && st.Counts.Done == 1, fmt.Sprintf("%s %+v", st.Phase, st.Counts)
	})
	for _, name := range names[1:] {
		assert.Equal(t, "v1.31.2", e.cluster(name).Spec.Topology.Version, "%s started while paused", name)
	}
	control("resume")
	e.eventually(2*time.Minute, "the rollout completed", func() (bool, string) {
		st := status()
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("%s %+v", st.Phase, st.Counts)
	})
	for _, name := range names {
		assert.Equal(t, "v1.31.3", e.cluster(name).Spec.Topology.Version, name)
	}
}

// TestRolloutByStrategy: a Rollout naming a RolloutStrategy runs the strategy's stages; with
// topoflow's webhooks registered, a Rollout naming a strategy that does not exist, and a strategy
// with an unreadable window, are refused naming the field.
func TestRolloutByStrategy(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second}})
	e.serveAdmission()
	e.applyFile(classFile)
	e.readyClusters([]string{"c0", "c1", "c2"}, nil)
	strategy := func(windows ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "topoflow.dev/v1alpha1", "kind": "RolloutStrategy",
			"metadata": map[string]any{"name": "standard", "namespace": e.ns},
			"spec": map[string]any{"stages": []any{
				map[string]any{"name": "first", "count": int64(1)},
				map[string]any{"name": "others", "maxConcurrent": int64(2)},
			}, "maintenanceWindows": windows}}}
	}
	byStrategy := map[string]any{"clusters": map[string]any{"selector": map[string]any{}},
		"change": map[string]any{"version": "v1.31.3"}, "strategyRef": map[string]any{"name": "standard"}}
	create := func(u *unstructured.Unstructured, gvr schema.GroupVersionResource) error {
		_, err := kc.Dynamic.Resource(gvr).Namespace(e.ns).Create(e.ctx, u, metav1.CreateOptions{})
		return err
	}
	rolloutObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "r", "namespace": e.ns}, "spec": byStrategy}}
	var err error
	e.eventually(20*time.Second, "a Rollout naming a missing strategy refused", func() (bool, string) {
		err = create(rolloutObj.DeepCopy(), kube.Rollouts)
		return err != nil, fmt.Sprint(err)
	})
	assert.ErrorContains(t, err, "spec.strategyRef.name")
	assert.ErrorContains(t, create(strategy("Sat 02:00"), kube.RolloutStrategies), "spec.maintenanceWindows[0]")

	require.NoError(t, create(strategy("* 00:00-00:00 UTC"), kube.RolloutStrategies))
	require.NoError(t, create(rolloutObj.DeepCopy(), kube.Rollouts))
	e.eventually(3*time.Minute, "the rollout completed", func() (bool, string) {
		st := e.rolloutStatus("r")
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s %+v", st.Phase, st.Counts)
	})
	st := e.rolloutStatus("r")
	stages := map[string]int{}
	for _, c := range st.Clusters {
		stages[c.Stage]++
	}
	assert.Equal(t, map[string]int{"first": 1, "others": 2}, stages, "the strategy's stages took the Clusters")
	for _, name := range []string{"c0", "c1", "c2"} {
		assert.Equal(t, "v1.31.3", e.cluster(name).Spec.Topology.Version, name)
	}
}

// TestRolloutRebaseThenVariable: a class rebase onto a compatible class (a copy of the sample
// class under a new name), then a variable change, over the same two Clusters. Both Rollouts
// write as topoflow-rollout; the second names only the variable, and the Clusters keep the class
// the first wrote (server-side apply would remove a field its manager applied before and no
// longer names, and admission would refuse a Cluster without its class).
func TestRolloutRebaseThenVariable(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second, Idle: 3 * time.Second}})
	e.applyFile(classFile)
	sample, err := kc.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(e.ns).Get(e.ctx, "quick-start", metav1.GetOptions{})
	require.NoError(t, err)
	spec, _, _ := unstructured.NestedMap(sample.Object, "spec")
	_, err = kc.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(e.ns).Create(e.ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sample.GetAPIVersion(), "kind": "ClusterClass", "metadata": map[string]any{"name": "quick-start-v2", "namespace": e.ns},
		"spec": spec}}, metav1.CreateOptions{})
	require.NoError(t, err)
	names := []string{"c0", "c1"}
	e.readyClusters(names, nil)

	for _, step := range []struct {
		name   string
		change map[string]any
	}{
		{"rebase", map[string]any{"class": "quick-start-v2"}},
		{"region", map[string]any{"topology": map[string]any{"variables": []any{map[string]any{"name": "region", "value": "sim-east-1"}}}}},
	} {
		e.createRollout(step.name, map[string]any{"clusters": map[string]any{"selector": map[string]any{}}, "change": step.change,
			"stages": []any{map[string]any{"name": "first", "count": int64(1)}, map[string]any{"name": "rest"}}})
		e.eventually(2*time.Minute, step.name+" completed", func() (bool, string) {
			st := e.rolloutStatus(step.name)
			why := ""
			if c := meta.FindStatusCondition(st.Conditions, "Progressing"); c != nil && c.Reason == "NotStarted" {
				why = c.Message
			}
			return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s, %+v %s", st.Phase, st.Counts, why)
		})
		assert.Equal(t, rolloutv1.Counts{Total: 2, Done: 2}, e.rolloutStatus(step.name).Counts, step.name)
	}
	for _, name := range names {
		c := e.cluster(name)
		assert.Equal(t, "quick-start-v2", c.Spec.Topology.Class, "%s keeps the class the rebase wrote", name)
		assert.Equal(t, "v1.31.2", c.Spec.Topology.Version, name)
		region := ""
		for _, v := range c.Spec.Topology.Variables {
			if v.Name == "region" {
				region = string(v.Value.Raw)
			}
		}
		assert.Equal(t, `"sim-east-1"`, region, name)
	}
}
