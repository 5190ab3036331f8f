//go:build integration

package integration

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/workflows"
)

const (
	classFile   = "deploy/samples/clusterclass.yaml"
	clusterFile = "deploy/samples/cluster.yaml"
)

// TestCreateClusterFromClass applies the sample ClusterClass and Cluster and checks that every
// topology object exists with Cluster API's names, labels, references, replicas and version, that
// the Cluster reaches Provisioned, and that its workflow is visible through the Temporal client.
func TestCreateClusterFromClass(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)

	c := e.waitReconciled("demo", 90*time.Second)
	assert.True(t, c.Status.InfrastructureReady)
	assert.True(t, c.Status.ControlPlaneReady)
	require.NotNil(t, c.Status.Conditions.Get("TopologyReconciled"))
	assert.Equal(t, corev1.ConditionTrue, c.Status.Conditions.Get("TopologyReconciled").Status)
	assert.Equal(t, "demo-", c.Spec.ControlPlaneEndpoint.Host[:5], "endpoint copied from the infrastructure cluster")
	assert.EqualValues(t, 6443, c.Spec.ControlPlaneEndpoint.Port)

	// `starter status` without a name lists it, with its workflow's step.
	e.waitSettled("demo")
	rows, err := clusterstatus.List(e.ctx, kc, tc, e.ns)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, clusterstatus.Row{Cluster: e.ns + "/demo", Class: "quick-start", Version: c.Spec.Topology.Version,
		Phase: "Provisioned", Topology: "True", Step: "settled"}, rows[0])

	// owned: topology labels, and the Cluster as owner: through the topology for cloned templates
	// and MachinePool objects, through the Cluster controller role (as controller, for the
	// infrastructure cluster and control plane) otherwise. A shim reference may remain: this stack
	// has no garbage collector to drop it after the shim is deleted.
	ownedAs := func(u *unstructured.Unstructured, controller bool) {
		t.Helper()
		assert.Equal(t, "demo", u.GetLabels()[labels.ClusterName], "%s %s cluster-name label", u.GetKind(), u.GetName())
		_, ok := u.GetLabels()[labels.TopologyOwned]
		assert.True(t, ok, "%s %s topology owned label", u.GetKind(), u.GetName())
		var clusterOwners int
		for _, o := range u.GetOwnerReferences() {
			switch o.Kind {
			case "Cluster":
				clusterOwners++
				assert.Equal(t, c.UID, o.UID)
				assert.Equal(t, controller, o.Controller != nil && *o.Controller, "%s %s: Cluster owner as controller", u.GetKind(), u.GetName())
			case "Secret":
				assert.Equal(t, desired.ShimName("demo"), o.Name)
			default:
				t.Errorf("%s %s: unexpected owner %s %s", u.GetKind(), u.GetName(), o.Kind, o.Name)
			}
		}
		assert.Equal(t, 1, clusterOwners, "%s %s: one Cluster owner", u.GetKind(), u.GetName())
	}
	owned := func(u *unstructured.Unstructured) { t.Helper(); ownedAs(u, false) }
	clonedFrom := func(u *unstructured.Unstructured, name, groupKind string) {
		t.Helper()
		assert.Equal(t, name, u.GetAnnotations()[labels.ClonedFromName], "%s %s cloned-from-name", u.GetKind(), u.GetName())
		assert.Equal(t, groupKind, u.GetAnnotations()[labels.ClonedFromGroupKind], "%s %s cloned-from-groupkind", u.GetKind(), u.GetName())
	}

	// Infrastructure cluster: cloned from the class template, named by the default strategy.
	require.NotNil(t, c.Spec.InfrastructureRef)
	assert.Equal(t, "SimCluster", c.Spec.InfrastructureRef.Kind)
	assert.Regexp(t, `^demo-[bcdfghjklmnpqrstvwxz2456789]{5}$`, c.Spec.InfrastructureRef.Name)
	infra := e.get(c.Spec.InfrastructureRef)
	ownedAs(infra, true)
	clonedFrom(infra, "quick-start-cluster", "SimClusterTemplate.infrastructure.cluster.x-k8s.io")
	region, _, _ := unstructured.NestedString(infra.Object, "spec", "region")
	assert.Equal(t, "sim-west-2", region, "patched from the Cluster's region variable")

	// Control plane: version and replicas from the topology, metadata merged (topology wins).
	require.NotNil(t, c.Spec.ControlPlaneRef)
	cp := e.get(c.Spec.ControlPlaneRef)
	ownedAs(cp, true)
	clonedFrom(cp, "quick-start-control-plane", "SimControlPlaneTemplate.controlplane.cluster.x-k8s.io")
	st, err := contract.ReadControlPlane(cp)
	require.NoError(t, err)
	assert.Equal(t, "v1.31.2", st.DesiredVersion)
	assert.Equal(t, "v1.31.2", st.Version)
	require.NotNil(t, st.DesiredReplicas)
	assert.EqualValues(t, 3, *st.DesiredReplicas)
	assert.True(t, st.Initialized)
	assert.Equal(t, "control-plane", cp.GetLabels()["tier"])
	assert.Equal(t, "from-class", cp.GetLabels()["class-cp-label"])
	machineLabels, _, _ := unstructured.NestedStringMap(cp.Object, "spec", "machineTemplate", "metadata", "labels")
	assert.Equal(t, map[string]string{"tier": "control-plane", "class-cp-label": "from-class", labels.ClusterName: "demo", labels.TopologyOwned: ""}, machineLabels)
	repo, _, _ := unstructured.NestedString(cp.Object, "spec", "imageRepository")
	assert.Equal(t, "registry.k8s.io", repo, "patched from the defaulted imageRepository variable")
	cpMHC := e.getTyped(kube.V1Beta1MachineHealthChecks, cp.GetName(), &clusterv1.MachineHealthCheck{}).(*clusterv1.MachineHealthCheck)
	assert.Equal(t, c.UID, cpMHC.OwnerReferences[0].UID, "control plane MachineHealthCheck owned by the Cluster")
	assert.Equal(t, map[string]string{labels.ControlPlane: "", labels.TopologyOwned: ""}, cpMHC.Spec.Selector.MatchLabels)

	// Control plane machine template: a clone named <cluster>-<random> (Cluster API's names package).
	cpInfraRef, err := contract.ObjectRef(cp, contract.ControlPlaneInfrastructureRef)
	require.NoError(t, err)
	require.NotNil(t, cpInfraRef)
	assert.Regexp(t, `^demo-[bcdfghjklmnpqrstvwxz2456789]{5}$`, cpInfraRef.Name)
	assert.NotEqual(t, cp.GetName(), cpInfraRef.Name)
	cpInfra := e.get(cpInfraRef)
	owned(cpInfra)
	clonedFrom(cpInfra, "quick-start-control-plane-machine", "SimMachineTemplate.infrastructure.cluster.x-k8s.io")

	// MachineDeployments: one per topology entry, with templates cloned per pool.
	mds := e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo")
	require.Len(t, mds, 2)
	byPool := map[string]*clusterv1.MachineDeployment{}
	for i := range mds {
		md := &clusterv1.MachineDeployment{}
		require.NoError(t, decode.FromUnstructured(&mds[i], md))
		owned(&mds[i])
		byPool[md.Labels[labels.MachineDeploymentName]] = md
	}
	for pool, want := range map[string]struct {
		replicas     int32
		labels       map[string]string
		instanceType string
	}{
		"md-0": {2, map[string]string{"pool": "general", "class-md-label": "from-class"}, "sim.medium"},
		"md-1": {1, map[string]string{"class-md-label": "from-class"}, "sim.xlarge"},
	} {
		md := byPool[pool]
		require.NotNil(t, md, "MachineDeployment for pool %s", pool)
		assert.Regexp(t, `^demo-`+pool+`-[bcdfghjklmnpqrstvwxz2456789]{5}$`, md.Name)
		assert.Equal(t, "demo", md.Spec.ClusterName)
		require.NotNil(t, md.Spec.Replicas)
		assert.Equal(t, want.replicas, *md.Spec.Replicas, pool)
		require.NotNil(t, md.Spec.Template.Spec.Version)
		assert.Equal(t, "v1.31.2", *md.Spec.Template.Spec.Version)
		assert.Equal(t, map[string]string{labels.ClusterName: "demo", labels.TopologyOwned: "", labels.MachineDeploymentName: pool}, md.Spec.Selector.MatchLabels)
		for k, v := range want.labels {
			assert.Equal(t, v, md.Labels[k], "%s label %s", pool, k)
			assert.Equal(t, v, md.Spec.Template.ObjectMeta.Labels[k], "%s machine label %s", pool, k)
		}
		boot := e.get(md.Spec.Template.Spec.Bootstrap.ConfigRef)
		owned(boot)
		assert.Equal(t, pool, boot.GetLabels()[labels.MachineDeploymentName])
		clonedFrom(boot, "quick-start-default-worker-bootstrap", "SimConfigTemplate.bootstrap.cluster.x-k8s.io")
		infraTmpl := e.get(&md.Spec.Template.Spec.InfrastructureRef)
		owned(infraTmpl)
		clonedFrom(infraTmpl, "quick-start-default-worker-machine", "SimMachineTemplate.infrastructure.cluster.x-k8s.io")
		it, _, _ := unstructured.NestedString(infraTmpl.Object, "spec", "template", "spec", "instanceType")
		assert.Equal(t, want.instanceType, it, "%s instanceType: variable default or the pool's override", pool)
		img, _, _ := unstructured.NestedString(infraTmpl.Object, "spec", "template", "spec", "image")
		assert.Equal(t, "sim-node:v1.31.2", img, "version-aware patch")
		mhc := e.getTyped(kube.V1Beta1MachineHealthChecks, md.Name, &clusterv1.MachineHealthCheck{}).(*clusterv1.MachineHealthCheck)
		assert.Equal(t, c.UID, mhc.OwnerReferences[0].UID, "%s MachineHealthCheck owned by the Cluster", pool)
		assert.Nil(t, mhc.Spec.MaxUnhealthy, "%s MachineHealthCheck: no remediation trigger (Cluster API v1.14 writes none)", pool)
		require.NotNil(t, mhc.Spec.NodeStartupTimeout)
		assert.Equal(t, "10m0s", mhc.Spec.NodeStartupTimeout.Duration.String(), "%s MachineHealthCheck with the webhook's default", pool)
	}

	// The MachinePool, its bootstrap config and infrastructure pool.
	mps := e.list(kube.V1Beta1MachinePools, labels.ClusterName+"=demo")
	require.Len(t, mps, 1)
	mp := &clusterv1.MachinePool{}
	require.NoError(t, decode.FromUnstructured(&mps[0], mp))
	owned(&mps[0])
	assert.Equal(t, "mp-0", mp.Labels[labels.MachinePoolName])
	assert.EqualValues(t, 2, *mp.Spec.Replicas)
	bootCfg := e.get(mp.Spec.Template.Spec.Bootstrap.ConfigRef)
	assert.Equal(t, "SimConfig", bootCfg.GetKind())
	owned(bootCfg)
	infraPool := e.get(&mp.Spec.Template.Spec.InfrastructureRef)
	assert.Equal(t, "SimMachinePool", infraPool.GetKind())
	it, _, _ := unstructured.NestedString(infraPool.Object, "spec", "instanceType")
	assert.Equal(t, "sim.small", it)

	// The workflow is visible through the Temporal client, with its search attributes.
	id := workflows.WorkflowID(e.ns, "demo")
	desc, err := tc.DescribeWorkflowExecution(context.Background(), id, "")
	require.NoError(t, err)
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.WorkflowExecutionInfo.Status)
	assert.Equal(t, workflows.ClusterWorkflowType, desc.WorkflowExecutionInfo.Type.Name)
	e.eventually(10*time.Second, "search attribute TopoflowPhase=Provisioned", func() (bool, string) {
		d, err := tc.DescribeWorkflowExecution(context.Background(), id, "")
		if err != nil {
			return false, err.Error()
		}
		got := string(d.WorkflowExecutionInfo.SearchAttributes.GetIndexedFields()["TopoflowPhase"].GetData())
		return got == `"Provisioned"`, got
	})
	e.eventually(10*time.Second, "query state settled", func() (bool, string) {
		v, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryState)
		if err != nil {
			return false, err.Error()
		}
		var s workflows.State
		if err := v.Get(&s); err != nil {
			return false, err.Error()
		}
		return s.Step == "settled" && s.Phase == clusterv1.ClusterPhaseProvisioned && s.Class == "quick-start", fmt.Sprintf("%+v", s)
	})

	// Day 2: scale a pool, change a pool's labels, remove a pool, add one; the same path applies them.
	removed := byPool["md-1"]
	c = e.cluster("demo")
	c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr(int32(3))
	c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels["pool"] = "renamed"
	c.Spec.Topology.Workers.MachineDeployments = append(c.Spec.Topology.Workers.MachineDeployments[:1],
		clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-2", Replicas: ptr(int32(1))})
	e.updateTopology(c)
	e.eventually(60*time.Second, "day-2 changes applied", func() (bool, string) {
		got := map[string]string{}
		for _, u := range e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo") {
			r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			got[u.GetLabels()[labels.MachineDeploymentName]] = fmt.Sprintf("%d/%s", r, u.GetLabels()["pool"])
		}
		want := map[string]string{"md-0": "3/renamed", "md-2": "1/"}
		return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprint(got)
	})
	e.eventually(30*time.Second, "removed pool's templates and health check deleted", func() (bool, string) {
		left := []string{}
		for _, ref := range []*corev1.ObjectReference{removed.Spec.Template.Spec.Bootstrap.ConfigRef, &removed.Spec.Template.Spec.InfrastructureRef,
			{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "MachineHealthCheck", Name: removed.Name}} {
			if _, err := kc.GetRef(e.ctx, ref, e.ns); err == nil {
				left = append(left, ref.Kind+" "+ref.Name)
			}
		}
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestMissingClassThenTemplate: a Cluster naming a missing ClusterClass gets a condition naming it;
// once the class appears but references a missing template, the condition names the template;
// when the template appears, the Cluster converges. The workflow stays alive throughout.
func TestMissingClassThenTemplate(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(clusterFile)
	id := workflows.WorkflowID(e.ns, "demo")

	e.eventually(30*time.Second, "missing ClusterClass reported", func() (bool, string) {
		c := e.cluster("demo")
		cond := c.Status.Conditions.Get("TopologyReconciled")
		if cond == nil {
			return false, "no TopologyReconciled condition"
		}
		want := fmt.Sprintf("ClusterClass %s/quick-start (spec.topology.classRef) not found", e.ns)
		return cond.Status == corev1.ConditionFalse && cond.Reason == "TopologyReconcileFailed" && cond.Message == want &&
			c.Status.Phase == clusterv1.ClusterPhasePending, fmt.Sprintf("phase=%s %v", c.Status.Phase, conditionSummary(c.Status.Conditions))
	})
	assertRunning(t, id)

	// The class arrives, but one worker template is still missing.
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetName() == "quick-start-default-worker-machine" {
			u.SetKind("")
		}
	})
	e.eventually(30*time.Second, "missing template reported", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		if cond == nil {
			return false, "no condition"
		}
		return cond.Status == corev1.ConditionFalse &&
			strings.Contains(cond.Message, "SimMachineTemplate "+e.ns+"/quick-start-default-worker-machine") &&
			strings.Contains(cond.Message, "spec.workers.machineDeployments[class=default-worker].template.infrastructure.ref"), cond.Message
	})
	assertRunning(t, id)

	// The template arrives: the workflow converges without any change to the Cluster.
	e.applyFile(classFile, onlyKinds("SimMachineTemplate"))
	e.waitReconciled("demo", 90*time.Second)
	assert.Len(t, e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo"), 2)
	assertRunning(t, id)

	// The class is deleted from under a settled Cluster: reported at once (not at the next
	// resync), and nothing of the topology is touched.
	e.waitSettled("demo")
	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(e.ns).Delete(e.ctx, "quick-start", metav1.DeleteOptions{}))
	e.eventually(15*time.Second, "deleted ClusterClass reported", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		want := fmt.Sprintf("ClusterClass %s/quick-start (spec.topology.classRef) not found", e.ns)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Message == want, fmt.Sprint(cond)
	})
	assert.Len(t, e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo"), 2, "nothing deleted")
	assertRunning(t, id)
}

