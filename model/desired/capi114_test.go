package desired

// Tests of what changed with Cluster API v1.14, whose topology controller computes a Cluster from
// the v1beta2 forms of the Cluster and its class. Each test names the v1.14.2 function it follows.

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/model/api/conversion"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/patches"
)

func v114IntOrStr(s string) *intstr.IntOrString { v := intstr.Parse(s); return &v }

// v114Strategy builds a v1beta1 strategy; empty arguments stay unset.
func v114Strategy(typ, maxSurge, deletePolicy, maxInFlight string) *clusterv1.MachineDeploymentStrategy {
	s := &clusterv1.MachineDeploymentStrategy{Type: clusterv1.MachineDeploymentStrategyType(typ)}
	if maxSurge != "" || deletePolicy != "" {
		s.RollingUpdate = &clusterv1.MachineRollingUpdateDeployment{}
		if maxSurge != "" {
			s.RollingUpdate.MaxSurge = v114IntOrStr(maxSurge)
		}
		if deletePolicy != "" {
			s.RollingUpdate.DeletePolicy = ptr(deletePolicy)
		}
	}
	if maxInFlight != "" {
		s.Remediation = &clusterv1.RemediationStrategy{MaxInFlight: v114IntOrStr(maxInFlight)}
	}
	return s
}

// v114StrategyHub is what a v1beta1 strategy is on a v1beta2 MachineDeployment (Cluster API's
// conversion, through model/api/conversion): the rollout strategy, the deletion order and remediation.maxInFlight.
func v114StrategyHub(t *testing.T, s *clusterv1.MachineDeploymentStrategy) (hubv1.MachineDeploymentRolloutStrategy, hubv1.MachineSetDeletionOrder, *intstr.IntOrString) {
	t.Helper()
	md := &clusterv1.MachineDeployment{Spec: clusterv1.MachineDeploymentSpec{Strategy: s}}
	md.Spec.Template.Spec.InfrastructureRef = corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimMachineTemplate", Name: "x"}
	h, err := conversion.MachineDeploymentToHub(md)
	require.NoError(t, err)
	return h.Spec.Rollout.Strategy, h.Spec.Deletion.Order, h.Spec.Remediation.MaxInFlight
}

