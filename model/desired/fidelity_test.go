package desired

// Tests that the desired state is what Cluster API's topology controller writes for the same
// input. Each test names the Cluster API function (v1.10 exp/topology/desiredstate, the
// topology reconciler and the webhooks; v1.11-v1.14 agree) whose behaviour it checks.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	v1 "github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
)

// TestClusterIntent_computeCluster: the Cluster's intent is its name, the two topology labels and
// the two references, nothing else (computeCluster, filtered by allowedPathsCluster); an existing
// reference keeps its apiVersion when group and kind agree (calculateRefDesiredAPIVersion): the
// hub's contract reference has none, the version read in v1beta1 comes in Current.RefVersions.
func TestClusterIntent_computeCluster(t *testing.T) {
	in := sample(t)
	in.Cluster.Labels = map[string]string{"team": "a"}
	in.Cluster.Annotations = map[string]string{"note": "x"}
	s, err := Compute(in)
	require.NoError(t, err)
	want := map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1",
		"kind":       "Cluster",
		"metadata": map[string]any{
			"name": "demo", "namespace": "default",
			"labels": map[string]any{labels.ClusterName: "demo", labels.TopologyOwned: ""},
		},
		"spec": map[string]any{
			"infrastructureRef": map[string]any{"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "SimCluster", "name": s.InfrastructureCluster.GetName(), "namespace": "default"},
			"controlPlaneRef":   map[string]any{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta1", "kind": "SimControlPlane", "name": s.ControlPlane.GetName(), "namespace": "default"},
		},
	}
	assert.Equal(t, want, s.Cluster.Object)

	for _, tc := range []struct {
		name, currentAPIVersion, currentKind, want string
	}{
		{"same group and kind, newer version kept", "infrastructure.cluster.x-k8s.io/v1beta2", "SimCluster", "infrastructure.cluster.x-k8s.io/v1beta2"},
		{"other kind: the desired ref", "infrastructure.cluster.x-k8s.io/v1beta2", "OtherCluster", "infrastructure.cluster.x-k8s.io/v1beta1"},
		{"other group: the desired ref", "infra.example.com/v1", "SimCluster", "infrastructure.cluster.x-k8s.io/v1beta1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			ref := &corev1.ObjectReference{APIVersion: tc.currentAPIVersion, Kind: tc.currentKind, Name: "demo-infra", Namespace: "default"}
			in.Cluster.Spec.InfrastructureRef = hubRef(ref)
			in.Current.RefVersions = RefVersions{}
			in.Current.RefVersions.Add("Cluster", in.Cluster.Name, ref)
			s, err := Compute(in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.InfrastructureRef.APIVersion)
			got, _, _ := unstructured.NestedString(s.Cluster.Object, "spec", "infrastructureRef", "apiVersion")
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestClusterIntent_upgradeStep: while an upgrade runs (the AfterClusterUpgrade hook is owed), the
// Cluster's intent carries the desired control plane version as the upgrade-step annotation, which
// KubeadmControlPlane's and the MachineSet controller's preflight checks read (Cluster API v1.14
// computeCluster and ClusterTopologyUpgradeStepAnnotation); otherwise it carries none, so the
// apply removes it.
func TestClusterIntent_upgradeStep(t *testing.T) {
	for _, tc := range []struct {
		name, pending, want string
	}{
		{"upgrading", "AfterControlPlaneUpgrade,AfterClusterUpgrade", "v1.31.2"},
		{"not upgrading", "", ""},
		{"only another hook owed", "AfterControlPlaneInitialized", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			if tc.pending != "" {
				in.Cluster.Annotations = map[string]string{runtimev1.PendingHooksAnnotation: tc.pending}
			}
			s, err := Compute(in)
			require.NoError(t, err)
			cpVersion, _, _ := unstructured.NestedString(s.ControlPlane.Object, "spec", "version")
			want := map[string]string(nil)
			if tc.want != "" {
				require.Equal(t, tc.want, cpVersion, "the sample's control plane version")
				want = map[string]string{labels.UpgradeStep: cpVersion}
			}
			assert.Equal(t, want, s.Cluster.GetAnnotations())
		})
	}
}

func ownerKinds(refs []metav1.OwnerReference) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Kind+"/"+r.Name)
	}
	return out
}

