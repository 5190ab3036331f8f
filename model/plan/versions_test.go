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

// inVersion rewrites a plan file's Clusters, ClusterClasses and workload objects as their authors
// would write them in version: converted by Cluster API's rules, without conversion data.
func inVersion(t *testing.T, objs []*unstructured.Unstructured, version string) []*unstructured.Unstructured {
	t.Helper()
	v1beta1, err := conversion.DocumentsV1Beta1(objs)
	require.NoError(t, err)
	if version == V1Beta1 {
		return v1beta1
	}
	var out []*unstructured.Unstructured
	for _, o := range v1beta1 {
		c, converted, err := conversion.ToV1Beta2(o.DeepCopy())
		require.NoError(t, err)
		if converted {
			ann := c.GetAnnotations()
			delete(ann, conversion.DataAnnotation)
			if len(ann) == 0 {
				ann = nil
			}
			c.SetAnnotations(ann)
		}
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

// TestPlanSameInEitherVersion: every golden input (the samples, written as v1beta1; the book's,
// written as v1beta2) plans the same whether its Cluster and ClusterClass are written as v1beta1,
// as v1beta2, or converted to v1beta1 and back (Cluster API v1.11+ converts v1beta1 to its v1beta2
// hub before computing: core/webhooks/conversion ConvertClusterV1Beta1ToHub,
// ConvertClusterClassV1Beta1ToHub).
func TestPlanSameInEitherVersion(t *testing.T) {
	for name, objs := range map[string][]*unstructured.Unstructured{
		"samples": sampleObjects(t),
		"book":    fileObjects(t, filepath.Join("..", "desired", "testdata", "book-input.yaml")),
	} {
		t.Run(name, func(t *testing.T) {
			want := planFor(t, inVersion(t, objs, V1Beta1), "v1.14", "")
			for form, in := range map[string][]*unstructured.Unstructured{
				"v1beta2":                inVersion(t, objs, V1Beta2),
				"v1beta1 and back again": inVersion(t, inVersion(t, inVersion(t, objs, V1Beta2), V1Beta1), V1Beta2),
				"as written":             objs,
			} {
				got := planFor(t, in, "v1.14", "")
				require.Len(t, got.Objects, len(want.Objects), form)
				for i := range want.Objects {
					assert.Equal(t, want.Objects[i].Object, got.Objects[i].Object, "%s: %s %s", form, want.Objects[i].GetKind(), want.Objects[i].GetName())
				}
			}
		})
	}
}

// TestPlanV1Beta2CurrentObjects: a Cluster whose objects were written as v1beta2 (its
// MachineDeployments, MachineHealthChecks, and the Cluster with contract references) plans as
// all unchanged when nothing changed.
func TestPlanV1Beta2CurrentObjects(t *testing.T) {
	first := planFor(t, sampleObjects(t), "v1.14", "")
	objs := inVersion(t, sampleObjects(t), V1Beta2)
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

// TestPlanControlPlaneContract: a plan file holding the control plane's CustomResourceDefinition
// plans by the contract its labels declare for the version the class's template names (Cluster
// API v1.14.2 reads the CRD: contract.GetContractVersionForVersion, then computeControlPlane);
// without it, by the v1beta1 contract.
func TestPlanControlPlaneContract(t *testing.T) {
	crd := func(labels map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "simcontrolplanes.controlplane.cluster.x-k8s.io", "labels": labels},
			"spec":     map[string]any{"group": "controlplane.cluster.x-k8s.io", "names": map[string]any{"kind": "SimControlPlane", "plural": "simcontrolplanes"}},
		}}
	}
	machineTemplate := func(objs []*unstructured.Unstructured) map[string]any {
		res := planFor(t, objs, "v1.14", "")
		for _, o := range res.Objects {
			if o.GetKind() == "SimControlPlane" {
				mt, _, _ := unstructured.NestedMap(o.Object, "spec", "machineTemplate")
				return mt
			}
		}
		t.Fatal("no SimControlPlane planned")
		return nil
	}
	v1beta1 := machineTemplate(sampleObjects(t))
	assert.Contains(t, v1beta1, "infrastructureRef", "no CRD in the file: the v1beta1 contract")
	assert.Equal(t, v1beta1, machineTemplate(append(sampleObjects(t), crd(map[string]any{"cluster.x-k8s.io/v1beta1": "v1beta1"}))))

	v1beta2 := machineTemplate(append(sampleObjects(t), crd(map[string]any{"cluster.x-k8s.io/v1beta2": "v1beta1_v1beta2"})))
	assert.NotContains(t, v1beta2, "infrastructureRef")
	ref, _, _ := unstructured.NestedMap(v1beta2, "spec", "infrastructureRef")
	assert.Equal(t, "infrastructure.cluster.x-k8s.io", ref["apiGroup"], "a contract reference: %v", v1beta2)
	assert.NotContains(t, ref, "apiVersion")
}