// TestMachineDeploymentStrategy_computeMachineDeployment follows v1.14.2's computeMachineDeployment
// (exp/topology/desiredstate) on the v1beta2 forms that Convert_v1beta1_MachineDeploymentClass_To_v1beta2
// and Convert_v1beta1_MachineDeploymentTopology_To_v1beta2 make of a v1beta1 strategy: the rollout
// strategy is the topology's when it sets any rollout field, else the class's; the deletion order
// and remediation.maxInFlight are each the topology's when set, else the class's.
func TestMachineDeploymentStrategy_computeMachineDeployment(t *testing.T) {
	after := &clusterv1.TopologyRollout{After: &metav1.Time{Time: metav1.Now().Add(3600e9)}}
	for _, tc := range []struct {
		name        string
		class, topo *clusterv1.MachineDeploymentStrategy
		topoRollout *clusterv1.TopologyRollout
		want        *clusterv1.MachineDeploymentStrategy
	}{
		{name: "neither"},
		{name: "the class's whole strategy", class: v114Strategy("RollingUpdate", "1", "Oldest", "2"),
			want: v114Strategy("RollingUpdate", "1", "Oldest", "2")},
		{name: "topology rollout replaces only the class's rollout", class: v114Strategy("RollingUpdate", "1", "Oldest", "2"),
			topo: v114Strategy("OnDelete", "", "", ""), want: v114Strategy("OnDelete", "", "Oldest", "2")},
		{name: "topology deletePolicy alone keeps the class's rollout", class: v114Strategy("RollingUpdate", "1", "Oldest", ""),
			topo: v114Strategy("", "", "Newest", ""), want: v114Strategy("RollingUpdate", "1", "Newest", "")},
		{name: "topology maxInFlight alone", class: v114Strategy("RollingUpdate", "1", "", "2"),
			topo: v114Strategy("", "", "", "50%"), want: v114Strategy("RollingUpdate", "1", "", "50%")},
		{name: "topology rollout.after alone drops the class's rollout strategy", class: v114Strategy("RollingUpdate", "1", "Random", "2"),
			topoRollout: after, want: v114Strategy("", "", "Random", "2")},
		{name: "class deletePolicy alone", class: v114Strategy("", "", "Newest", ""), want: v114Strategy("", "", "Newest", "")},
		{name: "an empty deletePolicy is unset", class: &clusterv1.MachineDeploymentStrategy{
			RollingUpdate: &clusterv1.MachineRollingUpdateDeployment{DeletePolicy: ptr("")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := sampleV1(t)
			x.Class.Spec.Workers.MachineDeployments[0].Strategy = tc.class
			md := &x.Cluster.Spec.Topology.Workers.MachineDeployments[0]
			md.Strategy, md.Rollout = tc.topo, tc.topoRollout
			s, err := Compute(x.hub(t))
			require.NoError(t, err)
			got := s.MachineDeployments[0].Object.Spec
			strategy, order, maxInFlight := v114StrategyHub(t, tc.want)
			assert.Equal(t, strategy, got.Rollout.Strategy)
			assert.Equal(t, order, got.Deletion.Order)
			assert.Equal(t, maxInFlight, got.Remediation.MaxInFlight)
		})
	}
}

// TestMachineDeploymentHealthCheck_maxInFlight follows v1.14.2's IsMachineDeploymentMachineHealthCheckEnabled
// and MachineDeploymentMachineHealthCheckClass (exp/topology/scope/blueprint.go) with the
// healthCheck.remediation.maxInFlight that Convert_v1beta1_MachineDeploymentClass_To_v1beta2 makes
// of strategy.remediation.maxInFlight: it alone defines a check, so every MachineDeployment of
// the class gets one (no conditions, the webhook's 10m startup timeout); a topology's maxInFlight
// defines an override that replaces the class's checks; an empty machineHealthCheck defines nothing.
func TestMachineDeploymentHealthCheck_maxInFlight(t *testing.T) {
	cond := []clusterv1.UnhealthyCondition{{Type: "Ready", Status: "False", Timeout: metav1.Duration{Duration: 300e9}}}
	for _, tc := range []struct {
		name        string
		classMHC    *clusterv1.MachineHealthCheckClass
		classStrat  *clusterv1.MachineDeploymentStrategy
		topoMHC     *clusterv1.MachineHealthCheckTopology
		topoStrat   *clusterv1.MachineDeploymentStrategy
		wantMHC     bool
		wantConds   []clusterv1.UnhealthyCondition
		wantTimeout string
	}{
		{name: "class maxInFlight alone", classStrat: v114Strategy("", "", "", "1"), wantMHC: true, wantTimeout: "10m0s"},
		{name: "class maxInFlight, topology enable false", classStrat: v114Strategy("", "", "", "1"),
			topoMHC: &clusterv1.MachineHealthCheckTopology{Enable: ptr(false)}},
		{name: "nothing defined"},
		{name: "empty class check", classMHC: &clusterv1.MachineHealthCheckClass{}},
		{name: "class check with only an empty unhealthyRange", classMHC: &clusterv1.MachineHealthCheckClass{UnhealthyRange: ptr("")}},
		{name: "class check", classMHC: &clusterv1.MachineHealthCheckClass{UnhealthyConditions: cond}, wantMHC: true,
			wantConds: cond, wantTimeout: "10m0s"},
		{name: "topology maxInFlight replaces the class's checks", classMHC: &clusterv1.MachineHealthCheckClass{UnhealthyConditions: cond,
			NodeStartupTimeout: &metav1.Duration{Duration: 900e9}}, topoStrat: v114Strategy("", "", "", "1"), wantMHC: true, wantTimeout: "10m0s"},
		{name: "topology rollout strategy keeps the class's check", classMHC: &clusterv1.MachineHealthCheckClass{UnhealthyConditions: cond},
			topoStrat: v114Strategy("OnDelete", "", "", ""), wantMHC: true, wantConds: cond, wantTimeout: "10m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := sampleV1(t)
			for i := range x.Class.Spec.Workers.MachineDeployments {
				x.Class.Spec.Workers.MachineDeployments[i].MachineHealthCheck = tc.classMHC
				x.Class.Spec.Workers.MachineDeployments[i].Strategy = tc.classStrat
			}
			for i := range x.Cluster.Spec.Topology.Workers.MachineDeployments {
				md := &x.Cluster.Spec.Topology.Workers.MachineDeployments[i]
				md.MachineHealthCheck, md.Strategy = tc.topoMHC, tc.topoStrat
			}
			s, err := Compute(x.hub(t))
			require.NoError(t, err)
			require.Len(t, s.MachineDeployments, 2)
			for _, md := range s.MachineDeployments {
				mhc := md.MachineHealthCheck
				if !tc.wantMHC {
					assert.Nil(t, mhc, md.TopologyName)
					continue
				}
				require.NotNil(t, mhc, md.TopologyName)
				var wantConds []hubv1.UnhealthyNodeCondition
				for _, c := range tc.wantConds {
					wantConds = append(wantConds, hubv1.UnhealthyNodeCondition{Type: c.Type, Status: c.Status, TimeoutSeconds: ptr(int32(c.Timeout.Seconds()))})
				}
				assert.Equal(t, wantConds, mhc.Spec.Checks.UnhealthyNodeConditions, md.TopologyName)
				assert.Equal(t, tc.wantTimeout, (time.Duration(*mhc.Spec.Checks.NodeStartupTimeoutSeconds) * time.Second).String(), md.TopologyName)
				assert.Nil(t, mhc.Spec.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo, md.TopologyName)
			}
		})
	}
}