// TestCreateAppliesPoolsWithControlPlane: with slow providers, the pools are created in the pass
// that creates the control plane, as Cluster API v1.14 does (computeMachineDeploymentVersion: a
// control plane about to be created is stable); the topology is reconciled while the Cluster is
// still Provisioning, and it goes Provisioned once the providers are done.
func TestCreateAppliesPoolsWithControlPlane(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "Cluster" {
			u.SetAnnotations(map[string]string{"sim.topoflow.dev/provision-delay": "4s"})
		}
	})
	c := e.waitPhase("demo", clusterv1.ClusterPhaseProvisioning, 20*time.Second)
	assert.False(t, c.Status.InfrastructureReady)
	assert.Len(t, e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo"), 2, "the pools with the control plane")
	assert.Len(t, e.list(kube.V1Beta1MachinePools, labels.ClusterName+"=demo"), 1)
	cond := c.Status.Conditions.Get("TopologyReconciled")
	require.NotNil(t, cond)
	assert.Equal(t, corev1.ConditionTrue, cond.Status, "%+v", cond)

	// Provisioned follows the infrastructure; the control plane initializes on its own time, and
	// the Cluster's ControlPlaneInitialized condition follows it.
	c = e.waitPhase("demo", clusterv1.ClusterPhaseProvisioned, 60*time.Second)
	e.eventually(60*time.Second, "the control plane initialized and reported on the Cluster", func() (bool, string) {
		st, err := contract.ReadControlPlane(e.get(c.Spec.ControlPlaneRef))
		require.NoError(t, err)
		cond := e.cluster("demo").Status.Conditions.Get("ControlPlaneInitialized")
		return st.Initialized && cond != nil && cond.Status == corev1.ConditionTrue, fmt.Sprintf("initialized %v, condition %v", st.Initialized, cond)
	})
}

