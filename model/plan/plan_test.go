package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/upgrade"
)

func sampleObjects(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	var all []*unstructured.Unstructured
	for _, f := range []string{"clusterclass.yaml", "cluster.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "samples", f))
		require.NoError(t, err)
		docs, err := decode.Documents(bytes.NewReader(data))
		require.NoError(t, err)
		all = append(all, docs...)
	}
	return all
}

func actions(r *Result) map[string]Action {
	out := map[string]Action{}
	for _, c := range r.Changes {
		out[c.Kind+"/"+c.Name] = c.Action
	}
	return out
}

func TestPlanFreshCluster(t *testing.T) {
	in, err := FromObjects(sampleObjects(t), 7)
	require.NoError(t, err)
	res, err := Compute(in)
	require.NoError(t, err)
	assert.Len(t, res.Objects, 16, "15 topology objects and the Cluster's intent")
	assert.Empty(t, res.Changes, "no current objects, no change list")
	list := res.List()
	assert.Equal(t, "List", list.GetKind())
	assert.Len(t, list.Items, 16)

	again, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	for i := range res.Objects {
		assert.Equal(t, res.Objects[i].GetName(), again.Objects[i].GetName(), "same seed, same names")
	}
}

// TestPlanShowsShimOwner: a new Cluster's infrastructure cluster and control plane are planned
// with the owner reference to the cluster shim Secret the apply gives them
// (reconcileClusterShim in Cluster API's topology controller), with a placeholder uid; nothing
// else gets one.
func TestPlanShowsShimOwner(t *testing.T) {
	res, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	owned := map[string]string{}
	for _, o := range res.Objects {
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "Secret" {
				owned[o.GetKind()] = ref.Name + "@" + string(ref.UID)
			}
		}
	}
	assert.Equal(t, map[string]string{"SimCluster": "demo-shim@" + PlannedShimUID, "SimControlPlane": "demo-shim@" + PlannedShimUID}, owned)
}

func mustInput(t *testing.T, objs []*unstructured.Unstructured, seed uint64) *Input {
	t.Helper()
	in, err := FromObjects(objs, seed)
	require.NoError(t, err)
	return in
}

// TestPlanWithCurrentObjects: feeding the planned objects back as the current state gives an
// all-unchanged plan; then a class template change rotates, a topology change updates, and a
// removed pool deletes.
func TestPlanWithCurrentObjects(t *testing.T) {
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)

	withCurrent := func(edit func(objs []*unstructured.Unstructured)) *Result {
		objs := sampleObjects(t)
		if edit != nil {
			edit(objs)
		}
		for _, o := range objs {
			if o.GetKind() == "Cluster" {
				require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": first.Objects[2].GetName()}, "spec", "controlPlaneRef"))
				require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimCluster", "name": first.Objects[0].GetName()}, "spec", "infrastructureRef"))
				// What the first apply of the Cluster's intent left.
				o.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/owned": ""})
			}
		}
		for _, o := range first.Objects {
			if o.GetKind() == "Cluster" {
				continue // the Cluster's intent; the Cluster itself is in objs
			}
			cur := o.DeepCopy()
			ann := cur.GetAnnotations()
			delete(ann, ActionAnnotation)
			cur.SetAnnotations(ann)
			objs = append(objs, cur)
		}
		res, err := Compute(mustInput(t, objs, 99))
		require.NoError(t, err)
		return res
	}

	same := withCurrent(nil)
	for k, a := range actions(same) {
		assert.Equal(t, Unchanged, a, k)
	}

	changed := withCurrent(func(objs []*unstructured.Unstructured) {
		for _, o := range objs {
			switch {
			case o.GetName() == "quick-start-default-worker-machine":
				require.NoError(t, unstructured.SetNestedField(o.Object, "ssd", "spec", "template", "spec", "disk"))
			case o.GetKind() == "Cluster":
				mds, _, _ := unstructured.NestedSlice(o.Object, "spec", "topology", "workers", "machineDeployments")
				md0 := mds[0].(map[string]any)
				md0["replicas"] = int64(5)
				require.NoError(t, unstructured.SetNestedSlice(o.Object, mds[:1], "spec", "topology", "workers", "machineDeployments"))
			}
		}
	})
	got := map[Action][]string{}
	for _, c := range changed.Changes {
		got[c.Action] = append(got[c.Action], c.Kind)
		if c.Action == Rotate {
			assert.NotEmpty(t, c.Replaces)
			// Cluster API's reconcileReferencedTemplate names the new template with the pool's
			// template-name prefix (names.InfrastructureMachineTemplateNamePrefix).
			assert.Regexp(t, `^demo-md-0-[bcdfghjklmnpqrstvwxz2456789]{5}$`, c.Name)
			assert.Contains(t, c.Diff, "+      disk: ssd")
		}
		if c.Action == Update && c.Kind == "MachineDeployment" {
			assert.Contains(t, c.Diff, "-  replicas: 2")
			assert.Contains(t, c.Diff, "+  replicas: 5")
		}
	}
	assert.Equal(t, []string{"SimMachineTemplate"}, got[Rotate], "md-0's infrastructure template rotates")
	assert.Equal(t, []string{"MachineDeployment"}, got[Update])
	deleted := strings.Join(got[Delete], ",")
	for _, k := range []string{"MachineDeployment", "SimConfigTemplate", "MachineHealthCheck"} {
		assert.Contains(t, deleted, k, "md-1 is gone with its objects")
	}
	assert.Contains(t, deleted, "SimMachineTemplate", "md-0's rotated-away template and md-1's are deleted")
}