// TestOwnerReferences_templateToObject: the topology controller gives the Cluster as owner only to
// the cloned templates (templateToTemplate), the MachinePool's bootstrap config and infrastructure
// pool (computeMachinePool) and the health checks (computeMachineHealthCheck); the infrastructure
// cluster and control plane get none but the shim (computeInfrastructureCluster,
// computeControlPlane), the pools none at all (their controllers add the Cluster).
func TestOwnerReferences_templateToObject(t *testing.T) {
	s, err := Compute(sample(t))
	require.NoError(t, err)
	objs, err := s.Objects()
	require.NoError(t, err)
	got := map[string][]string{}
	for _, o := range objs {
		got[o.GetKind()] = ownerKinds(o.GetOwnerReferences())
	}
	cluster := []string{"Cluster/demo"}
	want := map[string][]string{
		"SimCluster":         nil,
		"SimControlPlane":    nil,
		"SimMachineTemplate": cluster,
		"SimConfigTemplate":  cluster,
		"MachineDeployment":  nil,
		"MachineHealthCheck": cluster,
		"SimConfig":          cluster,
		"SimMachinePool":     cluster,
		"MachinePool":        nil,
		"Cluster":            nil,
	}
	assert.Equal(t, want, got)
}

// TestClusterShim_reconcileClusterShim: while the infrastructure cluster or the control plane is
// to be created, both get the shim Secret as owner; an existing object keeps a shim reference it
// has (so applying does not drop it), and the shim goes once the Cluster owns both.
func TestClusterShim_reconcileClusterShim(t *testing.T) {
	in := sample(t)
	shim := desiredShimOwner(in.Cluster)
	s, err := Compute(in)
	require.NoError(t, err)
	assert.True(t, s.ShimNeeded, "nothing exists yet")
	s.AddShimOwner(shim)
	assert.Equal(t, []string{"Secret/demo-shim"}, ownerKinds(s.InfrastructureCluster.GetOwnerReferences()))
	assert.Equal(t, []string{"Secret/demo-shim"}, ownerKinds(s.ControlPlane.GetOwnerReferences()))
	assert.Equal(t, corev1.SecretType("cluster.x-k8s.io/secret"), Shim(in.Cluster, "").Type)
	assert.Equal(t, []string{"Cluster/demo"}, ownerKinds(Shim(in.Cluster, "").OwnerReferences))

	// Both exist; the control plane still has the shim reference, the infrastructure cluster not.
	infra, cp := s.InfrastructureCluster.DeepCopy(), s.ControlPlane.DeepCopy()
	infra.SetOwnerReferences([]metav1.OwnerReference{ClusterOwner(in.Cluster, "")})
	cp.SetOwnerReferences([]metav1.OwnerReference{shim})
	in.Current.InfrastructureCluster, in.Current.ControlPlane = infra, cp
	in.Cluster.Spec.InfrastructureRef, in.Cluster.Spec.ControlPlaneRef = hubRef(s.InfrastructureRef), hubRef(s.ControlPlaneRef)
	s, err = Compute(in)
	require.NoError(t, err)
	assert.False(t, s.ShimNeeded)
	assert.Empty(t, s.InfrastructureCluster.GetOwnerReferences())
	assert.Equal(t, []string{"Secret/demo-shim"}, ownerKinds(s.ControlPlane.GetOwnerReferences()), "kept while the object has it")

	for _, tc := range []struct {
		name      string
		infra, cp []metav1.OwnerReference
		noInfra   bool
		want      bool
	}{
		{"Cluster owns both, shim owns one", []metav1.OwnerReference{ClusterOwner(in.Cluster, "")}, []metav1.OwnerReference{ClusterOwner(in.Cluster, ""), shim}, false, true},
		{"Cluster owns one only", nil, []metav1.OwnerReference{ClusterOwner(in.Cluster, ""), shim}, false, false},
		{"shim owns none", []metav1.OwnerReference{ClusterOwner(in.Cluster, "")}, []metav1.OwnerReference{ClusterOwner(in.Cluster, "")}, false, false},
		{"no infrastructure cluster in the class", nil, []metav1.OwnerReference{ClusterOwner(in.Cluster, ""), shim}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			infra, cp := infra.DeepCopy(), cp.DeepCopy()
			infra.SetOwnerReferences(tc.infra)
			cp.SetOwnerReferences(tc.cp)
			assert.Equal(t, tc.want, ShimDeletable(in.Cluster, infra, cp, !tc.noInfra))
		})
	}
	assert.False(t, ShimDeletable(in.Cluster, nil, cp, true), "the infrastructure cluster does not exist yet")
}

func desiredShimOwner(c *clusterv1.Cluster) metav1.OwnerReference { return ShimOwner(c, "shim-uid") }