// waitSettled waits until a Cluster's workflow has settled (no pass due but the resync), and is
// still settled after passes of its own, so the next pass needs an event.
func (e *env) waitSettled(name string) {
	e.t.Helper()
	step := func() string {
		v, err := tc.QueryWorkflow(context.Background(), workflows.WorkflowID(e.ns, name), "", workflows.QueryState)
		if err != nil {
			return err.Error()
		}
		var s workflows.State
		if err := v.Get(&s); err != nil {
			return err.Error()
		}
		return s.Step
	}
	e.eventually(60*time.Second, "workflow settled", func() (bool, string) {
		st := step()
		return st == "settled", st
	})
	e.runPasses(name)
	assert.Equal(e.t, "settled", step(), "still settled after passes of its own")
}

func assertRunning(t *testing.T, id string) {
	t.Helper()
	d, err := tc.DescribeWorkflowExecution(context.Background(), id, "")
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, d.WorkflowExecutionInfo.Status, "workflow %s", id)
}

// updateTopology applies the Cluster's spec.topology and annotations as the test's field manager
// (the same manager that created it, so what is left out is removed).
func (e *env) updateTopology(c *clusterv1.Cluster) {
	e.t.Helper()
	u, err := desired.ToIntent(c)
	require.NoError(e.t, err)
	topo, _, err := unstructured.NestedMap(u.Object, "spec", "topology")
	require.NoError(e.t, err)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": c.Name, "namespace": c.Namespace},
		"spec":     map[string]any{"topology": topo},
	}}
	// The test's own annotations only: applying topoflow's pending-hooks annotation as the test's
	// field manager would make the test a co-owner, and topoflow could no longer remove it.
	ann := maps.Clone(c.Annotations)
	delete(ann, "runtime.cluster.x-k8s.io/pending-hooks")
	if len(ann) > 0 {
		obj.SetAnnotations(ann)
	}
	_, err = kc.Apply(e.ctx, obj, "integration-test")
	require.NoError(e.t, err)
}

