//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/workflows"
)

// workerTemplates are the infrastructure templates of a Cluster's MachineDeployments, by pool,
// with each MachineDeployment's name and generation.
func (e *env) workerTemplates(cluster string) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for pool, md := range e.machineDeployments(cluster) {
		out[pool] = fmt.Sprintf("%s@%d:%s", md.Name, md.Generation, md.Spec.Template.Spec.InfrastructureRef.Name)
	}
	return out
}

// waitRolloutCompleted waits for a Rollout to complete, saying why it did not start when it does not.
func (e *env) waitRolloutCompleted(name string) rolloutv1.RolloutStatus {
	e.t.Helper()
	e.eventually(3*time.Minute, name+" completed", func() (bool, string) {
		st := e.rolloutStatus(name)
		why := ""
		if c := meta.FindStatusCondition(st.Conditions, "Progressing"); c != nil {
			why = c.Reason + ": " + c.Message
		}
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s, %+v %s", st.Phase, st.Counts, why)
	})
	return e.rolloutStatus(name)
}

// revisionRollout is a Rollout spec moving every Cluster of the namespace to a class revision in
// two stages: one Cluster, then the rest.
func revisionRollout(classRevision string) map[string]any {
	return map[string]any{"clusters": map[string]any{"selector": map[string]any{}},
		"change": map[string]any{"classRevision": classRevision},
		"stages": []any{map[string]any{"name": "first", "count": int64(1)}, map[string]any{"name": "rest"}}}
}

