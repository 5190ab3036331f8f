package plan

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	"github.com/topoflow/topoflow/model/upgrade"
)

// settledSample is the sample plan file as if its first plan had been applied and every part had
// settled at v1.31.2 (the control plane stable, the pools' replicas up to date), the Cluster
// pointing at its objects; edit then changes the documents (the Cluster's spec, the class, its
// templates) as a change would leave them.
func settledSample(t *testing.T, edit func(o *unstructured.Unstructured)) *Input {
	t.Helper()
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	objs := sampleObjects(t)
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": first.Objects[2].GetName()}, "spec", "controlPlaneRef"))
			require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimCluster", "name": first.Objects[0].GetName()}, "spec", "infrastructureRef"))
			o.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/owned": ""})
		}
	}
	for _, o := range first.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		cur := o.DeepCopy()
		ann := cur.GetAnnotations()
		delete(ann, ActionAnnotation)
		cur.SetAnnotations(ann)
		switch cur.GetKind() {
		case "SimControlPlane":
			require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"version": "v1.31.2", "initialized": true,
				"replicas": int64(3), "updatedReplicas": int64(3), "readyReplicas": int64(3), "unavailableReplicas": int64(0)}, "status"))
		case "MachineDeployment":
			n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
			require.NoError(t, unstructured.SetNestedField(cur.Object, map[string]any{"replicas": n, "updatedReplicas": n}, "status"))
		case "MachinePool":
			n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
			require.NoError(t, unstructured.SetNestedField(cur.Object, map[string]any{"readyReplicas": n}, "status"))
		}
		objs = append(objs, cur)
	}
	if edit != nil {
		for _, o := range objs {
			edit(o)
		}
	}
	return mustInput(t, objs, 7)
}

// onCluster edits the sample Cluster's spec.topology.
func onCluster(t *testing.T, edit func(topo map[string]any)) func(o *unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		if o.GetKind() != "Cluster" {
			return
		}
		topo, _, _ := unstructured.NestedMap(o.Object, "spec", "topology")
		edit(topo)
		require.NoError(t, unstructured.SetNestedMap(o.Object, topo, "spec", "topology"))
	}
}

func version(t *testing.T, v string) func(o *unstructured.Unstructured) {
	return onCluster(t, func(topo map[string]any) { topo["version"] = v })
}

// onPool edits the sample Cluster's MachineDeployment topology i.
func onPool(t *testing.T, i int, edit func(md map[string]any)) func(topo map[string]any) {
	return func(topo map[string]any) {
		mds, _, _ := unstructured.NestedSlice(topo, "workers", "machineDeployments")
		edit(mds[i].(map[string]any))
		require.NoError(t, unstructured.SetNestedSlice(topo, mds, "workers", "machineDeployments"))
	}
}

func both(edits ...func(o *unstructured.Unstructured)) func(o *unstructured.Unstructured) {
	return func(o *unstructured.Unstructured) {
		for _, e := range edits {
			e(o)
		}
	}
}

func hookNames(hs []Hook) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.String())
	}
	return out
}

func rolled(p ClusterPlan) map[string]string {
	out := map[string]string{}
	for _, r := range p.RollsWorkers {
		out[r.Pool] = r.Why
	}
	return out
}

func actionsOf(p ClusterPlan) map[Action][]string {
	out := map[Action][]string{}
	for _, c := range p.Changes {
		out[c.Action] = append(out[c.Action], c.Kind)
	}
	return out
}

// upgradeHooks is the course of a one-minor upgrade of the sample, every hook on the way.
var upgradeHooks = []string{
	"BeforeClusterUpgrade v1.31.2->v1.32.0", "BeforeControlPlaneUpgrade v1.31.2->v1.32.0", "AfterControlPlaneUpgrade v1.32.0",
	"BeforeWorkersUpgrade ->v1.32.0", "AfterWorkersUpgrade v1.32.0", "AfterClusterUpgrade v1.32.0",
}

