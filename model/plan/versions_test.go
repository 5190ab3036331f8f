package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/decode"
)

// asV1Beta2 rewrites a plan file's Clusters and ClusterClasses as their authors would write them
// in v1beta2: converted by Cluster API's rules, without the conversion data.
func asV1Beta2(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		js, err := o.MarshalJSON()
		require.NoError(t, err)
		var m map[string]any
		switch {
		case isClusterAPI(o, "Cluster"):
			m, err = conversion.ClusterV1Beta2(js)
		case isClusterAPI(o, "ClusterClass"):
			m, err = conversion.ClusterClassV1Beta2(js)
		default:
			out = append(out, o.DeepCopy())
			continue
		}
		require.NoError(t, err)
		c := &unstructured.Unstructured{Object: m}
		require.Equal(t, "cluster.x-k8s.io/v1beta2", c.GetAPIVersion())
		out = append(out, c)
	}
	return out
}

func fileObjects(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	objs, err := decode.Documents(bytes.NewReader(data))
	require.NoError(t, err)
	return objs
}

func planFor(t *testing.T, objs []*unstructured.Unstructured, clusterAPI, apiVersion string) *Result {
	t.Helper()
	in := mustInput(t, objs, 7)
	in.APIVersion = apiVersion
	require.NoError(t, in.ForClusterAPI(clusterAPI))
	res, err := Compute(in)
	require.NoError(t, err)
	return res
}

// TestPlanReadsV1Beta2Inputs: the golden inputs written as v1beta2 plan exactly as written as
// v1beta1 (Cluster API v1.11+ converts v1beta1 to its v1beta2 hub before computing:
// core/webhooks/conversion ConvertClusterV1Beta1ToHub, ConvertClusterClassV1Beta1ToHub).
func TestPlanReadsV1Beta2Inputs(t *testing.T) {
	for name, objs := range map[string][]*unstructured.Unstructured{
		"samples": sampleObjects(t),
		"book":    fileObjects(t, filepath.Join("..", "desired", "testdata", "book-input.yaml")),
	} {
		t.Run(name, func(t *testing.T) {
			want := planFor(t, objs, "v1.14", "")
			got := planFor(t, asV1Beta2(t, objs), "v1.14", "")
			require.Len(t, got.Objects, len(want.Objects))
			for i := range want.Objects {
				assert.Equal(t, want.Objects[i].Object, got.Objects[i].Object, "%s %s", want.Objects[i].GetKind(), want.Objects[i].GetName())
			}
		})
	}
}

// TestPlanV1Beta2CurrentObjects: a Cluster whose objects were written as v1beta2 (its
// MachineDeployments, MachineHealthChecks, and the Cluster with contract references) plans as
// all unchanged when nothing changed.
func TestPlanV1Beta2CurrentObjects(t *testing.T) {
	first := planFor(t, sampleObjects(t), "v1.14", "")
	objs := asV1Beta2(t, sampleObjects(t))
	for _, o := range objs {
		if isClusterAPI(o, "Cluster") {
			for _, ref := range []struct{ field, kind string }{{"infrastructureRef", "SimCluster"}, {"controlPlaneRef", "SimControlPlane"}} {
				for _, d := range first.Objects {
					if d.GetKind() == ref.kind {
						require.NoError(t, unstructured.SetNestedMap(o.Object, map[string]any{
							"apiGroup": d.GroupVersionKind().Group, "kind": ref.kind, "name": d.GetName()}, "spec", ref.field))
					}
				}
			}
			o.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/owned": ""})
		}
	}
	for _, o := range first.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		cur := o.DeepCopy()
		cur.SetAnnotations(withoutAction(cur.GetAnnotations()))
		objs = append(objs, cur)
	}
	res := planFor(t, objs, "v1.14", "")
	require.NotEmpty(t, res.Changes)
	for k, a := range actions(res) {
		assert.Equal(t, Unchanged, a, k)
	}
}

func withoutAction(ann map[string]string) map[string]string {
	delete(ann, ActionAnnotation)
	return ann
}

// TestPlanForClusterAPI: a plan file is planned for a Cluster API v1.14 management cluster unless
// --cluster-api names another. From v1.11 Cluster API's topology controller writes owner
// references to the Cluster as cluster.x-k8s.io/v1beta2 (exp/topology/desiredstate: the ownerRef
// of computeControlPlaneInfrastructureMachineTemplate and computeMachineDeployment's templates,
// ownerrefs.OwnerReferenceTo with the v1beta2 GroupVersion) and MachineDeployments and
// MachineHealthChecks as v1beta2; --api-version v1beta1 shows the same objects as a v1beta1
// client reads them (owner references are stored, not converted).
func TestPlanForClusterAPI(t *testing.T) {
	tests := []struct {
		clusterAPI, apiVersion string
		wantObjects, wantOwner string
	}{
		{"v1.14", "", "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta2"},
		{"1.14.2", "v1beta2", "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta2"},
		{"v1.14", "v1beta1", "cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta2"},
		{"v1.11", "", "cluster.x-k8s.io/v1beta2", "cluster.x-k8s.io/v1beta2"},
		{"v1.10", "", "cluster.x-k8s.io/v1beta1", "cluster.x-k8s.io/v1beta1"},
	}
	for _, tc := range tests {
		t.Run(tc.clusterAPI+"/"+tc.apiVersion, func(t *testing.T) {
			res := planFor(t, sampleObjects(t), tc.clusterAPI, tc.apiVersion)
			seen := map[string]bool{}
			for _, o := range res.Objects {
				if o.GroupVersionKind().Group == "cluster.x-k8s.io" {
					assert.Equal(t, tc.wantObjects, o.GetAPIVersion(), o.GetKind())
					seen[o.GetKind()] = true
				}
				for _, ref := range o.GetOwnerReferences() {
					if ref.Kind == "Cluster" {
						assert.Equal(t, tc.wantOwner, ref.APIVersion, "%s %s owner", o.GetKind(), o.GetName())
						seen["owner"] = true
					}
				}
				if o.GetKind() == "Cluster" && tc.wantObjects == "cluster.x-k8s.io/v1beta2" {
					ref, _, _ := unstructured.NestedMap(o.Object, "spec", "controlPlaneRef")
					assert.Equal(t, "controlplane.cluster.x-k8s.io", ref["apiGroup"], "a contract reference names the group")
					assert.NotContains(t, ref, "apiVersion")
				}
			}
			for _, k := range []string{"Cluster", "MachineDeployment", "MachineHealthCheck", "owner"} {
				assert.True(t, seen[k], k)
			}
		})
	}
}

func TestForClusterAPIRefusals(t *testing.T) {
	in := mustInput(t, sampleObjects(t), 7)
	assert.ErrorContains(t, in.ForClusterAPI("latest"), `--cluster-api: want a Cluster API release such as v1.14, got "latest"`)
	in.APIVersion = V1Beta2
	assert.ErrorContains(t, in.ForClusterAPI("v1.10"), "Cluster API v1.10 serves only v1beta1")
}