// TestControlPlaneHealthCheck_IsDefined follows v1.14.2's IsControlPlaneMachineHealthCheckEnabled
// (exp/topology/scope/blueprint.go) on ControlPlaneClassHealthCheck.IsDefined after conversion: a
// check with no field that survives the conversion defines nothing.
func TestControlPlaneHealthCheck_IsDefined(t *testing.T) {
	for _, tc := range []struct {
		name  string
		class *clusterv1.MachineHealthCheckClass
		want  bool
	}{
		{"empty", &clusterv1.MachineHealthCheckClass{}, false},
		{"empty lists", &clusterv1.MachineHealthCheckClass{UnhealthyConditions: []clusterv1.UnhealthyCondition{}}, false},
		{"maxUnhealthy", &clusterv1.MachineHealthCheckClass{MaxUnhealthy: v114IntOrStr("40%")}, true},
		{"startup timeout", &clusterv1.MachineHealthCheckClass{NodeStartupTimeout: &metav1.Duration{}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := sampleV1(t)
			x.Class.Spec.ControlPlane.MachineHealthCheck = tc.class
			s, err := Compute(x.hub(t))
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.ControlPlaneMachineHealthCheck != nil)
		})
	}
}

// v114Builtins plans in and returns the "builtin" variable each patch target sees, by role.
func v114Builtins(t *testing.T, in Input) map[patches.Role]map[string]any {
	t.Helper()
	c := &computer{in: in, cluster: in.Cluster, class: in.Class, topo: &in.Cluster.Spec.Topology}
	require.NoError(t, c.resolveVariables())
	require.NoError(t, c.plan())
	out := map[patches.Role]map[string]any{}
	for _, tg := range c.targets {
		out[tg.Role] = tg.Variables["builtin"].(map[string]any)
	}
	return out
}

