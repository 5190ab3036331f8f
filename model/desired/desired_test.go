package desired

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sample loads the quick-start sample (deploy/samples) as computation input.
func sample(t *testing.T) Input {
	t.Helper()
	in := Input{Templates: map[string]*unstructured.Unstructured{}, Names: names.Source{Seed: 42}}
	for _, f := range []string{"clusterclass.yaml", "cluster.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "samples", f))
		require.NoError(t, err)
		docs, err := decode.Documents(bytes.NewReader(data))
		require.NoError(t, err)
		for _, d := range docs {
			switch d.GetKind() {
			case "ClusterClass":
				in.Class = &clusterv1.ClusterClass{}
				require.NoError(t, decode.FromUnstructured(d, in.Class))
			case "Cluster":
				in.Cluster = &clusterv1.Cluster{}
				require.NoError(t, decode.FromUnstructured(d, in.Cluster))
				in.Cluster.UID = types.UID("0c4e6d2a-0000-4000-8000-000000000001")
			default:
				in.Templates[d.GetKind()+"/"+d.GetNamespace()+"/"+d.GetName()] = d
			}
		}
	}
	return in
}

func golden(t *testing.T, name string, objs []*unstructured.Unstructured) {
	t.Helper()
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range objs {
		list.Items = append(list.Items, *o)
	}
	js, err := list.MarshalJSON()
	require.NoError(t, err)
	got, err := yaml.JSONToYAML(js)
	require.NoError(t, err)
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run go test ./model/desired -update")
	assert.Equal(t, string(want), string(got), "desired objects differ from %s (rerun with -update if the change is intended)", path)
}

func TestQuickStartGolden(t *testing.T) {
	s, err := Compute(sample(t))
	require.NoError(t, err)
	objs, err := s.Objects()
	require.NoError(t, err)
	golden(t, "quickstart.golden.yaml", objs)
	assert.Equal(t, s.InfrastructureCluster.GetName(), s.InfrastructureRef.Name)
	assert.Equal(t, s.ControlPlane.GetName(), s.ControlPlaneRef.Name)
}

func TestNoInfrastructureCluster(t *testing.T) {
	// Seed 003: a class without an infrastructure template yields no infrastructure cluster.
	in := sample(t)
	in.Class.Spec.Infrastructure = nil
	s, err := Compute(in)
	require.NoError(t, err)
	assert.Nil(t, s.InfrastructureCluster)
	assert.Nil(t, s.InfrastructureRef)
	require.NotNil(t, s.ControlPlane)
	assert.Len(t, s.ClusterObjects(), 2)
}

func TestExistingNamesAreKept(t *testing.T) {
	in := sample(t)
	first, err := Compute(in)
	require.NoError(t, err)

	in.Cluster.Spec.InfrastructureRef = first.InfrastructureRef
	in.Cluster.Spec.ControlPlaneRef = first.ControlPlaneRef
	cp := first.ControlPlane.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(cp.Object, "existing-cp-infra", "spec", "machineTemplate", "infrastructureRef", "name"))
	in.Current.ControlPlane = cp
	md := first.MachineDeployments[0].Object.DeepCopy()
	md.Name = "renamed-by-someone"
	md.Spec.Template.Spec.Bootstrap.ConfigRef.Name = "existing-bootstrap"
	md.Spec.Template.Spec.InfrastructureRef.Name = "existing-infra"
	in.Current.MachineDeployments = map[string]*clusterv1.MachineDeployment{"md-0": md}
	in.Names = names.Source{Seed: 7} // a different seed must not matter for existing objects

	again, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, first.InfrastructureCluster.GetName(), again.InfrastructureCluster.GetName())
	assert.Equal(t, first.ControlPlane.GetName(), again.ControlPlane.GetName())
	assert.Equal(t, "existing-cp-infra", again.ControlPlaneInfrastructureTemplate.GetName())
	assert.Equal(t, "renamed-by-someone", again.MachineDeployments[0].Object.Name)
	assert.Equal(t, "existing-bootstrap", again.MachineDeployments[0].BootstrapTemplate.GetName())
	assert.Equal(t, "existing-infra", again.MachineDeployments[0].InfraTemplate.GetName())
	assert.NotEqual(t, first.MachineDeployments[1].Object.Name, again.MachineDeployments[1].Object.Name, "new objects take the new seed")
}