// TestControlPlaneMachineTemplate_computeControlPlane: with machine infrastructure, the control
// plane's labels and annotations (class, topology, cluster-name, topology-owned) are merged over
// the template's own machineTemplate.metadata, the control plane's values winning; with or without
// it, the timeouts and readiness gates (class value, topology override) are set.
func TestControlPlaneMachineTemplate_computeControlPlane(t *testing.T) {
	x := sampleV1(t)
	cpTemplate := x.In.Templates["SimControlPlaneTemplate/default/quick-start-control-plane"]
	require.NotNil(t, cpTemplate)
	require.NoError(t, unstructured.SetNestedField(cpTemplate.Object, map[string]any{
		"labels":      map[string]any{"tier": "from-template", "only-in-template": "kept"},
		"annotations": map[string]any{"template-note": "kept"},
	}, "spec", "template", "spec", "machineTemplate", "metadata"))
	x.Class.Spec.ControlPlane.ReadinessGates = []v1.MachineReadinessGate{{ConditionType: "ClassGate"}}
	x.Class.Spec.ControlPlane.NodeDrainTimeout = &metav1.Duration{Duration: 90e9}
	x.Cluster.Spec.Topology.ControlPlane.NodeDeletionTimeout = &metav1.Duration{Duration: 30e9}
	x.Cluster.Spec.Topology.ControlPlane.Metadata.Annotations = map[string]string{"topo-note": "cp"}
	in := x.hub(t)
	s, err := Compute(in)
	require.NoError(t, err)
	mt, _, _ := unstructured.NestedMap(s.ControlPlane.Object, "spec", "machineTemplate")
	assert.Equal(t, map[string]any{
		"labels": map[string]any{
			"tier": "control-plane", "class-cp-label": "from-class", "only-in-template": "kept",
			labels.ClusterName: "demo", labels.TopologyOwned: "",
		},
		"annotations": map[string]any{"template-note": "kept", "topo-note": "cp"},
	}, mt["metadata"])
	assert.Equal(t, []any{map[string]any{"conditionType": "ClassGate"}}, mt["readinessGates"])
	assert.Equal(t, "1m30s", mt["nodeDrainTimeout"])
	assert.Equal(t, "30s", mt["nodeDeletionTimeout"])

	// The topology's gates replace the class's.
	in.Cluster.Spec.Topology.ControlPlane.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "TopoGate", Polarity: "Negative"}}
	s, err = Compute(in)
	require.NoError(t, err)
	gates, _, _ := unstructured.NestedSlice(s.ControlPlane.Object, "spec", "machineTemplate", "readinessGates")
	assert.Equal(t, []any{map[string]any{"conditionType": "TopoGate", "polarity": "Negative"}}, gates)

	// Without machine infrastructure: timeouts and gates only.
	x = sampleV1(t)
	x.Class.Spec.ControlPlane.ReadinessGates = []v1.MachineReadinessGate{{ConditionType: "ClassGate"}}
	x.Class.Spec.ControlPlane.NodeDrainTimeout = &metav1.Duration{Duration: 90e9}
	x.Cluster.Spec.Topology.ControlPlane.NodeDeletionTimeout = &metav1.Duration{Duration: 30e9}
	x.Class.Spec.ControlPlane.MachineInfrastructure = nil
	x.Class.Spec.ControlPlane.MachineHealthCheck = nil
	s, err = Compute(x.hub(t))
	require.NoError(t, err)
	mt, _, _ = unstructured.NestedMap(s.ControlPlane.Object, "spec", "machineTemplate")
	assert.ElementsMatch(t, []string{"readinessGates", "nodeDrainTimeout", "nodeDeletionTimeout"}, SortedKeys(mt))
}

