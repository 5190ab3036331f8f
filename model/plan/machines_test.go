package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// settledAt31 is the sample Cluster asking for version, its objects at v1.31.2 with the
// MachineDeployments' replica counts NOT settled (what stands in where Machines are unknown),
// plus extra documents (Machines, Nodes); mpNodes names Nodes in the MachinePool's status.
func settledAt31(t *testing.T, version string, mpNodes []string, extra ...map[string]any) error {
	t.Helper()
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	objs := running(t, first, version, func(cur *unstructured.Unstructured) {
		switch cur.GetKind() {
		case "SimControlPlane":
			require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"version": "v1.31.2", "initialized": true}, "status"))
		case "MachineDeployment":
			require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"replicas": int64(1), "updatedReplicas": int64(0)}, "status"))
		case "MachinePool":
			var refs []any
			for _, n := range mpNodes {
				refs = append(refs, map[string]any{"kind": "Node", "name": n})
			}
			n, _, _ := unstructured.NestedInt64(cur.Object, "spec", "replicas")
			require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"readyReplicas": n, "nodeRefs": refs}, "status"))
		}
	})
	for _, m := range extra {
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	in, err := FromObjects(objs, 7)
	if err != nil {
		return err
	}
	_, err = Compute(in)
	return err
}

// running is the sample plan file as if first had been applied: the Cluster asks for version and
// references first's control plane, and first's objects (each passed through editCurrent) are its
// current objects.
func running(t *testing.T, first *Result, version string, editCurrent func(cur *unstructured.Unstructured)) []*unstructured.Unstructured {
	t.Helper()
	objs := sampleObjects(t)
	for _, o := range objs {
		if o.GetKind() == "Cluster" {
			require.NoError(t, unstructured.SetNestedField(o.Object, version, "spec", "topology", "version"))
			require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": first.Objects[2].GetName()}, "spec", "controlPlaneRef"))
		}
	}
	for _, o := range first.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		cur := o.DeepCopy()
		if editCurrent != nil {
			editCurrent(cur)
		}
		objs = append(objs, cur)
	}
	return objs
}

func machineOf(md, version, kubelet string) map[string]any {
	return map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
		"metadata": map[string]any{"name": md + "-m", "namespace": "default", "labels": map[string]any{
			"cluster.x-k8s.io/cluster-name": "demo", "cluster.x-k8s.io/deployment-name": md}},
		"spec":   map[string]any{"clusterName": "demo", "version": version},
		"status": map[string]any{"nodeInfo": map[string]any{"kubeletVersion": kubelet}},
	}
}

func node(name, kubelet string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name},
		"status": map[string]any{"nodeInfo": map[string]any{"kubeletVersion": kubelet}}}
}

// TestPlanReadsMachinesAndNodes: a plan file is read as Cluster API reads a management cluster. A
// MachineDeployment is upgrading only while one of its Machines (spec.version or the Node's
// kubelet) is on another version than it (check.IsMachineDeploymentUpgrading), whatever its
// replica counts say; a MachinePool while one of the Nodes its status.nodeRefs names runs another
// kubelet (check.IsMachinePoolUpgrading), and a Node missing from the file fails the plan, as the
// lookup fails in Cluster API. Both checks guard a version change (the Cluster webhook's
// validateTopologyMachineDeploymentVersions / validateTopologyMachinePoolVersions).
func TestPlanReadsMachinesAndNodes(t *testing.T) {
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	var md0 string
	for _, o := range first.Objects {
		if o.GetKind() == "MachineDeployment" && md0 == "" {
			md0 = o.GetName()
		}
	}
	tests := []struct {
		name    string
		mpNodes []string
		extra   []map[string]any
		wantErr string
	}{
		{name: "no Machines: not upgrading"},
		{name: "the only Machine on the old version: not upgrading", extra: []map[string]any{machineOf(md0, "v1.31.2", "v1.31.2")}},
		{name: "a Machine's Node on another version", extra: []map[string]any{machineOf(md0, "v1.31.2", "v1.30.9")},
			wantErr: "there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{name: "a Machine of another version", extra: []map[string]any{machineOf(md0, "v1.30.9", "")},
			wantErr: "there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{name: "the MachinePool's Node on its version", mpNodes: []string{"n1"}, extra: []map[string]any{node("n1", "v1.31.2")}},
		{name: "the MachinePool's Node on another version", mpNodes: []string{"n1"}, extra: []map[string]any{node("n1", "v1.30.9")},
			wantErr: "there are still MachinePools completing a previous upgrade"},
		{name: "the MachinePool's Node missing", mpNodes: []string{"n1"}, wantErr: "status.nodeRefs names Node n1, which the plan file does not hold"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := settledAt31(t, "v1.32.0", tc.mpNodes, tc.extra...)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

// TestPlanClusterPatchAndCurrentInfrastructure: with current objects the Cluster is an updated
// object exactly when its patch is not empty: the upgrade-step annotation of an upgrade that is
// over is removed (Cluster API v1.14.2's computeCluster deletes it once the upgrade plan is empty,
// and reconcileCluster patches the Cluster); and the file's infrastructure cluster is the current
// one, so a shim owner it carries is kept (computeInfrastructureCluster).
func TestPlanClusterPatchAndCurrentInfrastructure(t *testing.T) {
	first, err := Compute(mustInput(t, sampleObjects(t), 7))
	require.NoError(t, err)
	plan := func(stepAnnotation bool) *Result {
		objs := sampleObjects(t)
		for _, o := range objs {
			if o.GetKind() != "Cluster" {
				continue
			}
			for _, d := range first.Objects {
				for field, kind := range map[string]string{"controlPlaneRef": "SimControlPlane", "infrastructureRef": "SimCluster"} {
					if d.GetKind() == kind {
						require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{"apiVersion": d.GetAPIVersion(), "kind": kind, "name": d.GetName()}, "spec", field))
					}
				}
			}
			o.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/owned": ""})
			if stepAnnotation {
				o.SetAnnotations(map[string]string{"topology.internal.cluster.x-k8s.io/upgrade-step": "v1.31.2"})
			}
		}
		for _, o := range first.Objects {
			if o.GetKind() != "Cluster" {
				cur := o.DeepCopy()
				cur.SetAnnotations(withoutAction(cur.GetAnnotations()))
				if cur.GetKind() == "SimControlPlane" {
					require.NoError(t, unstructured.SetNestedMap(cur.Object, map[string]any{"version": "v1.31.2", "initialized": true}, "status"))
				}
				objs = append(objs, cur)
			}
		}
		res, err := Compute(mustInput(t, objs, 7))
		require.NoError(t, err)
		return res
	}
	cluster := func(res *Result) Change {
		for _, c := range res.Changes {
			if c.Kind == "Cluster" {
				return c
			}
		}
		t.Fatal("no change for the Cluster")
		return Change{}
	}
	assert.Equal(t, Unchanged, cluster(plan(false)).Action)
	done := plan(true)
	assert.Equal(t, Update, cluster(done).Action, "the annotation of a finished upgrade goes")
	assert.Contains(t, cluster(done).Diff, `"topology.internal.cluster.x-k8s.io/upgrade-step":null`)
	for _, o := range done.Objects {
		if o.GetKind() == "SimCluster" {
			require.Len(t, o.GetOwnerReferences(), 1, "the current shim owner is kept")
			assert.Equal(t, PlannedShimUID, string(o.GetOwnerReferences()[0].UID))
		}
	}
}