// TestCategorize: a fleet plan's Cluster is planned over the whole change (Through) and sorted:
// rotated templates and new versions roll the control plane or the workers; other writes change in
// place; nothing written is unchanged; admission's refusal (the dry run's, or the webhook's rules
// the plan applies) and a failed read end the plan. The hooks are the upgrade's, in Cluster API's
// order, called only where an extension handles them.
func TestCategorize(t *testing.T) {
	tests := []struct {
		name          string
		edit          func(o *unstructured.Unstructured)
		in            ClusterInput // Plan is set from edit unless Refused or Err
		want          Outcome
		wantCP        string            // ControlPlane (why it rolls), "" for no roll
		wantWorkers   map[string]string // pool -> why it rolls (substring)
		wantActions   map[Action][]string
		wantHooks     []string
		wantCalled    []bool
		wantStays     []string
		wantReason    string
		writesCluster bool
	}{
		{
			name: "a version change rolls the control plane and every pool, rotating the templates its patches version",
			edit: version(t, "v1.32.0"),
			in:   ClusterInput{WritesCluster: true, Unhandled: []string{hooksv1.BeforeControlPlaneUpgrade, hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.AfterWorkersUpgrade}},
			want: OutcomeChanged, wantCP: "version v1.31.2 -> v1.32.0",
			wantWorkers: map[string]string{"md-0": "version v1.31.2 -> v1.32.0, infrastructure ", "md-1": "version v1.31.2 -> v1.32.0, infrastructure ", "mp-0": "version v1.31.2 -> v1.32.0"},
			wantActions: map[Action][]string{
				Update: {"SimControlPlane", "MachineDeployment", "MachineDeployment", "MachinePool"},
				Rotate: {"SimMachineTemplate", "SimMachineTemplate"},
				Delete: {"SimMachineTemplate", "SimMachineTemplate"},
			},
			wantHooks:     upgradeHooks,
			wantCalled:    []bool{true, false, false, false, false, true},
			writesCluster: true,
		},
		{
			name: "a deferred pool stays at its version: the upgrade does not complete",
			edit: both(version(t, "v1.32.0"), onCluster(t, onPool(t, 0, func(md map[string]any) {
				md["metadata"].(map[string]any)["annotations"] = map[string]any{"topology.cluster.x-k8s.io/defer-upgrade": ""}
			}))),
			in:   ClusterInput{WritesCluster: true},
			want: OutcomeChanged, wantCP: "version v1.31.2 -> v1.32.0",
			wantWorkers: map[string]string{"md-1": "version", "mp-0": "version"},
			wantActions: map[Action][]string{
				// The upgrade-step annotation stays on the Cluster while md-0 is behind (the upgrade
				// plan is not empty: Cluster API's computeCluster).
				Update:  {"SimControlPlane", "Cluster", "MachineDeployment", "MachinePool"},
				Rotate:  {"SimMachineTemplate"},
				Delete:  {"SimMachineTemplate"},
				Pending: {"SimConfigTemplate", "SimMachineTemplate", "MachineDeployment"},
			},
			wantHooks:     upgradeHooks[:4],
			wantCalled:    []bool{true, true, true, true},
			wantStays:     []string{"md-0"},
			writesCluster: true,
		},
		{
			name: "a variable its patches use rotates the workers' templates: the workers roll, the control plane does not",
			edit: onCluster(t, onPool(t, 0, func(md map[string]any) {
				md["variables"] = map[string]any{"overrides": []any{map[string]any{"name": "workerInstanceType", "value": "sim.huge"}}}
			})),
			in:            ClusterInput{WritesCluster: true},
			want:          OutcomeChanged,
			wantWorkers:   map[string]string{"md-0": "infrastructure "},
			wantActions:   map[Action][]string{Update: {"MachineDeployment"}, Rotate: {"SimMachineTemplate"}, Delete: {"SimMachineTemplate"}},
			writesCluster: true,
		},
		{
			name: "an edited class template of the control plane's machines rotates it: the control plane rolls",
			edit: func(o *unstructured.Unstructured) {
				if o.GetName() == "quick-start-control-plane-machine" {
					require.NoError(t, unstructured.SetNestedField(o.Object, "sim.xxl", "spec", "template", "spec", "instanceType"))
				}
			},
			want: OutcomeChanged, wantCP: "machine template ",
			wantActions: map[Action][]string{Update: {"SimControlPlane"}, Rotate: {"SimMachineTemplate"}, Delete: {"SimMachineTemplate"}},
		},
		{
			name: "pool labels and replicas are written in place: no machine rolls",
			edit: onCluster(t, onPool(t, 0, func(md map[string]any) {
				md["replicas"] = int64(4)
				md["metadata"].(map[string]any)["labels"] = map[string]any{"pool": "special"}
			})),
			in:            ClusterInput{WritesCluster: true},
			want:          OutcomeChanged,
			wantActions:   map[Action][]string{Update: {"MachineDeployment"}},
			writesCluster: true,
		},
		{
			name:          "the change is written to the Cluster, but no topology object changes",
			in:            ClusterInput{WritesCluster: true},
			want:          OutcomeChanged,
			writesCluster: true,
		},
		{
			name: "the change holds already and the topology is current: unchanged",
			want: OutcomeUnchanged,
		},
		{
			name:       "admission refuses the change (the dry run's answer): nothing else is planned",
			in:         ClusterInput{Refused: `Cluster.cluster.x-k8s.io "demo" is invalid: spec.topology.version: ...`, WritesCluster: true},
			want:       OutcomeRefused,
			wantReason: "is invalid",
		},
		{
			name:       "the webhook's own rules refuse a two-minor jump (no webhook answered the dry run)",
			edit:       version(t, "v1.33.0"),
			in:         ClusterInput{WritesCluster: true},
			want:       OutcomeRefused,
			wantReason: "version can be increased by at most one minor (from v1.31.2)",
		},
		{
			name:       "a read that failed",
			in:         ClusterInput{Err: "ClusterClass default/quick-start (spec.topology.class) not found"},
			want:       OutcomeFailed,
			wantReason: "not found",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Cluster = "default/demo"
			if in.Refused == "" && in.Err == "" {
				in.Plan = settledSample(t, tc.edit)
			}
			p := Categorize(in)
			require.Equal(t, tc.want, p.Outcome, "reason: %s", p.Reason)
			assert.Equal(t, "default/demo", p.Cluster)
			assert.Contains(t, p.Reason, tc.wantReason)
			assert.Equal(t, tc.writesCluster, p.WritesCluster)
			if tc.wantCP == "" {
				assert.False(t, p.RollsControlPlane, p.ControlPlane)
			} else {
				assert.True(t, p.RollsControlPlane)
				assert.Contains(t, p.ControlPlane, tc.wantCP)
			}
			got := rolled(p)
			assert.Len(t, got, len(tc.wantWorkers), "%v", got)
			for pool, why := range tc.wantWorkers {
				assert.Contains(t, got[pool], why, pool)
			}
			acts := actionsOf(p)
			for a, kinds := range tc.wantActions {
				assert.ElementsMatch(t, kinds, acts[a], "%s", a)
			}
			for a := range acts {
				assert.Contains(t, tc.wantActions, a, "unexpected %s: %v", a, acts[a])
			}
			assert.Equal(t, tc.wantHooks, hookNames(p.Hooks))
			if tc.wantCalled != nil {
				var called []bool
				for _, h := range p.Hooks {
					called = append(called, h.Called)
				}
				assert.Equal(t, tc.wantCalled, called)
			}
			assert.Equal(t, tc.wantStays, p.Stays)
			for _, c := range p.Changes {
				assert.Empty(t, c.Diff, "no diffs in a fleet plan")
			}
		})
	}
}

