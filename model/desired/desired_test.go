package desired

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/model/api/conversion"
	v1 "github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sample loads the quick-start sample (deploy/samples) as computation input.
func sample(t *testing.T) Input {
	t.Helper()
	return sampleV1(t).hub(t)
}

// sampleV1 is the quick-start sample before its conversion to the hub, for the tests that edit
// the v1beta1 Cluster or class (what Cluster API v1.14 converts, then computes from).
func sampleV1(t *testing.T) *v1Input {
	t.Helper()
	samples := filepath.Join("..", "..", "deploy", "samples")
	return loadV1(t, types.UID("0c4e6d2a-0000-4000-8000-000000000001"),
		filepath.Join(samples, "clusterclass.yaml"), filepath.Join(samples, "cluster.yaml"))
}

// v1Input is computation input whose Cluster and class are still v1beta1 (hub converts them).
type v1Input struct {
	Cluster *v1.Cluster
	Class   *v1.ClusterClass
	In      Input
}

// hub is the computation input, the Cluster and class converted to the hub through
// model/api/conversion, as a read from a server serving v1beta1 is.
func (x *v1Input) hub(t *testing.T) Input {
	t.Helper()
	in := x.In
	var err error
	in.Cluster, err = conversion.ClusterToHub(x.Cluster)
	require.NoError(t, err)
	in.Class, err = conversion.ClusterClassToHub(x.Class)
	require.NoError(t, err)
	return in
}

// loadInput decodes manifests into computation input: the ClusterClass, the Cluster (given
// uid, so names and owner references are stable) and every other document as a template.
func loadInput(t *testing.T, uid types.UID, files ...string) Input {
	t.Helper()
	return loadV1(t, uid, files...).hub(t)
}

// loadV1 is loadInput before the conversion to the hub.
func loadV1(t *testing.T, uid types.UID, files ...string) *v1Input {
	t.Helper()
	x := &v1Input{In: Input{Templates: map[string]*unstructured.Unstructured{}, Names: names.Source{Seed: 42}}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		docs, err := decode.Documents(bytes.NewReader(data))
		require.NoError(t, err)
		docs, err = conversion.DocumentsV1Beta1(docs) // inputs may be written as v1beta2
		require.NoError(t, err)
		for _, d := range docs {
			switch d.GetKind() {
			case "ClusterClass":
				x.Class = &v1.ClusterClass{}
				require.NoError(t, decode.FromUnstructured(d, x.Class))
			case "Cluster":
				x.Cluster = &v1.Cluster{}
				require.NoError(t, decode.FromUnstructured(d, x.Cluster))
				x.Cluster.UID = uid
			default:
				x.In.Templates[d.GetKind()+"/"+d.GetNamespace()+"/"+d.GetName()] = d
			}
		}
	}
	return x
}

// golden compares the objects, as Cluster API v1.14 holds them (cluster.x-k8s.io/v1beta2: compute
// with forV1Beta2), with a golden file.
func golden(t *testing.T, name string, objs []*unstructured.Unstructured) {
	t.Helper()
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, o := range objs {
		v, err := V1Beta2(o)
		require.NoError(t, err)
		list.Items = append(list.Items, *v)
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

// forV1Beta2 plans in for a management cluster that serves cluster.x-k8s.io as v1beta2 (Cluster
// API v1.11+): owner references to the Cluster in v1beta2.
func forV1Beta2(in Input) Input {
	in.ClusterAPIVersion = conversion.V1Beta2GroupVersion.String()
	in.WorkloadAPIVersion = in.ClusterAPIVersion
	return in
}

func TestQuickStartGolden(t *testing.T) {
	s, err := Compute(forV1Beta2(sample(t)))
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
	in.Class.Spec.Infrastructure = clusterv1.InfrastructureClass{}
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

	in.Cluster.Spec.InfrastructureRef = hubRef(first.InfrastructureRef)
	in.Cluster.Spec.ControlPlaneRef = hubRef(first.ControlPlaneRef)
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
	in.Cluster.Spec.InfrastructureRef = hubRef(full.InfrastructureRef)
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
			in.Class.Spec.ControlPlane.Naming.Template = bad
		}, "spec.controlPlane.namingStrategy.template"},
		{"no topology", func(in *Input) { in.Cluster.Spec.Topology = clusterv1.Topology{} }, "has no spec.topology"},
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
	in.Cluster.Spec.Topology.Workers.MachineDeployments[0].FailureDomain = fd
	s, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, "from-topology", s.ControlPlane.GetLabels()["class-cp-label"])
	md := s.MachineDeployments[0].Object
	assert.Equal(t, "zone-b", md.Spec.Template.Spec.FailureDomain)
	assert.Equal(t, "md-0", md.Labels[labels.MachineDeploymentName])
	assert.Empty(t, s.MachineDeployments[1].Object.Spec.Template.Spec.FailureDomain)
}