// TestClassRevisionRollout (#38): Clusters of a class that opted in to revisions are computed from
// the revision they are pinned to, so a worker template edited in place (recorded as revision 2)
// changes none of them. A Rollout with classRevision "latest" moves them to revision 2 stage by
// stage (the pin, then the applied annotation; the MachineDeployments' infrastructure templates
// rotate, the MachineDeployments stay); a Rollout to revision 1 rolls them back; a later Rollout
// of a variable keeps the pin (the rollout's manager re-applies what it owns); a revision that
// does not exist does not start.
func TestClassRevisionRollout(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second, Idle: 3 * time.Second}})
	const class = "quick-start"
	// Revision 1 sets the worker template's disk: a rollback then changes a value, which rotates
	// the template (removing a field is not a spec change to topoflow's template comparison,
	// desired.Compare, so it would be applied in place).
	withDisk := func(value string) func(*unstructured.Unstructured) {
		return func(u *unstructured.Unstructured) {
			if u.GetName() == "quick-start-default-worker-machine" {
				require.NoError(t, unstructured.SetNestedField(u.Object, value, "spec", "template", "spec", "disk"))
			}
		}
	}
	e.applyFile(classFile, withDisk("hdd"), func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			u.SetAnnotations(map[string]string{revision.EnabledAnnotation: revision.Enabled})
		}
	})
	e.waitRevision(revision.Name(class, 1), true, 0) // recorded by topoflow (TestClassRevisions)
	names := []string{"c0", "c1", "c2"}
	e.readyClusters(names, func(_ int, u *unstructured.Unstructured) {
		u.SetAnnotations(map[string]string{revision.PinAnnotation: revision.Name(class, 1)})
	})
	waitApplied := func(rev string) {
		for _, name := range names {
			e.eventually(60*time.Second, name+" applied from "+rev, func() (bool, string) {
				a := e.cluster(name).Annotations
				return a[revision.PinAnnotation] == rev && a[revision.AppliedAnnotation] == rev, fmt.Sprint(a)
			})
		}
	}
	waitApplied(revision.Name(class, 1))
	before := map[string]map[string]string{}
	for _, name := range names {
		before[name] = e.workerTemplates(name)
	}

	// The edit planned first (`starter plan --class`, the edited template in the file): the class
	// has revisions, so the plan is what moving each Cluster to the edit does: its workers roll.
	edited := e.classDocument()
	file := e.writeClassFile(edited, map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimMachineTemplate",
		"metadata": map[string]any{"name": "quick-start-default-worker-machine"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"instanceType": "sim.medium", "disk": "ssd"}}},
	})
	var classPlan fleetPlanOutput
	require.NoError(t, json.Unmarshal(starter(t)("plan", "--class", file, "-o", "json"), &classPlan))
	assert.True(t, classPlan.Revisions, "the plan says the class has revisions")
	assert.Equal(t, 3, classPlan.Summary.RollWorkers, "%+v", classPlan.Summary)

	// A worker template edited in place: recorded as revision 2, applied to no Cluster.
	e.applyFile(classFile, onlyKinds("SimMachineTemplate"), withDisk("ssd"))
	e.waitRevision(revision.Name(class, 2), true, 0)
	for _, name := range names {
		e.runPasses(name) // the template's event reached each Cluster, and a pass ran after it
		assert.Equal(t, before[name], e.workerTemplates(name), "%s: an edit of its class moves no Cluster pinned to a revision", name)
	}

	// Revision "latest" (2), one Cluster first, then the rest.
	e.createRollout("to-latest", revisionRollout(revision.Latest))
	st := e.waitRolloutCompleted("to-latest")
	assert.Equal(t, "2", st.ClassRevision, "latest, as the rollout fixed it when it started")
	assert.Equal(t, rolloutv1.Counts{Total: 3, Done: 3}, st.Counts)
	require.Len(t, st.Stages, 2)
	require.NotNil(t, st.Stages[0].FinishedAt)
	require.NotNil(t, st.Stages[1].StartedAt)
	assert.False(t, st.Stages[1].StartedAt.Before(st.Stages[0].FinishedAt), "the rest start once the first stage is through")
	waitApplied(revision.Name(class, 2))
	moved := map[string]map[string]string{}
	for _, name := range names {
		moved[name] = e.workerTemplates(name)
		for pool, md := range e.machineDeployments(name) {
			old := before[name][pool]
			assert.NotEqual(t, old, moved[name][pool], "%s %s: its infrastructure template rotated", name, pool)
			assert.Contains(t, old, md.Name+"@", "%s %s: the MachineDeployment stays", name, pool)
			if pool == "md-0" {
				disk, _, _ := unstructured.NestedString(e.get(&md.Spec.Template.Spec.InfrastructureRef).Object, "spec", "template", "spec", "disk")
				assert.Equal(t, "ssd", disk, "%s %s: the template of revision 2", name, pool)
			}
		}
	}

	// Back to revision 1, planned first (`starter rollout plan` while the first stage waits for
	// its approval): every Cluster is computed from revision 1 and rolls its workers.
	back := revisionRollout("1")
	back["stages"].([]any)[0].(map[string]any)["approveBefore"] = true
	e.createRollout("back-to-1", back)
	e.eventually(time.Minute, "back-to-1 waiting for approval", func() (bool, string) {
		st := e.rolloutStatus("back-to-1")
		return st.PendingApproval == "first@gen-1", fmt.Sprintf("phase %s, approval %q", st.Phase, st.PendingApproval)
	})
	var planned fleetPlanOutput
	require.NoError(t, json.Unmarshal(starter(t)("rollout", "plan", e.ns+"/back-to-1", "-o", "json"), &planned))
	assert.Equal(t, 3, planned.Summary.Clusters, "%+v", planned.Summary)
	assert.Equal(t, 3, planned.Summary.RollWorkers, "each Cluster's md-0 moves to revision 1's template: %+v", planned.Summary)
	for _, name := range names {
		assert.Equal(t, revision.Name(class, 2), e.cluster(name).Annotations[revision.PinAnnotation], "%s: the plan writes nothing", name)
	}
	require.NoError(t, e.rolloutControl("back-to-1", rollout.Control{Action: "approve", Token: "first@gen-1"}))
	e.waitRolloutCompleted("back-to-1")
	waitApplied(revision.Name(class, 1))
	for _, name := range names {
		md := e.machineDeployments(name)["md-0"]
		disk, _, _ := unstructured.NestedString(e.get(&md.Spec.Template.Spec.InfrastructureRef).Object, "spec", "template", "spec", "disk")
		assert.Equal(t, "hdd", disk, "%s: back on the template of revision 1", name)
		assert.NotEqual(t, moved[name]["md-0"], e.workerTemplates(name)["md-0"], "%s: rotated back", name)
	}

	// A later Rollout of a variable keeps the pin the rollout's manager wrote.
	e.createRollout("region", map[string]any{"clusters": map[string]any{"selector": map[string]any{}},
		"change": map[string]any{"topology": map[string]any{"variables": []any{map[string]any{"name": "region", "value": "sim-east-1"}}}},
		"stages": []any{map[string]any{"name": "all"}}})
	e.waitRolloutCompleted("region")
	for _, name := range names {
		assert.Equal(t, revision.Name(class, 1), e.cluster(name).Annotations[revision.PinAnnotation], "%s keeps its pin", name)
	}

	// A revision never recorded: the rollout does not start, and says why.
	e.createRollout("to-7", revisionRollout("7"))
	e.eventually(30*time.Second, "to-7 not started", func() (bool, string) {
		c := meta.FindStatusCondition(e.rolloutStatus("to-7").Conditions, "Progressing")
		return c != nil && c.Reason == "NotStarted" && strings.Contains(c.Message, "no revision 7"), fmt.Sprintf("%+v", c)
	})
}