// TestNamesDoNotDependOnOtherObjects: each object's random suffix comes from its own stream, so a
// retry after a partial apply (some objects existing) picks the same names for the rest.
func TestNamesDoNotDependOnOtherObjects(t *testing.T) {
	in := sample(t)
	full, err := Compute(in)
	require.NoError(t, err)
	in.Cluster.Spec.InfrastructureRef = full.InfrastructureRef
	in.Current.MachineDeployments = map[string]*clusterv1.MachineDeployment{"md-1": full.MachineDeployments[1].Object}
	partial, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, full.ControlPlane.GetName(), partial.ControlPlane.GetName())
	assert.Equal(t, full.ControlPlaneInfrastructureTemplate.GetName(), partial.ControlPlaneInfrastructureTemplate.GetName())
	assert.Equal(t, full.MachineDeployments[0].Object.Name, partial.MachineDeployments[0].Object.Name)
	assert.Equal(t, full.MachineDeployments[0].BootstrapTemplate.GetName(), partial.MachineDeployments[0].BootstrapTemplate.GetName())
}

func TestErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Input)
		want string
	}{
		{"missing worker infrastructure template", func(in *Input) {
			delete(in.Templates, "SimMachineTemplate/default/quick-start-default-worker-machine")
		}, "ClusterClass default/quick-start: spec.workers.machineDeployments[class=default-worker].template.infrastructure.ref references SimMachineTemplate default/quick-start-default-worker-machine, which does not exist"},
		{"missing control plane template", func(in *Input) {
			delete(in.Templates, "SimControlPlaneTemplate/default/quick-start-control-plane")
		}, "spec.controlPlane.ref references SimControlPlaneTemplate default/quick-start-control-plane"},
		{"unknown worker class", func(in *Input) {
			in.Cluster.Spec.Topology.Workers.MachineDeployments[1].Class = "gpu"
		}, `spec.topology.workers.machineDeployments[1].class: MachineDeploymentClass "gpu" is not defined in ClusterClass default/quick-start`},
		{"bad naming template", func(in *Input) {
			bad := "{{ .cluster.nmae }}"
			in.Class.Spec.ControlPlane.NamingStrategy = &clusterv1.ControlPlaneClassNamingStrategy{Template: &bad}
		}, "spec.controlPlane.namingStrategy.template"},
		{"no topology", func(in *Input) { in.Cluster.Spec.Topology = nil }, "has no spec.topology"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			tc.edit(&in)
			_, err := Compute(in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestTopologyOverridesClass(t *testing.T) {
	in := sample(t)
	in.Cluster.Spec.Topology.ControlPlane.Metadata.Labels["class-cp-label"] = "from-topology"
	fd := "zone-b"
	in.Cluster.Spec.Topology.Workers.MachineDeployments[0].FailureDomain = &fd
	s, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, "from-topology", s.ControlPlane.GetLabels()["class-cp-label"])
	md := s.MachineDeployments[0].Object
	assert.Equal(t, "zone-b", *md.Spec.Template.Spec.FailureDomain)
	assert.Equal(t, "md-0", md.Labels[labels.MachineDeploymentName])
	assert.Nil(t, s.MachineDeployments[1].Object.Spec.Template.Spec.FailureDomain)
}

func TestIntentDropsStatusAndServerFields(t *testing.T) {
	md := &clusterv1.MachineDeployment{}
	md.APIVersion, md.Kind, md.Name, md.Namespace = "cluster.x-k8s.io/v1beta1", "MachineDeployment", "a", "ns"
	md.ResourceVersion, md.UID = "12", "uid"
	md.Status.Replicas = 3
	u, err := ToIntent(md)
	require.NoError(t, err)
	assert.NotContains(t, u.Object, "status")
	assert.Empty(t, u.GetResourceVersion())
	assert.Empty(t, u.GetUID())
	assert.Equal(t, "a", u.GetName())
	assert.Contains(t, u.Object, "spec")
}

func BenchmarkComputeQuickStart(b *testing.B) {
	t := &testing.T{}
	in := sample(t)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(in); err != nil {
			b.Fatal(err)
		}
	}
}