func TestIntentDropsStatusAndServerFields(t *testing.T) {
	md := &clusterv1.MachineDeployment{}
	md.APIVersion, md.Kind, md.Name, md.Namespace = "cluster.x-k8s.io/v1beta2", "MachineDeployment", "a", "ns"
	md.Spec.ClusterName = "c"
	md.ResourceVersion, md.UID = "12", "uid"
	md.Status.Replicas = ptr(int32(3))
	u, err := ToIntent(md)
	require.NoError(t, err)
	assert.NotContains(t, u.Object, "status")
	assert.Empty(t, u.GetResourceVersion())
	assert.Empty(t, u.GetUID())
	assert.Equal(t, "a", u.GetName())
	assert.Contains(t, u.Object, "spec")
}

func TestVariablesAreValidated(t *testing.T) {
	in := sample(t)
	in.Cluster.Spec.Topology.Variables = nil
	in.Cluster.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`"m5.large"`)
	_, err := Compute(in)
	var ie *InvalidError
	require.ErrorAs(t, err, &ie)
	msg := err.Error()
	assert.Contains(t, msg, "Cluster default/demo")
	assert.Contains(t, msg, "spec.topology.variables[region]: Required value")
	assert.Contains(t, msg, `spec.topology.workers.machineDeployments[1].variables.overrides[workerInstanceType].value: Invalid value: "m5.large"`)
}

// TestMachineHealthChecks follows Cluster API's computeMachineHealthCheck, the selectors package
// (ForControlPlaneMHC, ForMachineDeploymentMHC) and the MachineHealthCheck webhook's Default.
func TestMachineHealthChecks(t *testing.T) {
	in := sample(t)
	s, err := Compute(in)
	require.NoError(t, err)
	owner := []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Name: "demo", UID: in.Cluster.UID}}
	topologyLabels := map[string]string{labels.ClusterName: "demo", labels.TopologyOwned: ""}

	cp := s.ControlPlaneMachineHealthCheck
	require.NotNil(t, cp)
	assert.Equal(t, s.ControlPlane.GetName(), cp.Name)
	assert.Equal(t, map[string]string{labels.ControlPlane: "", labels.TopologyOwned: ""}, cp.Spec.Selector.MatchLabels)
	assert.Equal(t, topologyLabels, cp.Labels, "exactly topology-owned and cluster-name")
	assert.Equal(t, owner, cp.OwnerReferences, "owned by the Cluster, not by the control plane")
	assert.Equal(t, "33%", cp.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo.String(), "the class's value is kept")

	mdMHC := s.MachineDeployments[0].MachineHealthCheck
	require.NotNil(t, mdMHC)
	assert.Equal(t, s.MachineDeployments[0].Object.Name, mdMHC.Name)
	assert.Equal(t, owner, mdMHC.OwnerReferences, "owned by the Cluster, not by the MachineDeployment")
	assert.Equal(t, topologyLabels, mdMHC.Labels, "no deployment-name label")
	assert.Equal(t, map[string]string{labels.TopologyOwned: "", labels.MachineDeploymentName: "md-0"}, mdMHC.Spec.Selector.MatchLabels)
	assert.Equal(t, "[0-2]", mdMHC.Spec.Remediation.TriggerIf.UnhealthyInRange)
	assert.Nil(t, mdMHC.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo, "no remediation trigger written (Cluster API v1.14's MachineHealthCheck.Default sets none)")

	// The topology can turn a check off, or replace the class's definition.
	off := false
	in.Cluster.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: &off}
	in.Cluster.Spec.Topology.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentTopologyHealthCheck{
		Remediation: clusterv1.MachineDeploymentHealthCheckRemediation{
			TriggerIf:   clusterv1.RemediationTriggerIf{UnhealthyInRange: "[1-3]"},
			TemplateRef: clusterv1.MachineHealthCheckRemediationTemplateReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimRemediationTemplate", Name: "r"},
		},
	}
	s, err = Compute(in)
	require.NoError(t, err)
	assert.Nil(t, s.ControlPlaneMachineHealthCheck)
	got := s.MachineDeployments[0].MachineHealthCheck.Spec
	assert.Equal(t, "[1-3]", got.Remediation.TriggerIf.UnhealthyInRange)
	assert.Equal(t, DefaultNodeStartupTimeoutSeconds, *got.Checks.NodeStartupTimeoutSeconds, "a topology definition replaces the class's (no merge); the webhook default fills the gap")
	assert.EqualValues(t, 600, *got.Checks.NodeStartupTimeoutSeconds)
	assert.Equal(t, "SimRemediationTemplate", got.Remediation.TemplateRef.Kind, "v1beta2's remediation template reference has no namespace (the check's)")

	// Enabling a check nobody defines is an error naming the field.
	in = sample(t)
	in.Class.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{}
	on := true
	in.Cluster.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: &on}
	_, err = Compute(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.topology.controlPlane.machineHealthCheck.enable")
}

