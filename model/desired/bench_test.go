package desired

import (
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// benchInput is the sample class and Cluster scaled to n MachineDeployments and 20 patches: the
// sample's 3 patches plus 17 more, alternating between control plane and worker templates,
// half of them template-valued and half with an enabledIf.
func benchInput(b *testing.B, n int) Input {
	t := &testing.T{}
	in := sample(t)
	if t.Failed() {
		b.Fatal("loading the sample failed")
	}
	mds := make([]clusterv1.MachineDeploymentTopology, n)
	for i := range mds {
		mds[i] = clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: fmt.Sprintf("md-%d", i), Replicas: ptr(int32(3))}
	}
	in.Cluster.Spec.Topology.Workers.MachineDeployments = mds
	for len(in.Class.Spec.Patches) < 20 {
		i := len(in.Class.Spec.Patches)
		p := clusterv1.ClusterClassPatch{Name: fmt.Sprintf("extra-%d", i)}
		def := clusterv1.PatchDefinition{}
		if i%2 == 0 {
			def.Selector = clusterv1.PatchSelector{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlaneTemplate",
				MatchResources: clusterv1.PatchSelectorMatch{ControlPlane: ptr(true)}}
		} else {
			def.Selector = clusterv1.PatchSelector{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimMachineTemplate",
				MatchResources: clusterv1.PatchSelectorMatch{MachineDeploymentClass: &clusterv1.PatchSelectorMatchClasses{Names: []string{"*"}}}}
		}
		jp := clusterv1.JSONPatch{Op: "add", Path: fmt.Sprintf("/spec/template/spec/extra%d", i)}
		if i%4 < 2 {
			tmpl := fmt.Sprintf(`{{ .builtin.cluster.name }}-%d-{{ .region }}`, i)
			jp.ValueFrom = &clusterv1.JSONPatchValue{Template: tmpl}
		} else {
			jp.Value = &apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf(`{"n":%d,"list":["a","b"]}`, i))}
		}
		def.JSONPatches = []clusterv1.JSONPatch{jp}
		p.Definitions = []clusterv1.PatchDefinition{def}
		if i%3 == 0 {
			p.EnabledIf = `{{ if eq .region "sim-west-2" }}true{{ end }}`
		}
		in.Class.Spec.Patches = append(in.Class.Spec.Patches, p)
	}
	return in
}

// BenchmarkCompute measures one Cluster's desired state with 1, 10 and 50 MachineDeployments
// and 20 patches.
func BenchmarkCompute(b *testing.B) {
	for _, n := range []int{1, 10, 50} {
		in := benchInput(b, n)
		if _, err := Compute(in); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("machineDeployments=%d/patches=20", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compute(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