// TestInfrastructureClusterEndpoint_IgnorePaths: an empty host or a zero port in the
// infrastructure cluster's controlPlaneEndpoint is left out of the intent
// (InfrastructureClusterContract.IgnorePaths; an emptied map goes too, as FilterIntent does), and
// the Cluster's own endpoint is not copied into it.
func TestInfrastructureClusterEndpoint_IgnorePaths(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint map[string]any
		want     any
	}{
		{"both empty", map[string]any{"host": "", "port": int64(0)}, nil},
		{"empty host", map[string]any{"host": "", "port": int64(6443)}, map[string]any{"port": int64(6443)}},
		{"zero port", map[string]any{"host": "lb.example.com", "port": int64(0)}, map[string]any{"host": "lb.example.com"}},
		{"both set", map[string]any{"host": "lb.example.com", "port": int64(6443)}, map[string]any{"host": "lb.example.com", "port": int64(6443)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			in.Cluster.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "user.example.com", Port: 443}
			tmpl := in.Templates["SimClusterTemplate/default/quick-start-cluster"]
			require.NoError(t, unstructured.SetNestedField(tmpl.Object, tc.endpoint, "spec", "template", "spec", "controlPlaneEndpoint"))
			s, err := Compute(in)
			require.NoError(t, err)
			got, found, _ := unstructured.NestedFieldNoCopy(s.InfrastructureCluster.Object, "spec", "controlPlaneEndpoint")
			if tc.want == nil {
				assert.False(t, found, "no controlPlaneEndpoint at all")
				return
			}
			// Patched templates go through JSON: compare as JSON.
			want, _ := json.Marshal(tc.want)
			have, _ := json.Marshal(got)
			assert.JSONEq(t, string(want), string(have))
		})
	}
}

// TestPoolMetadata_computeMachineDeployment: a pool's labels are the topology's over the class's
// plus the topology labels; the upgrade-steering annotations are never copied.
func TestPoolMetadata_computeMachineDeployment(t *testing.T) {
	in := sample(t)
	md := &in.Cluster.Spec.Topology.Workers.MachineDeployments[0]
	md.Metadata.Annotations = map[string]string{labels.DeferUpgrade: "", labels.HoldUpgradeSequence: "", "keep": "me"}
	s, err := Compute(in)
	require.NoError(t, err)
	obj := s.MachineDeployments[0].Object
	assert.Equal(t, map[string]string{"keep": "me"}, obj.Annotations)
	assert.Equal(t, map[string]string{"keep": "me"}, obj.Spec.Template.ObjectMeta.Annotations)
	assert.Equal(t, obj.Labels, obj.Spec.Template.ObjectMeta.Labels)
	assert.Equal(t, map[string]string{labels.ClusterName: "demo", labels.TopologyOwned: "", labels.MachineDeploymentName: md.Name},
		obj.Spec.Selector.MatchLabels)
}