func ptr[T any](v T) *T { return &v }

// TestPause: while a Cluster is paused (annotation cluster.x-k8s.io/paused), topology changes are
// held and the Cluster says so; when the pause is lifted they are applied.
func TestPause(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	setAnnotation := func(value *string) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterv1.GroupVersion.String(), "kind": "Cluster",
			"metadata": map[string]any{"name": "demo", "namespace": e.ns},
		}}
		if value != nil {
			obj.SetAnnotations(map[string]string{labels.Paused: *value})
		}
		_, err := kc.Apply(e.ctx, obj, "integration-test-pause")
		require.NoError(t, err)
	}
	setAnnotation(ptr(""))
	e.eventually(30*time.Second, "Cluster reports Paused", func() (bool, string) {
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		return cond != nil && cond.Reason == "Paused", fmt.Sprint(cond)
	})

	c := e.cluster("demo")
	c.Spec.Topology.Workers.MachineDeployments[0].Replicas = ptr(int32(7))
	delete(c.Annotations, labels.Paused) // the pause belongs to the other field manager
	e.updateTopology(c)
	e.runPasses("demo")
	md := e.machineDeployments("demo")["md-0"]
	assert.EqualValues(t, 2, *md.Spec.Replicas, "held while paused")

	setAnnotation(nil)
	e.eventually(30*time.Second, "change applied after the pause", func() (bool, string) {
		md := e.machineDeployments("demo")["md-0"]
		return *md.Spec.Replicas == 7, fmt.Sprint(*md.Spec.Replicas)
	})
	e.waitReconciled("demo", 30*time.Second)
}