func TestMachinePools(t *testing.T) {
	s, err := Compute(sample(t))
	require.NoError(t, err)
	require.Len(t, s.MachinePools, 1)
	mp := s.MachinePools[0]
	assert.Regexp(t, `^demo-mp-0-[bcdfghjklmnpqrstvwxz2456789]{5}$`, mp.Object.Name)
	assert.Equal(t, "mp-0", mp.Object.Labels[labels.MachinePoolName])
	assert.EqualValues(t, 2, *mp.Object.Spec.Replicas)
	assert.Equal(t, "SimConfig", mp.BootstrapConfig.GetKind(), "a bootstrap config object, not a template")
	assert.Equal(t, "SimMachinePool", mp.InfraMachinePool.GetKind())
	assert.Equal(t, mp.BootstrapConfig.GetName(), mp.Object.Spec.Template.Spec.Bootstrap.ConfigRef.Name)
	assert.Equal(t, mp.InfraMachinePool.GetName(), mp.Object.Spec.Template.Spec.InfrastructureRef.Name)
	assert.Equal(t, "mp-0", mp.InfraMachinePool.GetLabels()[labels.MachinePoolName])
}

// TestUpgradeVersionsReachBuiltins: per-part versions (an upgrade in progress) set the objects'
// versions and the builtin variables patches see.
func TestUpgradeVersionsReachBuiltins(t *testing.T) {
	in := sample(t)
	in.Cluster.Spec.Topology.Version = "v1.32.0"
	in.Versions = Versions{ControlPlane: "v1.32.0", MachineDeployments: map[string]string{"md-0": "v1.31.2"}}
	s, err := Compute(in)
	require.NoError(t, err)
	v, _, _ := unstructured.NestedString(s.ControlPlane.Object, "spec", "version")
	assert.Equal(t, "v1.32.0", v)
	assert.Equal(t, "v1.31.2", s.MachineDeployments[0].Object.Spec.Template.Spec.Version)
	assert.Equal(t, "v1.32.0", s.MachineDeployments[1].Object.Spec.Template.Spec.Version)
	img0, _, _ := unstructured.NestedString(s.MachineDeployments[0].InfraTemplate.Object, "spec", "template", "spec", "image")
	img1, _, _ := unstructured.NestedString(s.MachineDeployments[1].InfraTemplate.Object, "spec", "template", "spec", "image")
	assert.Equal(t, "sim-node:v1.31.2", img0, "builtin.machineDeployment.version follows the pool's own version")
	assert.Equal(t, "sim-node:v1.32.0", img1)
}

func TestPatchErrorsNameTheClass(t *testing.T) {
	in := sample(t)
	bad := "{{ .region "
	in.Class.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom = &clusterv1.JSONPatchValue{Template: bad}
	_, err := Compute(in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `ClusterClass default/quick-start: patch "region" on SimClusterTemplate quick-start-cluster (InfrastructureCluster)`)
}