// TestClusterBuiltins_variablesGlobal follows v1.14.2's variables.Global
// (core/reconcilers/topology/cluster/patches/variables): builtin.cluster.network has the service
// domain and the CIDR lists that are set and no ipFamily (gone in v1.14); topology.classRef sits
// beside the deprecated class and classNamespace; metadata is the desired Cluster's (computeCluster):
// the Cluster's labels with cluster-name and topology-owned, its annotations with the upgrade step
// while one runs, less the last-applied and conversion-data annotations (cleanupAnnotations).
func TestClusterBuiltins_variablesGlobal(t *testing.T) {
	for _, tc := range []struct {
		name        string
		network     *clusterv1.ClusterNetwork
		annotations map[string]string
		wantNetwork any
		wantAnn     any
	}{
		{name: "no network", wantNetwork: nil},
		{name: "empty network", network: &clusterv1.ClusterNetwork{Pods: &clusterv1.NetworkRanges{CIDRBlocks: []string{}}}, wantNetwork: nil},
		{name: "dual-stack pods, no ipFamily", network: &clusterv1.ClusterNetwork{
			Pods: &clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16", "fd00::/48"}}},
			wantNetwork: map[string]any{"pods": []any{"192.168.0.0/16", "fd00::/48"}}},
		{name: "service domain and services", network: &clusterv1.ClusterNetwork{ServiceDomain: "c.local",
			Services: &clusterv1.NetworkRanges{CIDRBlocks: []string{"10.128.0.0/12"}}},
			wantNetwork: map[string]any{"serviceDomain": "c.local", "services": []any{"10.128.0.0/12"}}},
		{name: "cleaned annotations", annotations: map[string]string{"note": "x", "kubectl.kubernetes.io/last-applied-configuration": "{}",
			"cluster.x-k8s.io/conversion-data": "{}", labels.UpgradeStep: "v1.30.0"}, wantAnn: map[string]any{"note": "x"}},
		{name: "upgrade step while an upgrade runs", annotations: map[string]string{runtimev1.PendingHooksAnnotation: "AfterClusterUpgrade"},
			wantAnn: map[string]any{runtimev1.PendingHooksAnnotation: "AfterClusterUpgrade", labels.UpgradeStep: "v1.31.2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := sampleV1(t)
			x.Cluster.Spec.ClusterNetwork = tc.network
			in := x.hub(t)
			in.Cluster.Labels = map[string]string{"team": "a"}
			in.Cluster.Annotations = tc.annotations
			cb := v114Builtins(t, in)[patches.InfrastructureCluster]["cluster"].(map[string]any)
			assert.Equal(t, tc.wantNetwork, cb["network"])
			meta := cb["metadata"].(map[string]any)
			assert.Equal(t, map[string]any{"team": "a", labels.ClusterName: "demo", labels.TopologyOwned: ""}, meta["labels"])
			assert.Equal(t, tc.wantAnn, meta["annotations"])
			topo := cb["topology"].(map[string]any)
			assert.Equal(t, map[string]any{"name": "quick-start", "namespace": "default"}, topo["classRef"])
			assert.Equal(t, "quick-start", topo["class"])
		})
	}
}

// TestPartBuiltins_metadata follows v1.14.2's variables.ControlPlane, variables.MachineDeployment
// and variables.MachinePool: builtin.<part>.metadata is the desired object's own labels and
// annotations before patching, so the labels include the topology's (the topology's metadata over
// the class's, cluster-name, topology-owned and the pool's name label, computeControlPlane,
// computeMachineDeployment, computeMachinePool), not the Cluster's.
func TestPartBuiltins_metadata(t *testing.T) {
	in := sample(t)
	in.Cluster.Labels = map[string]string{"cluster-only": "x"}
	b := v114Builtins(t, in)
	topologyLabels := map[string]any{labels.ClusterName: "demo", labels.TopologyOwned: ""}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for _, m := range []map[string]any{topologyLabels, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		role patches.Role
		part string
		want map[string]any
	}{
		{patches.ControlPlane, "controlPlane", with(map[string]any{"tier": "control-plane", "class-cp-label": "from-class"})},
		{patches.ControlPlaneInfrastructure, "controlPlane", with(map[string]any{"tier": "control-plane", "class-cp-label": "from-class"})},
		{patches.MachineDeploymentInfrastructure, "machineDeployment", nil},
		{patches.MachinePoolInfrastructure, "machinePool", with(map[string]any{labels.MachinePoolName: "mp-0"})},
	} {
		t.Run(string(tc.role), func(t *testing.T) {
			part := b[tc.role][tc.part].(map[string]any)
			got := part["metadata"].(map[string]any)["labels"].(map[string]any)
			if tc.want == nil { // the last MachineDeployment planned: md-1, no topology labels of its own
				tc.want = with(map[string]any{"class-md-label": "from-class", labels.MachineDeploymentName: part["topologyName"]})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestTemplateRefs_classNamespace follows v1.14.2's Convert_v1beta1_LocalObjectTemplate_To_v1beta2
// conversion (the v1beta2 reference has no namespace) and ClusterClassTemplateReference.ToObjectReference
// (templates are read from the class's namespace): a reference's namespace is ignored, not refused.
func TestTemplateRefs_classNamespace(t *testing.T) {
	for _, tc := range []struct {
		name, refNamespace string
	}{
		{"no namespace", ""},
		{"the class's namespace", "default"},
		{"another namespace", "elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := sampleV1(t)
			x.Class.Spec.Infrastructure.Ref.Namespace = tc.refNamespace
			in := x.hub(t)
			for _, tr := range TemplateRefs(in.Class) {
				assert.Equal(t, "default", tr.Ref.Namespace, tr.Field)
			}
			s, err := Compute(in)
			require.NoError(t, err)
			assert.Equal(t, "quick-start-cluster", s.InfrastructureCluster.GetAnnotations()[labels.ClonedFromName])
		})
	}
	// A template that exists only in the namespace the reference names is not found.
	x := sampleV1(t)
	x.Class.Spec.Infrastructure.Ref.Namespace = "elsewhere"
	in := x.hub(t)
	tmpl := in.Templates["SimClusterTemplate/default/quick-start-cluster"]
	delete(in.Templates, "SimClusterTemplate/default/quick-start-cluster")
	tmpl.SetNamespace("elsewhere")
	in.Templates["SimClusterTemplate/elsewhere/quick-start-cluster"] = tmpl
	_, err := Compute(in)
	var missing *MissingTemplateError
	require.True(t, errors.As(err, &missing), "%v", err)
	assert.Equal(t, "default", missing.Ref.Namespace)
}

// TestShimOwner_reconcileClusterShim follows v1.14.2's reconcileClusterShim (the shim is added as
// an owner only while the infrastructure cluster or the control plane is to be created) and
// computeInfrastructureCluster / computeControlPlane (an existing object's intent carries only
// the shim reference the object already has, never the Cluster). An object the Cluster references
// exists (Cluster API fails reading it otherwise), even when the caller did not pass it as current.
func TestShimOwner_reconcileClusterShim(t *testing.T) {
	base := sample(t)
	first, err := Compute(base)
	require.NoError(t, err)
	shim := ShimOwner(base.Cluster, "shim-uid")
	clusterOwner := ClusterOwner(base.Cluster, "")
	current := func(u *unstructured.Unstructured, owners ...metav1.OwnerReference) *unstructured.Unstructured {
		c := u.DeepCopy()
		c.SetOwnerReferences(owners)
		return c
	}
	for _, tc := range []struct {
		name              string
		infraRef, cpRef   bool
		curInfra, curCP   *unstructured.Unstructured
		wantNeeded        bool
		wantInfra, wantCP []string
	}{
		{name: "creation", wantNeeded: true, wantInfra: []string{"Secret/demo-shim"}, wantCP: []string{"Secret/demo-shim"}},
		{name: "control plane still to create", infraRef: true, curInfra: current(first.InfrastructureCluster, clusterOwner),
			wantNeeded: true, wantInfra: []string{"Secret/demo-shim"}, wantCP: []string{"Secret/demo-shim"}},
		{name: "both exist, owned by the Cluster", infraRef: true, cpRef: true,
			curInfra: current(first.InfrastructureCluster, clusterOwner), curCP: current(first.ControlPlane, clusterOwner)},
		{name: "both exist, the shim reference is carried", infraRef: true, cpRef: true,
			curInfra: current(first.InfrastructureCluster, clusterOwner, shim), curCP: current(first.ControlPlane, shim),
			wantInfra: []string{"Secret/demo-shim"}, wantCP: []string{"Secret/demo-shim"}},
		{name: "both referenced, not passed as current", infraRef: true, cpRef: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sample(t)
			if tc.infraRef {
				in.Cluster.Spec.InfrastructureRef = hubRef(first.InfrastructureRef)
			}
			if tc.cpRef {
				in.Cluster.Spec.ControlPlaneRef = hubRef(first.ControlPlaneRef)
			}
			in.Current.InfrastructureCluster, in.Current.ControlPlane = tc.curInfra, tc.curCP
			s, err := Compute(in)
			require.NoError(t, err)
			assert.Equal(t, tc.wantNeeded, s.ShimNeeded)
			if s.ShimNeeded {
				s.AddShimOwner(shim)
			}
			assert.Equal(t, tc.wantInfra, ownerKinds(s.InfrastructureCluster.GetOwnerReferences()))
			assert.Equal(t, tc.wantCP, ownerKinds(s.ControlPlane.GetOwnerReferences()))
		})
	}
}

// TestControlPlaneContract_computeControlPlane follows v1.14.2's computeControlPlane
// (exp/topology/desiredstate) for a control plane whose CRD declares the v1beta2 contract
// (contract.GetContractVersionForVersion): the machine template reference is a contract reference
// under spec.machineTemplate.spec, the node timeouts are whole seconds under
// spec.machineTemplate.spec.deletion, and readiness gates and taints move under
// spec.machineTemplate.spec; the external patches are told that holder field
// (getControlPlaneHolderFieldPath). By the v1beta1 contract nothing of that is written.
func TestControlPlaneContract_computeControlPlane(t *testing.T) {
	for _, contract := range []string{"", "v1beta1", "v1beta2"} {
		in := sample(t)
		require.True(t, in.Class.Spec.ControlPlane.MachineInfrastructure.TemplateRef.IsDefined(), "the sample class has control plane machines")
		in.ControlPlaneContract = contract
		in.Class.Spec.ControlPlane.Deletion.NodeDrainTimeoutSeconds = ptr(int32(90))
		in.Cluster.Spec.Topology.ControlPlane.Deletion.NodeDeletionTimeoutSeconds = ptr(int32(30))
		in.Class.Spec.ControlPlane.Taints = []hubv1.MachineTaint{{Key: "dedicated", Value: "cp", Effect: "NoSchedule", Propagation: "Always"}}
		in.Class.Spec.ControlPlane.ReadinessGates = []hubv1.MachineReadinessGate{{ConditionType: "Ready"}}
		s, err := Compute(in)
		require.NoError(t, err)
		mt, _, _ := unstructured.NestedMap(s.ControlPlane.Object, "spec", "machineTemplate")
		infra := s.ControlPlaneInfrastructureTemplate
		require.NotNil(t, infra)
		if contract != "v1beta2" {
			assert.Equal(t, map[string]any{"apiVersion": infra.GetAPIVersion(), "kind": infra.GetKind(), "name": infra.GetName(), "namespace": infra.GetNamespace()}, mt["infrastructureRef"], contract)
			assert.Equal(t, "1m30s", mt["nodeDrainTimeout"], contract)
			assert.Equal(t, "30s", mt["nodeDeletionTimeout"], contract)
			assert.NotNil(t, mt["taints"], contract)
			assert.NotNil(t, mt["readinessGates"], contract)
			assert.NotContains(t, mt, "spec", contract)
			continue
		}
		assert.Equal(t, map[string]any{
			"infrastructureRef": map[string]any{"apiGroup": infra.GroupVersionKind().Group, "kind": infra.GetKind(), "name": infra.GetName()},
			"deletion":          map[string]any{"nodeDrainTimeoutSeconds": int64(90), "nodeDeletionTimeoutSeconds": int64(30)},
			"taints":            []any{map[string]any{"key": "dedicated", "value": "cp", "effect": "NoSchedule", "propagation": "Always"}},
			"readinessGates":    []any{map[string]any{"conditionType": "Ready"}},
		}, mt["spec"])
		for _, v1beta1Field := range []string{"infrastructureRef", "nodeDrainTimeout", "nodeDeletionTimeout", "taints", "readinessGates"} {
			assert.NotContains(t, mt, v1beta1Field, "the v1beta1 contract's field")
		}
		assert.Contains(t, mt, "metadata", "the machines' metadata stays where both contracts have it")
	}
}

// TestIPFamilyGone_variablesGlobal: Cluster API v1.14.2's builtin.cluster.network has no ipFamily
// (variables.Global), so an inline patch template that reads it renders Go's "<no value>" for the
// missing key, as Cluster API's template rendering does, and the patch applies that string.
func TestIPFamilyGone_variablesGlobal(t *testing.T) {
	in := sample(t)
	yes := true
	cp := in.Class.Spec.ControlPlane.TemplateRef
	in.Class.Spec.Patches = append(in.Class.Spec.Patches, hubv1.ClusterClassPatch{Name: "ip-family", Definitions: []hubv1.PatchDefinition{{
		Selector: hubv1.PatchSelector{APIVersion: cp.APIVersion, Kind: cp.Kind, MatchResources: hubv1.PatchSelectorMatch{ControlPlane: &yes}},
		JSONPatches: []hubv1.JSONPatch{{Op: "add", Path: "/spec/template/spec/ipFamily",
			ValueFrom: &hubv1.JSONPatchValue{Template: "{{ .builtin.cluster.network.ipFamily }}"}}},
	}}})
	s, err := Compute(in)
	require.NoError(t, err)
	got, _, _ := unstructured.NestedString(s.ControlPlane.Object, "spec", "ipFamily")
	assert.Equal(t, "<no value>", got)
}
