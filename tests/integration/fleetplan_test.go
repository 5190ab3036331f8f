//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// fleetPlanOutput is the part of `starter rollout plan -o json` and `starter plan --class -o json`
// the tests read.
type fleetPlanOutput struct {
	Clusters  []plan.ClusterPlan `json:"clusters"`
	Summary   plan.Summary       `json:"summary"`
	Refused   string             `json:"refused"`
	Revisions bool               `json:"revisions"`
	Ledgers   string             `json:"ledgers"`
}

// objectSnapshot is every topology object of a Cluster, "Kind/name" -> its generation.
func (e *env) objectSnapshot(cluster string) map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	for _, gvr := range provider.TopologyKinds {
		for _, u := range e.list(gvr, labels.ClusterName+"="+cluster) {
			out[u.GetKind()+"/"+u.GetName()] = u.GetGeneration()
		}
	}
	return out
}

// starter builds the starter binary once per test.
func starter(t *testing.T) func(args ...string) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "starter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/starter")
	build.Dir = repoFile(".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return func(args ...string) []byte {
		t.Helper()
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "starter %s: %s", strings.Join(args, " "), stderr.String())
		return stdout.Bytes()
	}
}

// TestRolloutPlanPredictsWrites (#38): `starter rollout plan` (the binary, -o json) plans a
// version-change Rollout over three Clusters while it waits for approval before its only stage:
// two Clusters roll their control plane and every pool (the version, and the worker templates its
// patch versions, rotated), the third already runs the version (unchanged); every upgrade hook on
// the way, none called (no extension). The plan writes nothing (generations as before, no dry-run
// manager on the Clusters). Once approved and completed, what the rollout wrote is what was
// predicted, Cluster by Cluster: the objects updated have a new generation, the rest the old one;
// the rotated templates exist under the predicted names and the ones they replace are gone; and
// the upgrade workflow's hook log lists the predicted hooks in the predicted order. Then `starter
// plan --class` plans a class edit for the three Clusters (workers roll, nothing written) and one
// admission refuses.
func TestRolloutPlanPredictsWrites(t *testing.T) {
	e := newEnv(t, envOptions{rolloutTiming: workflows.RolloutTiming{Poll: time.Second, Idle: 3 * time.Second}})
	e.serveAdmission()
	e.applyFile(classFile)
	names := []string{"c0", "c1", "c2"}
	e.readyClusters(names, func(i int, u *unstructured.Unstructured) {
		if i == 2 {
			require.NoError(t, unstructured.SetNestedField(u.Object, "v1.32.0", "spec", "topology", "version"))
		}
	})
	run := starter(t)

	e.createRollout("to-1-32", map[string]any{
		"clusters": map[string]any{"selector": map[string]any{}},
		"change":   map[string]any{"version": "v1.32.0"},
		"stages":   []any{map[string]any{"name": "all", "approveBefore": true}},
	})
	e.eventually(time.Minute, "the rollout waiting for approval before its stage", func() (bool, string) {
		st := e.rolloutStatus("to-1-32")
		return st.PendingApproval == "all@gen-1", fmt.Sprintf("phase %s, approval %q", st.Phase, st.PendingApproval)
	})
	before := map[string]map[string]int64{}
	gens := map[string]int64{}
	for _, n := range names {
		before[n] = e.objectSnapshot(n)
		gens[n] = e.cluster(n).Generation
	}

	text := string(run("rollout", "plan", e.ns+"/to-1-32"))
	t.Log("starter rollout plan:\n" + text)
	assert.Contains(t, text, "3 Clusters: 2 roll their workers, 2 roll their control plane, 0 change in place only, 1 unchanged, 0 refused\n")
	var got fleetPlanOutput
	require.NoError(t, json.Unmarshal(run("rollout", "plan", e.ns+"/to-1-32", "-o", "json"), &got))
	t.Logf("summary: %s; ledgers: %s", got.Summary, got.Ledgers)
	assert.Equal(t, plan.Summary{Clusters: 3, RollWorkers: 2, RollControlPlane: 2, Unchanged: 1}, got.Summary)
	// The same plan, summed up, in the status of the Rollout while it waits for that approval.
	e.eventually(time.Minute, "the fleet plan in the Rollout's status", func() (bool, string) {
		p := e.rolloutStatus("to-1-32").Plan
		if p == nil {
			return false, "no status.plan"
		}
		return p.Approval == "all@gen-1" && p.Summary == got.Summary.String() && p.RollWorkers == 2 && p.Unchanged == 1,
			fmt.Sprintf("%+v", *p)
	})
	require.Len(t, got.Clusters, 3)
	byName := map[string]plan.ClusterPlan{}
	for i, p := range got.Clusters {
		assert.Equal(t, e.ns+"/"+names[i], p.Cluster, "in stage order, by name")
		assert.Equal(t, "all", p.Stage)
		byName[names[i]] = p
	}
	wantHooks := []string{"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade", "BeforeWorkersUpgrade", "AfterWorkersUpgrade", "AfterClusterUpgrade"}
	for _, n := range names[:2] {
		p := byName[n]
		require.Equal(t, plan.OutcomeChanged, p.Outcome, "%s: %s", n, p.Reason)
		assert.True(t, p.WritesCluster, n)
		assert.True(t, p.RollsControlPlane, n)
		assert.Equal(t, "version v1.31.2 -> v1.32.0", p.ControlPlane, n)
		var pools []string
		for _, r := range p.RollsWorkers {
			pools = append(pools, r.Pool)
		}
		assert.Equal(t, []string{"md-0", "md-1", "mp-0"}, pools, n)
		var hooks []string
		for _, h := range p.Hooks {
			hooks = append(hooks, h.Hook)
			assert.False(t, h.Called, "%s %s: no extension handles it", n, h.Hook)
		}
		assert.Equal(t, wantHooks, hooks, n)
	}
	assert.Equal(t, plan.OutcomeUnchanged, byName["c2"].Outcome, byName["c2"].Reason)
	assert.Empty(t, byName["c2"].Changes)

	// The plan wrote nothing: no generation moved, and neither the rollout's manager nor the plan's
	// dry run owns anything on the Clusters.
	for _, n := range names {
		assert.Equal(t, before[n], e.objectSnapshot(n), "%s: the plan changes no object", n)
		c := e.cluster(n)
		assert.Equal(t, gens[n], c.Generation, n)
		for _, m := range c.ManagedFields {
			assert.NotContains(t, []string{rollout.FieldManager, activities.PlanFieldManager}, m.Manager, n)
		}
	}

	// Approve, as `starter rollout approve` does, and let the rollout run to its end.
	require.NoError(t, e.rolloutControl("to-1-32", rollout.Control{Action: "approve", Token: "all@gen-1"}))
	e.eventually(3*time.Minute, "the rollout completed", func() (bool, string) {
		st := e.rolloutStatus("to-1-32")
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s, %+v", st.Phase, st.Counts)
	})
	// The workflow's own status writes leave the plan (another field manager's) in place.
	if p := e.rolloutStatus("to-1-32").Plan; assert.NotNil(t, p, "status.plan after the rollout") {
		assert.Equal(t, "all@gen-1", p.Approval)
	}

	for _, n := range names {
		p := byName[n]
		after := e.objectSnapshot(n)
		predicted := map[string]plan.Change{}
		for _, c := range p.Changes {
			predicted[c.Kind+"/"+c.Name] = c
		}
		for key, gen := range before[n] {
			c, ok := predicted[key]
			switch {
			case ok && c.Action == plan.Delete:
				assert.NotContains(t, after, key, "%s: %s predicted deleted", n, key)
			case ok && c.Action == plan.Update:
				assert.Greater(t, after[key], gen, "%s: %s predicted updated", n, key)
			case strings.HasPrefix(key, "Cluster/"):
			default:
				if assert.Contains(t, after, key, "%s: %s kept", n, key) {
					assert.Equal(t, gen, after[key], "%s: %s predicted unchanged", n, key)
				}
			}
		}
		for key := range after {
			if _, existed := before[n][key]; existed {
				continue
			}
			c, ok := predicted[key]
			assert.True(t, ok && (c.Action == plan.Rotate || c.Action == plan.Create), "%s: %s is new: predicted %+v", n, key, c)
		}
		for key, c := range predicted {
			if c.Action == plan.Rotate {
				assert.Contains(t, after, key, "%s: the rotated template under the predicted name", n)
				assert.NotContains(t, after, c.Kind+"/"+c.Replaces, "%s: the template it replaces is gone", n)
			}
		}
		c := e.cluster(n)
		assert.Equal(t, "v1.32.0", c.Spec.Topology.Version, n)
		assert.Equal(t, p.WritesCluster, c.Generation > gens[n], "%s: the rollout wrote the Cluster as predicted", n)
		if len(p.Hooks) == 0 {
			continue
		}
		// The hooks, in the order the upgrade's workflow logged them.
		st, err := clusterstatus.QueryState(e.ctx, tc, workflows.UpgradeWorkflowID(activities.ClusterRef{Namespace: e.ns, Name: n}, "v1.32.0"))
		require.NoError(t, err, n)
		var logged []string
		for _, h := range st.Hooks {
			if slices.Contains(wantHooks, h.Hook) {
				logged = append(logged, h.Hook+"("+h.Version+")")
			}
		}
		var planned []string
		for _, h := range p.Hooks {
			v := h.To
			if v == "" {
				v = h.Version
			}
			planned = append(planned, h.Hook+"("+v+")")
		}
		assert.Equal(t, planned, logged, "%s: the hooks planned are the hooks the upgrade went through", n)
	}

	// An edited class, with a new worker machine template only the file holds: every Cluster of
	// the class rolls its workers, none its control plane; nothing is written.
	class, err := kc.Get(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", 0)
	require.NoError(t, err)
	classGen := class.GetGeneration()
	edited := e.classDocument()
	mdClasses, _, _ := unstructured.NestedSlice(edited.Object, "spec", "workers", "machineDeployments")
	require.NoError(t, unstructured.SetNestedField(mdClasses[0].(map[string]any), "quick-start-worker-machine-ssd", "template", "infrastructure", "ref", "name"))
	require.NoError(t, unstructured.SetNestedSlice(edited.Object, mdClasses, "spec", "workers", "machineDeployments"))
	file := e.writeClassFile(edited, map[string]any{
		"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimMachineTemplate",
		"metadata": map[string]any{"name": "quick-start-worker-machine-ssd"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"instanceType": "sim.medium", "disk": "ssd"}}},
	})
	t.Log("starter plan --class:\n" + string(run("plan", "--class", file)))
	got = fleetPlanOutput{}
	require.NoError(t, json.Unmarshal(run("plan", "--class", file, "-o", "json"), &got))
	assert.Equal(t, plan.Summary{Clusters: 3, RollWorkers: 3}, got.Summary, "%+v", got.Clusters)
	for _, p := range got.Clusters {
		assert.Equal(t, plan.OutcomeChanged, p.Outcome, "%s: %s", p.Cluster, p.Reason)
		assert.False(t, p.WritesCluster)
		assert.Empty(t, p.Hooks)
	}
	class, err = kc.Get(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", 0)
	require.NoError(t, err)
	assert.Equal(t, classGen, class.GetGeneration(), "the class is not written")
	for _, u := range e.list(schemaGVR("infrastructure.cluster.x-k8s.io", "simmachinetemplates"), "") {
		assert.NotEqual(t, "quick-start-worker-machine-ssd", u.GetName(), "the file's template is not created")
	}

	// A class that drops a variable the Clusters set: admission refuses the edit, for every Cluster.
	edited = e.classDocument()
	vars, _, _ := unstructured.NestedSlice(edited.Object, "spec", "variables")
	require.NoError(t, unstructured.SetNestedSlice(edited.Object, vars[1:], "spec", "variables"))
	got = fleetPlanOutput{}
	require.NoError(t, json.Unmarshal(run("plan", "--class", e.writeClassFile(edited), "-o", "json"), &got))
	assert.Equal(t, plan.Summary{Clusters: 3, Refused: 3}, got.Summary, "%+v", got.Clusters)
	assert.NotEmpty(t, got.Refused)
}

// classDocument is the sample ClusterClass as written in the test's namespace.
func (e *env) classDocument() *unstructured.Unstructured {
	e.t.Helper()
	data, err := os.ReadFile(repoFile(classFile))
	require.NoError(e.t, err)
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err == nil && u.GetKind() == "ClusterClass" {
			u.SetNamespace(e.ns)
			return u
		}
	}
	e.t.Fatal("no ClusterClass in " + classFile)
	return nil
}

// writeClassFile writes the documents as a multi-document YAML file and returns its path.
func (e *env) writeClassFile(class *unstructured.Unstructured, more ...map[string]any) string {
	e.t.Helper()
	var docs []string
	for _, o := range append([]map[string]any{class.Object}, more...) {
		y, err := yaml.Marshal(o)
		require.NoError(e.t, err)
		docs = append(docs, string(y))
	}
	path := filepath.Join(e.t.TempDir(), "class.yaml")
	require.NoError(e.t, os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o600))
	return path
}