// TestTaintsAndRolloutAfter_computeControlPlane: taints (Cluster API v1.13) go to the control
// plane's machine template (the v1beta1 contract path spec.machineTemplate.taints; Cluster API's
// ControlPlaneMachineTemplate.Taints) and to the pools' machine templates, the topology's list
// over the class's (computeControlPlane, computeMachineDeployment, computeMachinePool); unset in
// both, nothing is written. rollout.after goes to the control plane's spec.rollout.after
// (ControlPlaneContract.RolloutAfter) and to a MachineDeployment's rolloutAfter (v1beta1 of
// spec.rollout.after); Topology.rolloutAfter has no function, as in Cluster API.
func TestTaintsAndRolloutAfter_computeControlPlane(t *testing.T) {
	in := sample(t)
	s, err := Compute(in)
	require.NoError(t, err)
	_, found, _ := unstructured.NestedFieldNoCopy(s.ControlPlane.Object, "spec", "machineTemplate", "taints")
	assert.False(t, found, "no taints anywhere: the field is left alone")
	_, found, _ = unstructured.NestedFieldNoCopy(s.ControlPlane.Object, "spec", "rollout")
	assert.False(t, found)
	assert.Nil(t, s.MachineDeployments[0].Object.Spec.Template.Spec.Taints)
	assert.True(t, s.MachineDeployments[0].Object.Spec.Rollout.After.IsZero())

	classTaint := v1.MachineTaint{Key: "example.com/class", Effect: "NoSchedule", Propagation: v1.MachineTaintPropagationAlways}
	topoTaint := v1.MachineTaint{Key: "example.com/topo", Value: "x", Effect: "PreferNoSchedule", Propagation: v1.MachineTaintPropagationOnInitialization}
	hubTaint := func(m v1.MachineTaint) []clusterv1.MachineTaint {
		return []clusterv1.MachineTaint{{Key: m.Key, Value: m.Value, Effect: m.Effect, Propagation: clusterv1.MachineTaintPropagation(m.Propagation)}}
	}
	x := sampleV1(t)
	x.Class.Spec.ControlPlane.Taints = []v1.MachineTaint{classTaint}
	for i := range x.Class.Spec.Workers.MachineDeployments {
		x.Class.Spec.Workers.MachineDeployments[i].Taints = []v1.MachineTaint{classTaint}
	}
	for i := range x.Class.Spec.Workers.MachinePools {
		x.Class.Spec.Workers.MachinePools[i].Taints = []v1.MachineTaint{classTaint}
	}
	topo := x.Cluster.Spec.Topology
	topo.Workers.MachineDeployments[1].Taints = []v1.MachineTaint{topoTaint}
	after := metav1.NewTime(time.Date(2026, 3, 9, 9, 0, 0, 0, time.UTC))
	topo.ControlPlane.Rollout = &v1.TopologyRollout{After: &after}
	topo.Workers.MachineDeployments[0].Rollout = &v1.TopologyRollout{After: &after}
	topo.RolloutAfter = &after
	s, err = Compute(x.hub(t))
	require.NoError(t, err)
	taints, _, _ := unstructured.NestedSlice(s.ControlPlane.Object, "spec", "machineTemplate", "taints")
	assert.Equal(t, []any{map[string]any{"key": "example.com/class", "effect": "NoSchedule", "propagation": "Always"}}, taints)
	v, _, _ := unstructured.NestedString(s.ControlPlane.Object, "spec", "rollout", "after")
	assert.Equal(t, "2026-03-09T09:00:00Z", v)
	mds := map[string]*clusterv1.MachineDeployment{}
	for _, md := range s.MachineDeployments {
		mds[md.TopologyName] = md.Object
	}
	assert.Equal(t, hubTaint(classTaint), mds["md-0"].Spec.Template.Spec.Taints, "the class's")
	assert.Equal(t, hubTaint(topoTaint), mds["md-1"].Spec.Template.Spec.Taints, "the topology's over the class's")
	assert.True(t, after.Equal(&mds["md-0"].Spec.Rollout.After))
	assert.True(t, mds["md-1"].Spec.Rollout.After.IsZero())
	assert.Equal(t, hubTaint(classTaint), s.MachinePools[0].Object.Spec.Template.Spec.Taints)

	// Topology.rolloutAfter alone changes nothing.
	base, err := Compute(sample(t))
	require.NoError(t, err)
	x = sampleV1(t)
	x.Cluster.Spec.Topology.RolloutAfter = &after
	s, err = Compute(x.hub(t))
	require.NoError(t, err)
	want, err := base.AllObjects()
	require.NoError(t, err)
	got, err := s.AllObjects()
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// TestUnhealthyMachineConditions_computeMachineHealthCheck: a health check's machine conditions
// (Cluster API v1.12) go into the MachineHealthCheck as the class or the topology defines them;
// a topology check that sets only them replaces the class's check (MachineHealthCheckClass.Defined).
func TestUnhealthyMachineConditions_computeMachineHealthCheck(t *testing.T) {
	x := sampleV1(t)
	cond := v1.UnhealthyMachineCondition{Type: "example.com/Stuck", Status: metav1.ConditionTrue, Timeout: metav1.Duration{Duration: 5 * time.Minute}}
	require.NotNil(t, x.Class.Spec.ControlPlane.MachineHealthCheck)
	x.Class.Spec.ControlPlane.MachineHealthCheck.UnhealthyMachineConditions = []v1.UnhealthyMachineCondition{cond}
	x.Cluster.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &v1.MachineHealthCheckTopology{
		MachineHealthCheckClass: v1.MachineHealthCheckClass{UnhealthyMachineConditions: []v1.UnhealthyMachineCondition{cond}}}
	s, err := Compute(x.hub(t))
	require.NoError(t, err)
	want := []clusterv1.UnhealthyMachineCondition{{Type: cond.Type, Status: cond.Status, TimeoutSeconds: ptr(int32(300))}}
	assert.Equal(t, want, s.ControlPlaneMachineHealthCheck.Spec.Checks.UnhealthyMachineConditions)
	md0 := s.MachineDeployments[0].MachineHealthCheck
	require.NotNil(t, md0)
	assert.Equal(t, want, md0.Spec.Checks.UnhealthyMachineConditions)
	assert.Empty(t, md0.Spec.Checks.UnhealthyNodeConditions, "the topology's check replaced the class's")
	assert.Empty(t, md0.Spec.Remediation.TriggerIf.UnhealthyInRange)
}

// TestPatchesSetMetadata_updateDesiredState: patches may set labels and annotations (Cluster
// API v1.14): a control plane template's spec.template.metadata reaches the control plane, a
// MachineDeployment template's own metadata reaches its clone; the cluster-name label and the
// cloned-from annotations stay as computed (alwaysPreserveLabelsAndAnnotations). Before patching
// the templates carry the desired metadata (createRequest), so a patch can add to it. (Admission
// keeps inline patches under /spec; the machine template's /metadata patch here stands for an
// external patch's answer, which takes the same path through patches.takeSpec.)
func TestPatchesSetMetadata_updateDesiredState(t *testing.T) {
	in := sample(t)
	js := func(v string) *apiextensionsv1.JSON { return &apiextensionsv1.JSON{Raw: []byte(v)} }
	in.Class.Spec.Patches = append(in.Class.Spec.Patches, clusterv1.ClusterClassPatch{Name: "metadata", Definitions: []clusterv1.PatchDefinition{{
		Selector: clusterv1.PatchSelector{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlaneTemplate",
			MatchResources: clusterv1.PatchSelectorMatch{ControlPlane: ptr(true)}},
		JSONPatches: []clusterv1.JSONPatch{
			{Op: "add", Path: "/spec/template/metadata/labels/team", Value: js(`"a"`)},
			{Op: "replace", Path: "/spec/template/metadata/labels/cluster.x-k8s.io~1cluster-name", Value: js(`"other"`)},
		},
	}, {
		Selector: clusterv1.PatchSelector{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimMachineTemplate",
			MatchResources: clusterv1.PatchSelectorMatch{MachineDeploymentClass: &clusterv1.PatchSelectorMatchClasses{Names: []string{"default-worker"}}}},
		JSONPatches: []clusterv1.JSONPatch{
			{Op: "add", Path: "/metadata/annotations/note", Value: js(`"patched"`)},
			{Op: "replace", Path: "/metadata/annotations/cluster.x-k8s.io~1cloned-from-name", Value: js(`"other"`)},
		},
	}}})
	s, err := Compute(in)
	require.NoError(t, err)
	assert.Equal(t, "a", s.ControlPlane.GetLabels()["team"])
	assert.Equal(t, "demo", s.ControlPlane.GetLabels()[labels.ClusterName], "preserved")
	infra := s.MachineDeployments[0].InfraTemplate
	assert.Equal(t, "patched", infra.GetAnnotations()["note"])
	assert.Equal(t, "quick-start-default-worker-machine", infra.GetAnnotations()[labels.ClonedFromName], "preserved")
	assert.Equal(t, "md-0", infra.GetLabels()[labels.MachineDeploymentName])

	// Without metadata patches nothing changes (the goldens hold that for the samples).
	base, err := Compute(sample(t))
	require.NoError(t, err)
	assert.Equal(t, base.InfrastructureCluster.GetLabels(), s.InfrastructureCluster.GetLabels())
	assert.Equal(t, base.MachineDeployments[0].BootstrapTemplate.GetAnnotations(), s.MachineDeployments[0].BootstrapTemplate.GetAnnotations(), "not selected")
	assert.Equal(t, base.MachinePools[0].InfraMachinePool.GetLabels(), s.MachinePools[0].InfraMachinePool.GetLabels())
}

// TestOwnerReferencesInServedVersion: owner references to the Cluster carry the version the API
// server serves Clusters in, as Cluster API v1.11+ writes them (clusterv1.GroupVersion, v1beta2,
// in its computeMachineDeployment / templateToObject and the shim of reconcileClusterShim): an
// owner reference written in another version is a change to every template on a takeover.
func TestOwnerReferencesInServedVersion(t *testing.T) {
	const v1beta2 = "cluster.x-k8s.io/v1beta2"
	for _, tc := range []struct{ served, want string }{
		{"", "cluster.x-k8s.io/v1beta1"},
		{v1beta2, v1beta2},
	} {
		in := sample(t)
		in.ClusterAPIVersion = tc.served
		s, err := Compute(in)
		require.NoError(t, err)
		var owners []metav1.OwnerReference
		owners = append(owners, s.ControlPlaneInfrastructureTemplate.GetOwnerReferences()...)
		for _, md := range s.MachineDeployments {
			owners = append(owners, md.BootstrapTemplate.GetOwnerReferences()...)
			owners = append(owners, md.InfraTemplate.GetOwnerReferences()...)
			if md.MachineHealthCheck != nil {
				owners = append(owners, md.MachineHealthCheck.OwnerReferences...)
			}
		}
		owners = append(owners, Shim(in.Cluster, tc.served).OwnerReferences...)
		require.NotEmpty(t, owners)
		for _, o := range owners {
			assert.Equal(t, "Cluster", o.Kind)
			assert.Equal(t, tc.want, o.APIVersion, "served %q", tc.served)
		}
	}
}