// TestCategorizeRotationNames: the templates a version change rotates get the names the passes
// give them (keyed by their spec: names.Source), and the old ones are deleted; the pools roll
// onto exactly those.
func TestCategorizeRotationNames(t *testing.T) {
	in := settledSample(t, version(t, "v1.32.0"))
	p := Categorize(ClusterInput{Cluster: "default/demo", Plan: in})
	require.Equal(t, OutcomeChanged, p.Outcome, p.Reason)
	var rotated, deleted []string
	for _, c := range p.Changes {
		switch c.Action {
		case Rotate:
			rotated = append(rotated, c.Name)
			assert.Regexp(t, `^demo-md-[01]-[bcdfghjklmnpqrstvwxz2456789]{5}$`, c.Name)
			deleted = append(deleted, c.Replaces)
		case Delete:
			assert.Contains(t, deleted, c.Name, "the template rotated away from is deleted")
		}
	}
	require.Len(t, rotated, 2)
	for _, r := range p.RollsWorkers {
		if r.Kind == "MachineDeployment" {
			assert.True(t, strings.Contains(r.Why, "-> "+rotated[0]) || strings.Contains(r.Why, "-> "+rotated[1]), r.Why)
		}
	}
	// The plan moved copies of the current objects, not them.
	v, _, _ := unstructured.NestedString(in.Desired.Current.ControlPlane.Object, "spec", "version")
	assert.Equal(t, "v1.31.2", v)
	for name, md := range in.Desired.Current.MachineDeployments {
		assert.Equal(t, "v1.31.2", md.Spec.Template.Spec.Version, name)
	}
	// The same change planned again gives the same names.
	again := Categorize(ClusterInput{Cluster: "default/demo", Plan: settledSample(t, version(t, "v1.32.0"))})
	assert.Equal(t, p.Changes, again.Changes)
}