func ptr[T any](v T) *T { return &v }

// hubRef is a computed reference as the hub's Cluster holds it (a contract reference: group, kind,
// name); the zero reference for nil.
func hubRef(r *corev1.ObjectReference) clusterv1.ContractVersionedObjectReference {
	if r == nil {
		return clusterv1.ContractVersionedObjectReference{}
	}
	return clusterv1.ContractVersionedObjectReference{APIGroup: r.GroupVersionKind().Group, Kind: r.Kind, Name: r.Name}
}

// TestTemplateRotation: a cloned template whose spec changes gets a new name (and the parent's
// reference moves); a metadata-only change keeps the name. The new name is the same on every
// computation from the same input.
func TestTemplateRotation(t *testing.T) {
	in := sample(t)
	first, err := Compute(in)
	require.NoError(t, err)

	// The computed objects now exist.
	in.Cluster.Spec.InfrastructureRef, in.Cluster.Spec.ControlPlaneRef = hubRef(first.InfrastructureRef), hubRef(first.ControlPlaneRef)
	in.Current.ControlPlane = first.ControlPlane
	in.Current.MachineDeployments = map[string]*clusterv1.MachineDeployment{}
	in.Current.Templates = map[string]*unstructured.Unstructured{}
	for _, md := range first.MachineDeployments {
		in.Current.MachineDeployments[md.TopologyName] = md.Object
		for _, tmpl := range []*unstructured.Unstructured{md.BootstrapTemplate, md.InfraTemplate} {
			in.Current.Templates[RefKey(refTo(tmpl))] = tmpl
		}
	}
	in.Current.Templates[RefKey(refTo(first.ControlPlaneInfrastructureTemplate))] = first.ControlPlaneInfrastructureTemplate

	same, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, first.MachineDeployments[0].InfraTemplate.GetName(), same.MachineDeployments[0].InfraTemplate.GetName(), "nothing changed")
	assert.Equal(t, Unchanged, Compare(first.MachineDeployments[0].InfraTemplate, same.MachineDeployments[0].InfraTemplate))

	// Metadata only: the class template gains a label; updated in place.
	tmplKey := "SimMachineTemplate/default/quick-start-default-worker-machine"
	in.Templates[tmplKey].SetLabels(map[string]string{"new": "label"})
	meta, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, first.MachineDeployments[0].InfraTemplate.GetName(), meta.MachineDeployments[0].InfraTemplate.GetName())
	assert.Equal(t, MetadataOnly, Compare(first.MachineDeployments[0].InfraTemplate, meta.MachineDeployments[0].InfraTemplate))

	// Spec: rotated, for every pool using the class; the MachineDeployment's ref moves.
	require.NoError(t, unstructured.SetNestedField(in.Templates[tmplKey].Object, "ssd", "spec", "template", "spec", "disk"))
	rotated, err := Compute(in)
	require.NoError(t, err)
	for i, md := range rotated.MachineDeployments {
		old := first.MachineDeployments[i]
		assert.NotEqual(t, old.InfraTemplate.GetName(), md.InfraTemplate.GetName(), "%s rotated", md.TopologyName)
		assert.Regexp(t, `^demo-`+md.TopologyName+`-[bcdfghjklmnpqrstvwxz2456789]{5}$`, md.InfraTemplate.GetName())
		assert.Equal(t, md.InfraTemplate.GetName(), md.Object.Spec.Template.Spec.InfrastructureRef.Name)
		assert.Equal(t, old.BootstrapTemplate.GetName(), md.BootstrapTemplate.GetName(), "bootstrap template unchanged")
		assert.Equal(t, old.Object.Name, md.Object.Name, "the MachineDeployment keeps its name")
	}
	again, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, rotated.MachineDeployments[0].InfraTemplate.GetName(), again.MachineDeployments[0].InfraTemplate.GetName(), "rotation names are stable across retries")

	// The control plane machine template rotates the same way, and the control plane follows.
	cpKey := "SimMachineTemplate/default/quick-start-control-plane-machine"
	require.NoError(t, unstructured.SetNestedField(in.Templates[cpKey].Object, "sim.huge", "spec", "template", "spec", "instanceType"))
	cpRot, err := Compute(in)
	require.NoError(t, err)
	assert.NotEqual(t, first.ControlPlaneInfrastructureTemplate.GetName(), cpRot.ControlPlaneInfrastructureTemplate.GetName())
	ref, _, _ := unstructured.NestedString(cpRot.ControlPlane.Object, "spec", "machineTemplate", "infrastructureRef", "name")
	assert.Equal(t, cpRot.ControlPlaneInfrastructureTemplate.GetName(), ref)
}

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		have, want any
		ok         bool
	}{
		{map[string]any{"a": int64(1), "extra": "x"}, map[string]any{"a": float64(1)}, true},
		{map[string]any{"a": 1}, map[string]any{"a": 2}, false},
		{map[string]any{"l": []any{"a", "b"}}, map[string]any{"l": []any{"a"}}, false},
		{nil, map[string]any{}, true},
		{nil, map[string]any{"a": 1}, false},
		{map[string]any{"m": map[string]any{"x": 1, "y": 2}}, map[string]any{"m": map[string]any{"y": 2}}, true},
	} {
		assert.Equal(t, tc.ok, Covers(tc.have, tc.want), "%v covers %v", tc.have, tc.want)
	}
}