func TestFromObjectsErrors(t *testing.T) {
	objs := sampleObjects(t)
	var noCluster []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "Cluster" {
			noCluster = append(noCluster, o)
		}
	}
	_, err := FromObjects(noCluster, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want exactly one Cluster, found 0")

	bad := sampleObjects(t)
	for _, o := range bad {
		if o.GetKind() == "Cluster" {
			o.Object["spec"].(map[string]any)["topology"].(map[string]any)["verison"] = "x"
		}
	}
	_, err = FromObjects(bad, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "spec.topology.verison"`)
}

func TestFromObjectsClassMismatch(t *testing.T) {
	objs := sampleObjects(t)
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			require.NoError(t, unstructured.SetNestedField(o.Object, "other-class", "spec", "topology", "class"))
		}
	}
	_, err := FromObjects(objs, 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.topology.classRef names ClusterClass default/other-class, but the file holds ClusterClass default/quick-start")
}

// TestPlanUpdateUsesWhatRuns: with current objects, the old object of the update rules is what
// runs (the control plane's version), not the planned Cluster itself: a two-minor jump and a
// change while a pool still rolls out are refused, as Cluster API's webhook would refuse them.
func TestPlanUpdateUsesWhatRuns(t *testing.T) {
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	planWith := func(version string, editCurrent func(o *unstructured.Unstructured)) error {
		objs := running(t, first, version, func(cur *unstructured.Unstructured) {
			if cur.GetKind() == "SimControlPlane" {
				require.NoError(t, unstructured.SetNestedField(cur.Object, "v1.31.2", "status", "version"))
			}
			if cur.GetKind() == "MachinePool" {
				n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
				require.NoError(t, unstructured.SetNestedField(cur.Object, map[string]any{"readyReplicas": n}, "status"))
			}
			if cur.GetKind() == "MachineDeployment" {
				n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
				require.NoError(t, unstructured.SetNestedField(cur.Object, map[string]any{"replicas": n, "updatedReplicas": n}, "status"))
			}
			if editCurrent != nil {
				editCurrent(cur)
			}
		})
		in, err := FromObjects(objs, 7)
		require.NoError(t, err)
		_, err = Compute(in)
		return err
	}
	assert.NoError(t, planWith("v1.31.2", nil), "no version change")
	assert.NoError(t, planWith("v1.32.0", nil), "one minor, everything settled")
	assert.ErrorContains(t, planWith("v1.33.0", nil), "version can be increased by at most one minor (from v1.31.2)")
	assert.ErrorContains(t, planWith("v1.30.0", nil), "version cannot be decreased from v1.31.2")
	err = planWith("v1.32.0", func(o *unstructured.Unstructured) {
		if o.GetKind() == "SimControlPlane" {
			require.NoError(t, unstructured.SetNestedField(o.Object, "v1.30.9", "status", "version"))
		}
	})
	assert.ErrorContains(t, err, "control plane is still completing a previous upgrade")
}

// upgradedControlPlane is the sample Cluster asked for v1.32.0 with its control plane there
// already and its pools settled at v1.31.2 (md-0 deferred when deferMD0).
func upgradedControlPlane(t *testing.T, deferMD0 bool) []*unstructured.Unstructured {
	t.Helper()
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	objs := sampleObjects(t)
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			require.NoError(t, unstructured.SetNestedField(o.Object, "v1.32.0", "spec", "topology", "version"))
			require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": first.Objects[2].GetName()}, "spec", "controlPlaneRef"))
			if deferMD0 {
				mds, _, _ := unstructured.NestedSlice(o.Object, "spec", "topology", "workers", "machineDeployments")
				md0 := mds[0].(map[string]any)
				md0["metadata"].(map[string]any)["annotations"] = map[string]any{"topology.cluster.x-k8s.io/defer-upgrade": ""}
				require.NoError(t, unstructured.SetNestedSlice(o.Object, mds, "spec", "topology", "workers", "machineDeployments"))
			}
		}
	}
	for _, o := range first.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		cur := o.DeepCopy()
		switch cur.GetKind() {
		case "SimControlPlane":
			require.NoError(t, unstructured.SetNestedField(cur.Object, "v1.32.0", "spec", "version"))
			require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"version": "v1.32.0", "initialized": true,
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
	return objs
}

// poolChanges are a plan's MachineDeployment changes by topology name.
func poolChanges(res *Result) map[string]Change {
	byPool := map[string]Change{}
	for _, c := range res.Changes {
		if c.Kind == "MachineDeployment" {
			byPool[c.Name[len("demo-"):len("demo-md-0")]] = c
		}
	}
	return byPool
}

// TestPlanShowsPendingPools: the plan makes the apply's decision (model/topology): with the
// control plane at the new version, a deferred pool waits and shows as pending, deferred; the
// other pool is updated to the new version.
func TestPlanShowsPendingPools(t *testing.T) {
	res, err := Compute(mustInput(t, upgradedControlPlane(t, true), 7))
	require.NoError(t, err)
	byPool := poolChanges(res)
	assert.Equal(t, Pending, byPool["md-0"].Action)
	assert.Equal(t, "pending upgrade, deferred", byPool["md-0"].Reason)
	assert.Equal(t, Update, byPool["md-1"].Action, "md-1 takes the new version")
	assert.Contains(t, byPool["md-1"].Diff, "+      version: v1.32.0")
}

// TestPlanPassesUnhandledHooks: with the workflow's ledger (the control plane moved to v1.32.0,
// AfterControlPlaneUpgrade not passed yet), the pools wait for the hook; when no extension
// handles AfterControlPlaneUpgrade and BeforeWorkersUpgrade, the apply lets them pass in the same
// pass, and the plan shows the first pool taking the new version as the apply sends it.
func TestPlanPassesUnhandledHooks(t *testing.T) {
	plan := func(unhandled ...string) map[string]Change {
		in := mustInput(t, upgradedControlPlane(t, false), 7)
		in.Ledger = &upgrade.Ledger{CreatePassed: true, ApprovedTarget: "v1.32.0", ControlPlaneApproved: "v1.32.0", ControlPlaneAcknowledged: "v1.31.2"}
		in.Unhandled = unhandled
		res, err := Compute(in)
		require.NoError(t, err)
		return poolChanges(res)
	}
	held := plan()
	assert.Equal(t, Pending, held["md-0"].Action, "held for AfterControlPlaneUpgrade: %+v", held["md-0"])
	passed := plan(hooksv1.AfterControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade)
	assert.Equal(t, Update, passed["md-0"].Action, "%+v", passed["md-0"])
	assert.Contains(t, passed["md-0"].Diff, "+      version: v1.32.0")
	assert.Equal(t, Pending, passed["md-1"].Action, "one pool at a time: md-1 after md-0")
	assert.Equal(t, Pending, plan(hooksv1.AfterControlPlaneUpgrade)["md-0"].Action, "BeforeWorkersUpgrade, handled, still holds the pools")
}

// TestPlanDeletesOnlyWhatTheTopologyDeletes: objects the topology controller does not write
// (a Machine carrying its labels) are never listed, and a pool's rotated-away template that a
// MachineSet still uses is not deleted yet.
func TestPlanDeletesOnlyWhatTheTopologyDeletes(t *testing.T) {
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	objs := sampleObjects(t)
	var md0Infra string
	for _, o := range objs {
		switch {
		case o.GetKind() == "Cluster":
			require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": first.Objects[2].GetName()}, "spec", "controlPlaneRef"))
		case o.GetName() == "quick-start-default-worker-machine":
			require.NoError(t, unstructured.SetNestedField(o.Object, "ssd", "spec", "template", "spec", "disk"))
		}
	}
	for _, o := range first.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		if o.GetKind() == "MachineDeployment" && o.GetLabels()["topology.cluster.x-k8s.io/deployment-name"] == "md-0" {
			md0Infra, _, _ = unstructured.NestedString(o.Object, "spec", "template", "spec", "infrastructureRef", "name")
		}
		objs = append(objs, o.DeepCopy())
	}
	require.NotEmpty(t, md0Infra)
	owned := map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/owned": ""}
	objs = append(objs,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Machine",
			"metadata": map[string]any{"name": "demo-md-0-m1", "namespace": "default", "labels": owned}}},
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineSet",
			"metadata": map[string]any{"name": "demo-md-0-old", "namespace": "default", "labels": owned},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"infrastructureRef": map[string]any{
				"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimMachineTemplate", "name": md0Infra}}}}}})
	res, err := Compute(mustInput(t, objs, 7))
	require.NoError(t, err)
	var deleted []string
	for _, c := range res.Changes {
		if c.Action == Delete {
			deleted = append(deleted, c.Kind+"/"+c.Name)
		}
	}
	assert.NotContains(t, deleted, "Machine/demo-md-0-m1")
	assert.NotContains(t, deleted, "MachineSet/demo-md-0-old")
	assert.NotContains(t, deleted, "SimMachineTemplate/"+md0Infra, "kept while a MachineSet uses it")
	assert.Len(t, deleted, 1, "only md-1's rotated-away template: %v", deleted)
}