// TestCategorizeWithLedger: a Cluster whose upgrade to the target already started (its workflow's
// ledger says BeforeClusterUpgrade and BeforeControlPlaneUpgrade passed, the control plane moved)
// is not planned to call those again.
func TestCategorizeWithLedger(t *testing.T) {
	in := settledSample(t, version(t, "v1.32.0"))
	in.Ledger = &upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.32.0", ControlPlaneApproved: "v1.32.0", ControlPlaneAcknowledged: "v1.31.2"}
	p := Categorize(ClusterInput{Cluster: "default/demo", Plan: in})
	require.Equal(t, OutcomeChanged, p.Outcome, p.Reason)
	assert.Equal(t, upgradeHooks[2:], hookNames(p.Hooks))
}

// TestSummarize: every Cluster counts once among refused, failed, unchanged and changed; changed
// ones count in each roll category they fall in (a Cluster can roll both), or as in place.
func TestSummarize(t *testing.T) {
	roll := []PoolRoll{{Kind: "MachineDeployment", Pool: "md-0"}}
	plans := []ClusterPlan{
		{Outcome: OutcomeChanged, RollsControlPlane: true, RollsWorkers: roll},
		{Outcome: OutcomeChanged, RollsWorkers: roll},
		{Outcome: OutcomeChanged, RollsControlPlane: true},
		{Outcome: OutcomeChanged},
		{Outcome: OutcomeUnchanged},
		{Outcome: OutcomeUnchanged},
		{Outcome: OutcomeRefused},
	}
	s := Summarize(plans)
	assert.Equal(t, Summary{Clusters: 7, RollWorkers: 2, RollControlPlane: 2, InPlace: 1, Unchanged: 2, Refused: 1}, s)
	assert.Equal(t, "7 Clusters: 2 roll their workers, 2 roll their control plane, 1 change in place only, 2 unchanged, 1 refused", s.String())
	s = Summarize(append(plans, ClusterPlan{Outcome: OutcomeFailed}))
	assert.Equal(t, "8 Clusters: 2 roll their workers, 2 roll their control plane, 1 change in place only, 2 unchanged, 1 refused, 1 failed to plan", s.String())
	assert.Equal(t, "1 Cluster: 0 roll their workers, 0 roll their control plane, 0 change in place only, 1 unchanged, 0 refused",
		Summarize([]ClusterPlan{{Outcome: OutcomeUnchanged}}).String())
}