// TestBookGolden computes the docker-style class built from the book's examples (custom naming
// strategies, health checks with a topology opt-out, variables with nested defaults, overrides,
// version-aware and Pod Security Standard patches).
func TestBookGolden(t *testing.T) {
	in := loadInput(t, "b00c0000-0000-4000-8000-000000000002", filepath.Join("testdata", "book-input.yaml"))
	s, err := Compute(forV1Beta2(in))
	require.NoError(t, err)
	objs, err := s.Objects()
	require.NoError(t, err)
	golden(t, "book.golden.yaml", objs)

	assert.Equal(t, "my-docker-cluster-infra", s.InfrastructureCluster.GetName(), "infrastructure naming strategy")
	assert.Regexp(t, `^my-docker-cluster-cp-[bcdfghjklmnpqrstvwxz2456789]{5}$`, s.ControlPlane.GetName())
	assert.Regexp(t, `^md-0-my-docker-cluster-[bcdfghjklmnpqrstvwxz2456789]{5}$`, s.MachineDeployments[0].Object.Name)
	assert.Nil(t, s.MachineDeployments[0].MachineHealthCheck, "md-0 opts out")
	assert.NotNil(t, s.MachineDeployments[1].MachineHealthCheck)
	files, _, _ := unstructured.NestedSlice(s.ControlPlane.Object, "spec", "kubeadmConfigSpec", "files")
	require.Len(t, files, 1, "the PSS patch adds the admission configuration file")
	assert.Contains(t, files[0].(map[string]any)["content"], `enforce: "restricted"`)
	assert.Contains(t, files[0].(map[string]any)["content"], `audit: "restricted"`, "nested default")
}

// TestUpgradeAnnotationsStayOnTheTopology: defer-upgrade and hold-upgrade-sequence steer the
// upgrade; they are not copied to the pools (or their machines), as in Cluster API.
func TestUpgradeAnnotationsStayOnTheTopology(t *testing.T) {
	in := sample(t)
	w := in.Cluster.Spec.Topology.Workers
	w.MachineDeployments[0].Metadata.Annotations = map[string]string{labels.DeferUpgrade: "", labels.HoldUpgradeSequence: "", "keep": "me"}
	w.MachinePools[0].Metadata.Annotations = map[string]string{labels.DeferUpgrade: ""}
	s, err := Compute(in)
	require.NoError(t, err)
	md := s.MachineDeployments[0].Object
	assert.Equal(t, map[string]string{"keep": "me"}, md.Annotations)
	assert.Equal(t, map[string]string{"keep": "me"}, md.Spec.Template.ObjectMeta.Annotations)
	assert.NotContains(t, s.MachinePools[0].Object.Annotations, labels.DeferUpgrade)
	assert.NotContains(t, s.MachinePools[0].Object.Spec.Template.ObjectMeta.Annotations, labels.DeferUpgrade)
}
