package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// The tests below follow Cluster API v1.14.2's core/reconcilers/cluster/cluster_controller_status.go;
// each names the function whose rules it checks.

func ptr32(n int32) *int32 { return &n }

func obj(apiVersion, kind, name string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "ns"}}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func withSpecReplicas(u *unstructured.Unstructured, n int64) *unstructured.Unstructured {
	u.Object["spec"] = map[string]any{"replicas": n}
	return u
}

func cond(t, st, reason, msg string) map[string]any {
	return map[string]any{"type": t, "status": st, "reason": reason, "message": msg}
}

func md(name string, status map[string]any) unstructured.Unstructured {
	return *obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", name, status)
}

func managedCluster() *clusterv1.Cluster {
	c := &clusterv1.Cluster{}
	c.Namespace, c.Name, c.Generation = "ns", "c", 4
	c.Spec.Topology = clusterv1.Topology{ClassRef: clusterv1.ClusterClassRef{Name: "quick-start"}, Version: "v1.32.0"}
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "SimCluster", Name: "c-infra"}
	c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{APIGroup: "controlplane.cluster.x-k8s.io", Kind: "SimControlPlane", Name: "c-cp"}
	return c
}

func deleting(c *clusterv1.Cluster) *clusterv1.Cluster {
	now := metav1.Now()
	c.DeletionTimestamp = &now
	return c
}

// unmanaged is c without a topology (the hub's zero topology, as ClusterToHub makes of none).
func unmanaged(c *clusterv1.Cluster) *clusterv1.Cluster {
	c.Spec.Topology = clusterv1.Topology{}
	return c
}

func noRefs(c *clusterv1.Cluster) *clusterv1.Cluster {
	c.Spec.InfrastructureRef, c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{}, clusterv1.ContractVersionedObjectReference{}
	return c
}

func condOnly(c metav1.Condition) metav1.Condition {
	return metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message}
}

// TestControlPlaneReplicas follows setControlPlaneReplicas: the control plane object's counters,
// by its contract.
func TestControlPlaneReplicas(t *testing.T) {
	v1beta1CP := withSpecReplicas(obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{
		"initialized": true, "replicas": int64(3), "readyReplicas": int64(3), "updatedReplicas": int64(2), "unavailableReplicas": int64(1),
	}), 3)
	v1beta2CP := withSpecReplicas(obj("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", "c-cp", map[string]any{
		"initialization": map[string]any{"controlPlaneInitialized": true},
		"replicas":       int64(3), "readyReplicas": int64(2), "availableReplicas": int64(2), "upToDateReplicas": int64(1),
		"versions": []any{map[string]any{"version": "v1.31.0", "replicas": int64(2)}, map[string]any{"version": "v1.32.0", "replicas": int64(1)}},
	}), 3)
	withCurrent := managedCluster()
	withCurrent.Status.ControlPlane = &clusterv1.ClusterReplicasStatus{
		ReadyReplicas: ptr32(7), UpgradePlan: []clusterv1.StatusUpgradePlanVersion{{Version: "v1.33.0"}},
		Versions: []clusterv1.StatusVersion{{Version: "v1.30.0", Replicas: 1}}}
	for _, tc := range []struct {
		name    string
		cluster *clusterv1.Cluster
		cp      *unstructured.Unstructured
		want    *clusterv1.ClusterReplicasStatus
	}{
		{"no control plane object: nothing", withCurrent, nil, &clusterv1.ClusterReplicasStatus{}},
		{"v1beta1 contract: available is desired less unavailable, up-to-date is updated", managedCluster(), v1beta1CP,
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(3), Replicas: ptr32(3), ReadyReplicas: ptr32(3), AvailableReplicas: ptr32(2), UpToDateReplicas: ptr32(2)}},
		{"v1beta1 contract: more unavailable than desired is none available", managedCluster(),
			withSpecReplicas(obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{"unavailableReplicas": int64(5)}), 3),
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(3), AvailableReplicas: ptr32(0)}},
		{"v1beta2 contract: its counters and versions", managedCluster(), v1beta2CP,
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(3), Replicas: ptr32(3), ReadyReplicas: ptr32(2), AvailableReplicas: ptr32(2), UpToDateReplicas: ptr32(1),
				Versions: []clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 2}, {Version: "v1.32.0", Replicas: 1}}}},
		{"a counter not reported keeps its value; versions not reported are cleared; the plan is not the role's", withCurrent,
			withSpecReplicas(obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{"replicas": int64(1)}), 1),
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(1), Replicas: ptr32(1), ReadyReplicas: ptr32(7)}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, controlPlaneReplicas(tc.cluster, tc.cp)) })
	}
}

// TestWorkersReplicas follows setWorkersReplicas: sums over the MachinePools and
// MachineDeployments, versions aggregated lowest first.
func TestWorkersReplicas(t *testing.T) {
	v1beta2MD := *withSpecReplicas(obj("cluster.x-k8s.io/v1beta2", "MachineDeployment", "md-b", map[string]any{
		"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(1), "upToDateReplicas": int64(2),
		"versions": []any{map[string]any{"version": "v1.32.0", "replicas": int64(2)}},
	}), 2)
	v1beta2MP := *withSpecReplicas(obj("cluster.x-k8s.io/v1beta2", "MachinePool", "mp", map[string]any{
		"replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "upToDateReplicas": int64(0),
		"versions": []any{map[string]any{"version": "v1.31.0", "replicas": int64(1)}},
	}), 1)
	// Served as v1beta1 by Cluster API: the v1beta2 counters under status.v1beta2; the v1beta1
	// ones (readyReplicas 9 ...) are deprecated and not read.
	v1beta1MD := *withSpecReplicas(obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", "md-a", map[string]any{
		"replicas": int64(3), "readyReplicas": int64(9), "availableReplicas": int64(9), "updatedReplicas": int64(9),
		"v1beta2":  map[string]any{"readyReplicas": int64(3), "availableReplicas": int64(3), "upToDateReplicas": int64(1)},
		"versions": []any{map[string]any{"version": "v1.31.0", "replicas": int64(3)}}, // v1beta1 has it too since v1.14
	}), 3)
	// topoflow's own v1beta1 CRD (no status.v1beta2): the v1beta1 counters stand in.
	ownMD := *withSpecReplicas(obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", "md-own", map[string]any{
		"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(1), "updatedReplicas": int64(0),
	}), 2)
	for _, tc := range []struct {
		name     string
		mds, mps []unstructured.Unstructured
		want     *clusterv1.ClusterReplicasStatus
	}{
		{"no pools: nothing", nil, nil, &clusterv1.ClusterReplicasStatus{}},
		{"v1beta2 pools, summed, versions aggregated", []unstructured.Unstructured{v1beta2MD}, []unstructured.Unstructured{v1beta2MP},
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(3), Replicas: ptr32(3), ReadyReplicas: ptr32(3), AvailableReplicas: ptr32(2), UpToDateReplicas: ptr32(2),
				Versions: []clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 1}, {Version: "v1.32.0", Replicas: 2}}}},
		{"v1beta1 pool: status.v1beta2 and status.versions", []unstructured.Unstructured{v1beta1MD}, nil,
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(3), Replicas: ptr32(3), ReadyReplicas: ptr32(3), AvailableReplicas: ptr32(3), UpToDateReplicas: ptr32(1),
				Versions: []clusterv1.StatusVersion{{Version: "v1.31.0", Replicas: 3}}}},
		{"v1beta1 pool without status.v1beta2: its v1beta1 counters", []unstructured.Unstructured{ownMD, v1beta2MD}, nil,
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(4), Replicas: ptr32(4), ReadyReplicas: ptr32(4), AvailableReplicas: ptr32(2), UpToDateReplicas: ptr32(2),
				Versions: []clusterv1.StatusVersion{{Version: "v1.32.0", Replicas: 2}}}},
		{"a pool without status: desired only", []unstructured.Unstructured{*withSpecReplicas(obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", "new", nil), 2)}, nil,
			&clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, workersReplicas(tc.mds, tc.mps)) })
	}
}

// TestAggregateVersions follows AggregateStatusVersions (internal/util/version).
func TestAggregateVersions(t *testing.T) {
	got := aggregateVersions([]clusterv1.StatusVersion{{Version: "v1.32.0", Replicas: 1}, {Version: "v1.9.0", Replicas: 2},
		{Version: "", Replicas: 5}, {Version: "v1.32.0", Replicas: 3}, {Version: "custom", Replicas: 1}})
	assert.Equal(t, []clusterv1.StatusVersion{{Version: "v1.9.0", Replicas: 2}, {Version: "v1.32.0", Replicas: 4}, {Version: "custom", Replicas: 1}}, got)
	assert.Nil(t, aggregateVersions(nil))
}

// TestInfrastructureReadyCondition follows setInfrastructureReadyCondition.
func TestInfrastructureReadyCondition(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	v1beta2Ready := obj("infrastructure.cluster.x-k8s.io/v1beta2", "SimCluster", "c-infra", map[string]any{
		"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "LoadBalancerPending", "message": "waiting for the load balancer",
			"lastTransitionTime": then.UTC().Format(time.RFC3339)}}})
	for _, tc := range []struct {
		name        string
		cluster     *clusterv1.Cluster
		infra       *unstructured.Unstructured
		provisioned bool
		want        metav1.Condition
	}{
		{"no reference yet", noRefs(managedCluster()), nil, false,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "ObjectDoesNotExist", Message: "Waiting for cluster topology to be reconciled"}},
		{"no reference yet, deleting: no message", deleting(noRefs(managedCluster())), nil, false,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "ObjectDoesNotExist"}},
		{"mirrors the Ready condition, with its transition time", managedCluster(), v1beta2Ready, false,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "LoadBalancerPending", Message: "waiting for the load balancer", LastTransitionTime: then}},
		{"a v1beta1 True condition without reason gets Ready", managedCluster(),
			obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}), true,
			metav1.Condition{Type: "InfrastructureReady", Status: "True", Reason: "Ready"}},
		{"status.v1beta2.conditions come first", managedCluster(),
			obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", map[string]any{
				"conditions": []any{cond("Ready", "True", "", "")},
				"v1beta2":    map[string]any{"conditions": []any{cond("Ready", "False", "Provisioning", "")}}}), true,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "Provisioning"}},
		{"no condition, provisioned: True", managedCluster(), obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", map[string]any{"ready": true}), true,
			metav1.Condition{Type: "InfrastructureReady", Status: "True", Reason: "Ready"}},
		{"no condition, not provisioned: False", managedCluster(), obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", nil), false,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "NotReady", Message: "SimCluster status.initialization.provisioned is false"}},
		{"a condition that cannot be read", managedCluster(),
			obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", map[string]any{"conditions": []any{cond("Ready", "Maybe", "", "")}}), false,
			metav1.Condition{Type: "InfrastructureReady", Status: "Unknown", Reason: "InvalidConditionReported", Message: `SimCluster c-infra: condition Ready has status "Maybe"`}},
		{"not there yet", managedCluster(), nil, false,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "ObjectDoesNotExist", Message: "SimCluster does not exist"}},
		{"gone after it was provisioned", managedCluster(), nil, true,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "ObjectDeleted", Message: "SimCluster has been deleted while the cluster still exists"}},
		{"gone while deleting", deleting(managedCluster()), nil, true,
			metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "ObjectDeleted", Message: "SimCluster has been deleted"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, infrastructureReadyCondition(tc.cluster, tc.infra, tc.provisioned))
		})
	}
}

// TestControlPlaneConditions follows setControlPlaneAvailableCondition and
// setControlPlaneInitializedCondition.
func TestControlPlaneConditions(t *testing.T) {
	initialized := obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{"initialized": true, "ready": true})
	notYet := obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{"initialized": false})
	v1beta2 := obj("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", "c-cp", map[string]any{
		"initialization": map[string]any{"controlPlaneInitialized": true},
		"conditions":     []any{cond("Available", "False", "NotEnoughReplicas", "1 of 3 available")}})
	for _, tc := range []struct {
		name                   string
		cluster                *clusterv1.Cluster
		cp                     *unstructured.Unstructured
		current                []metav1.Condition
		wantAvailable, wantIni metav1.Condition
	}{
		{"no reference yet", noRefs(managedCluster()), nil, nil,
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "ObjectDoesNotExist", Message: "Waiting for cluster topology to be reconciled"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "Unknown", Reason: "ObjectDoesNotExist", Message: "Waiting for cluster topology to be reconciled"}},
		{"not there yet", managedCluster(), nil, nil,
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "ObjectDoesNotExist", Message: "SimControlPlane does not exist"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "Unknown", Reason: "ObjectDoesNotExist", Message: "SimControlPlane does not exist"}},
		{"not initialized, no Available condition", managedCluster(), notYet, nil,
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "NotAvailable", Message: "SimControlPlane status.initialization.controlPlaneInitialized is false"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "False", Reason: "NotInitialized", Message: "Control plane not yet initialized"}},
		{"initialized, no Available condition: initialized stands in", managedCluster(), initialized, nil,
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "True", Reason: "Available"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "True", Reason: "Initialized"}},
		{"v1beta2 contract: its Available condition mirrored", managedCluster(), v1beta2, nil,
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "NotEnoughReplicas", Message: "1 of 3 available"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "True", Reason: "Initialized"}},
		{"initialized stays True", managedCluster(), nil,
			[]metav1.Condition{{Type: "ControlPlaneInitialized", Status: "True", Reason: "Initialized"}},
			metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "ObjectDeleted", Message: "SimControlPlane has been deleted while the cluster still exists"},
			metav1.Condition{Type: "ControlPlaneInitialized", Status: "True", Reason: "Initialized"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			init := controlPlaneInitialized(tc.cp) || (len(tc.current) > 0 && tc.current[0].Status == "True")
			assert.Equal(t, tc.wantAvailable, controlPlaneAvailableCondition(tc.cluster, tc.cp, init))
			assert.Equal(t, tc.wantIni, controlPlaneInitializedCondition(tc.cluster, tc.cp, tc.current))
		})
	}
}

// TestWorkersAvailableCondition follows setWorkersAvailableCondition (an aggregate of the
// MachineDeployments' Available conditions, conditions.NewAggregateCondition).
func TestWorkersAvailableCondition(t *testing.T) {
	available := func(name string) unstructured.Unstructured {
		return md(name, map[string]any{"v1beta2": map[string]any{"conditions": []any{cond("Available", "True", "Available", "")}}})
	}
	short := func(name, msg string) unstructured.Unstructured {
		return md(name, map[string]any{"v1beta2": map[string]any{"conditions": []any{cond("Available", "False", "NotAvailable", msg)}}})
	}
	for _, tc := range []struct {
		name string
		mds  []unstructured.Unstructured
		want metav1.Condition
	}{
		{"no workers", nil, metav1.Condition{Type: "WorkersAvailable", Status: "True", Reason: "NoWorkers"}},
		{"all available", []unstructured.Unstructured{available("a"), available("b")}, metav1.Condition{Type: "WorkersAvailable", Status: "True", Reason: "Available"}},
		{"not reported", []unstructured.Unstructured{md("md1", nil), available("b")},
			metav1.Condition{Type: "WorkersAvailable", Status: "Unknown", Reason: "AvailableUnknown", Message: "* MachineDeployment md1: Condition Available not yet reported"}},
		{"a v1beta1 Available condition counts", []unstructured.Unstructured{md("md1", map[string]any{"conditions": []any{cond("Available", "True", "", "")}})},
			metav1.Condition{Type: "WorkersAvailable", Status: "True", Reason: "Available"}},
		{"issues before unknowns, grouped by message", []unstructured.Unstructured{
			short("md3", "3 available replicas, at least 4 required"), md("md1", nil), short("md2", "3 available replicas, at least 4 required"), available("ok")},
			metav1.Condition{Type: "WorkersAvailable", Status: "False", Reason: "NotAvailable",
				Message: "* MachineDeployments md2, md3: 3 available replicas, at least 4 required\n* MachineDeployment md1: Condition Available not yet reported"}},
		{"at most three lines, the rest counted", []unstructured.Unstructured{
			short("a", "m1"), short("b", "m2"), short("c", "m3"), short("d", "m4"), short("e", "m4"), md("f", nil)},
			metav1.Condition{Type: "WorkersAvailable", Status: "False", Reason: "NotAvailable",
				Message: "* MachineDeployments d, e: m4\n* MachineDeployment a: m1\n* MachineDeployment b: m2\nAnd 1 MachineDeployment with other issues\nAnd 1 MachineDeployment with status unknown"}},
		{"many with one message", []unstructured.Unstructured{short("a", "m"), short("b", "m"), short("c", "m"), short("d", "m"), short("e", "m")},
			metav1.Condition{Type: "WorkersAvailable", Status: "False", Reason: "NotAvailable", Message: "* MachineDeployments a, b, c, ... (2 more): m"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, workersAvailableCondition(tc.mds)) })
	}
}

// TestRollingOutAndScaling follows setRollingOutCondition and setScalingUpCondition (negative
// polarity aggregates of the control plane's, if it reports one, and the MachineDeployments').
func TestRollingOutAndScaling(t *testing.T) {
	cpRolling := obj("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", "cp1", map[string]any{
		"conditions": []any{cond("RollingOut", "True", "RollingOut", "Rolling out 3 not up-to-date replicas")}})
	cpSilent := obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "cp1", map[string]any{"ready": true})
	notRolling := md("md2", map[string]any{"v1beta2": map[string]any{"conditions": []any{cond("RollingOut", "False", "NotRollingOut", "")}}})
	for _, tc := range []struct {
		name string
		cp   *unstructured.Unstructured
		mds  []unstructured.Unstructured
		want metav1.Condition
	}{
		{"nothing reports", cpSilent, nil, metav1.Condition{Type: "RollingOut", Status: "False", Reason: "NotRollingOut"}},
		{"control plane rolling out", cpRolling, []unstructured.Unstructured{notRolling},
			metav1.Condition{Type: "RollingOut", Status: "True", Reason: "RollingOut", Message: "* KubeadmControlPlane cp1: Rolling out 3 not up-to-date replicas"}},
		{"a MachineDeployment not reporting", cpSilent, []unstructured.Unstructured{md("md1", nil), notRolling},
			metav1.Condition{Type: "RollingOut", Status: "Unknown", Reason: "RollingOutUnknown", Message: "* MachineDeployment md1: Condition RollingOut not yet reported"}},
		{"none rolling out", cpSilent, []unstructured.Unstructured{notRolling}, metav1.Condition{Type: "RollingOut", Status: "False", Reason: "NotRollingOut"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, rollingOutCondition(tc.cp, tc.mds)) })
	}
	up := scalingCondition("ScalingUp", "ScalingUp", "ScalingUpUnknown", "NotScalingUp", cpSilent,
		[]unstructured.Unstructured{md("md1", map[string]any{"v1beta2": map[string]any{"conditions": []any{cond("ScalingUp", "True", "ScalingUp", "Scaling up from 1 to 5 replicas")}}})})
	assert.Equal(t, metav1.Condition{Type: "ScalingUp", Status: "True", Reason: "ScalingUp", Message: "* MachineDeployment md1: Scaling up from 1 to 5 replicas"}, up)
}

// TestDeletingCondition follows setDeletingCondition with reconcileDelete's reasons
// (cluster_controller.go).
func TestDeletingCondition(t *testing.T) {
	okToDelete := func(c *clusterv1.Cluster) *clusterv1.Cluster {
		c.Annotations = map[string]string{"runtime.cluster.x-k8s.io/ok-to-delete": ""}
		return c
	}
	names := func(ns ...string) []unstructured.Unstructured {
		var out []unstructured.Unstructured
		for _, n := range ns {
			out = append(out, md(n, nil))
		}
		return out
	}
	cp := obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", nil)
	infra := obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", nil)
	for _, tc := range []struct {
		name string
		f    ClusterFacts
		want metav1.Condition
	}{
		{"not deleting", ClusterFacts{Cluster: managedCluster()}, metav1.Condition{Type: "Deleting", Status: "False", Reason: "NotDeleting"}},
		{"hook not passed", ClusterFacts{Cluster: deleting(managedCluster()), ControlPlane: cp},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "WaitingForBeforeDeleteHook", Message: "Waiting for BeforeClusterDelete hook"}},
		{"workers", ClusterFacts{Cluster: okToDelete(deleting(managedCluster())), ControlPlane: cp, MachineDeployments: names("md6", "md1", "md2", "md3", "md4", "md5", "md7"), MachinePools: names("mp1")},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "WaitingForWorkersDeletion",
				Message: "* MachineDeployments: md1, md2, md3, md4, md5, ... (2 more)\n* MachinePools: mp1"}},
		{"control plane", ClusterFacts{Cluster: okToDelete(deleting(managedCluster())), ControlPlane: cp, InfraCluster: infra},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "WaitingForControlPlaneDeletion", Message: "Waiting for SimControlPlane to be deleted"}},
		{"infrastructure", ClusterFacts{Cluster: okToDelete(deleting(managedCluster())), InfraCluster: infra},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "WaitingForInfrastructureDeletion", Message: "Waiting for SimCluster to be deleted"}},
		{"done", ClusterFacts{Cluster: okToDelete(deleting(managedCluster()))},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "DeletionCompleted", Message: "Deletion completed"}},
		{"no topology: no hook to wait for", ClusterFacts{Cluster: unmanaged(deleting(managedCluster()))},
			metav1.Condition{Type: "Deleting", Status: "True", Reason: "DeletionCompleted", Message: "Deletion completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, deletingCondition(tc.f)) })
	}
}

// TestAvailableCondition follows setAvailableCondition (a summary, conditions.NewSummaryCondition,
// with the Cluster's merge priorities), without the RemoteConnectionProbe gate topoflow leaves out.
func TestAvailableCondition(t *testing.T) {
	good := []metav1.Condition{
		{Type: "Deleting", Status: "False", Reason: "NotDeleting"},
		{Type: "InfrastructureReady", Status: "True", Reason: "Ready"},
		{Type: "ControlPlaneAvailable", Status: "True", Reason: "Available"},
		{Type: "WorkersAvailable", Status: "True", Reason: "Available"},
		{Type: "TopologyReconciled", Status: "True", Reason: "ReconcileSucceeded"},
	}
	with := func(cs ...metav1.Condition) []metav1.Condition {
		out := append([]metav1.Condition(nil), good...)
		for _, c := range cs {
			replaced := false
			for i := range out {
				if out[i].Type == c.Type {
					out[i], replaced = c, true
				}
			}
			if !replaced {
				out = append(out, c)
			}
		}
		return out
	}
	gated := managedCluster()
	gated.Spec.AvailabilityGates = []clusterv1.ClusterAvailabilityGate{{ConditionType: "MyGate"}, {ConditionType: "Degraded", Polarity: clusterv1.NegativePolarityCondition}}
	for _, tc := range []struct {
		name       string
		cluster    *clusterv1.Cluster
		classGates []clusterv1.ClusterAvailabilityGate
		conds      []metav1.Condition
		want       metav1.Condition
	}{
		{"all good", managedCluster(), nil, good, metav1.Condition{Type: "Available", Status: "True", Reason: "Available"}},
		{"upgrading is no issue, and said", managedCluster(), nil,
			with(metav1.Condition{Type: "TopologyReconciled", Status: "False", Reason: "ClusterUpgrading", Message: "Cluster is upgrading to v1.22.0\n  * MachineDeployment md1 upgrading to version v1.22.0"}),
			metav1.Condition{Type: "Available", Status: "True", Reason: "Available",
				Message: "* TopologyReconciled:\n  * Cluster is upgrading to v1.22.0\n      * MachineDeployment md1 upgrading to version v1.22.0"}},
		{"a failed reconcile is an issue", managedCluster(), nil,
			with(metav1.Condition{Type: "TopologyReconciled", Status: "False", Reason: "ReconcileFailed", Message: "boom"}),
			metav1.Condition{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "* TopologyReconciled: boom"}},
		{"issues in gate order; info left out when not True", managedCluster(), nil,
			with(metav1.Condition{Type: "WorkersAvailable", Status: "Unknown", Reason: "AvailableUnknown", Message: "* MachineDeployment md1: Condition Available not yet reported"},
				metav1.Condition{Type: "InfrastructureReady", Status: "False", Reason: "NotReady"},
				metav1.Condition{Type: "TopologyReconciled", Status: "False", Reason: "ClusterUpgrading", Message: "upgrading"}),
			metav1.Condition{Type: "Available", Status: "False", Reason: "NotAvailable",
				Message: "* InfrastructureReady: NotReady\n* WorkersAvailable:\n  * MachineDeployment md1: Condition Available not yet reported"}},
		{"deleting", deleting(managedCluster()), nil,
			with(metav1.Condition{Type: "Deleting", Status: "True", Reason: "WaitingForWorkersDeletion", Message: "* MachineDeployments: md1, md2"},
				metav1.Condition{Type: "ControlPlaneAvailable", Status: "False", Reason: "ObjectDeleted", Message: "SimControlPlane has been deleted"}),
			metav1.Condition{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "* Deleting:\n  * MachineDeployments: md1, md2"}},
		{"a gate not reported", gated, nil, with(metav1.Condition{Type: "Degraded", Status: "False", Reason: "Fine"}),
			metav1.Condition{Type: "Available", Status: "Unknown", Reason: "AvailableUnknown", Message: "* MyGate: Condition not yet reported"}},
		{"a negative gate True", gated, nil, with(metav1.Condition{Type: "Degraded", Status: "True", Reason: "Bad", Message: "disk"},
			metav1.Condition{Type: "MyGate", Status: "True", Reason: "Fine"}),
			metav1.Condition{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "* Degraded: disk"}},
		{"the class's gates when the Cluster has none", managedCluster(), []clusterv1.ClusterAvailabilityGate{{ConditionType: "ClassGate"}},
			with(metav1.Condition{Type: "ClassGate", Status: "False", Reason: "No", Message: "not yet"}),
			metav1.Condition{Type: "Available", Status: "False", Reason: "NotAvailable", Message: "* ClassGate: not yet"}},
		{"TopologyReconciled missing", managedCluster(), nil, good[:4],
			metav1.Condition{Type: "Available", Status: "Unknown", Reason: "AvailableUnknown", Message: "* TopologyReconciled: Condition not yet reported"}},
		{"TopologyReconciled missing on a Cluster without topology: ignored", unmanaged(managedCluster()), nil, good[:4],
			metav1.Condition{Type: "Available", Status: "True", Reason: "Available"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, availableCondition(tc.cluster, tc.classGates, tc.conds))
		})
	}
}

// TestPausedCondition follows util/paused's pausedCondition.
func TestPausedCondition(t *testing.T) {
	c := managedCluster()
	assert.Equal(t, metav1.Condition{Type: "Paused", Status: "False", Reason: "NotPaused"}, pausedCondition(c))
	c.Spec.Paused = new(true)
	c.Annotations = map[string]string{"cluster.x-k8s.io/paused": ""}
	assert.Equal(t, metav1.Condition{Type: "Paused", Status: "True", Reason: "Paused",
		Message: "Cluster spec.paused is set to true, Cluster has the cluster.x-k8s.io/paused annotation"}, pausedCondition(c))
}

// TestClusterV1Beta2: a provisioned Cluster of the simulated providers gets the conditions, in
// Cluster API's order, with the Cluster's generation, transition times kept while the status
// stays; a paused one keeps all but Paused and TopologyReconciled.
func TestClusterV1Beta2(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	now := time.Date(2026, 2, 1, 0, 0, 0, 700, time.UTC)
	c := managedCluster()
	c.Status.Conditions = []metav1.Condition{
		{Type: "InfrastructureReady", Status: "True", Reason: "Ready", LastTransitionTime: then},
		{Type: "ControlPlaneAvailable", Status: "False", Reason: "NotAvailable", LastTransitionTime: then},
		{Type: "SomeoneElses", Status: "True", Reason: "X", LastTransitionTime: then},
	}
	f := ClusterFacts{
		Cluster:      c,
		InfraCluster: obj("infrastructure.cluster.x-k8s.io/v1beta1", "SimCluster", "c-infra", map[string]any{"ready": true}),
		ControlPlane: withSpecReplicas(obj("controlplane.cluster.x-k8s.io/v1beta1", "SimControlPlane", "c-cp", map[string]any{
			"initialized": true, "ready": true, "replicas": int64(1), "readyReplicas": int64(1), "updatedReplicas": int64(1), "unavailableReplicas": int64(0)}), 1),
		MachineDeployments: []unstructured.Unstructured{*withSpecReplicas(obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", "md", map[string]any{
			"replicas": int64(2), "readyReplicas": int64(2), "availableReplicas": int64(2), "updatedReplicas": int64(2),
			"conditions": []any{cond("Available", "True", "", "")}}), 2)},
		InfrastructureProvisioned: true,
		Topology:                  &Condition{Type: TopologyReconciled, Status: true},
	}
	got := ClusterV1Beta2(f, now)
	var types []string
	for _, cd := range got.Conditions {
		types = append(types, cd.Type)
		assert.Equal(t, int64(4), cd.ObservedGeneration, cd.Type)
	}
	assert.Equal(t, []string{"Available", "InfrastructureReady", "ControlPlaneInitialized", "ControlPlaneAvailable", "WorkersAvailable",
		"TopologyReconciled", "RollingOut", "ScalingDown", "ScalingUp", "Paused", "Deleting"}, types)
	byType := map[string]metav1.Condition{}
	for _, cd := range got.Conditions {
		byType[cd.Type] = cd
	}
	assert.Equal(t, metav1.Condition{Type: "Available", Status: "True", Reason: "Available"}, condOnly(byType["Available"]))
	assert.Equal(t, then, byType["InfrastructureReady"].LastTransitionTime, "status unchanged: time kept")
	assert.Equal(t, metav1.NewTime(now.Truncate(time.Second)), byType["ControlPlaneAvailable"].LastTransitionTime, "status changed: now")
	assert.Equal(t, "ReconcileSucceeded", byType["TopologyReconciled"].Reason)
	assert.Equal(t, metav1.Condition{Type: "RollingOut", Status: "Unknown", Reason: "RollingOutUnknown",
		Message: "* MachineDeployment md: Condition RollingOut not yet reported"}, condOnly(byType["RollingOut"]))
	assert.Equal(t, &clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(1), Replicas: ptr32(1), ReadyReplicas: ptr32(1), AvailableReplicas: ptr32(1), UpToDateReplicas: ptr32(1)}, got.ControlPlane)
	assert.Equal(t, &clusterv1.ClusterReplicasStatus{DesiredReplicas: ptr32(2), Replicas: ptr32(2), ReadyReplicas: ptr32(2), AvailableReplicas: ptr32(2), UpToDateReplicas: ptr32(2)}, got.Workers)

	// Written, read back: nothing more to write. Then paused: only Paused and TopologyReconciled move.
	c.Status = *got.DeepCopy()
	c.Status.ControlPlane.UpgradePlan = []clusterv1.StatusUpgradePlanVersion{{Version: "v1.33.0"}}
	assert.True(t, SameV1Beta2(&c.Status, ClusterV1Beta2(f, now.Add(time.Hour))))
	c.Spec.Paused = new(true)
	f.MachineDeployments = nil
	f.Topology = &Condition{Type: TopologyReconciled, Reason: ReasonPaused, Message: "paused"}
	paused := ClusterV1Beta2(f, now.Add(time.Hour))
	require.Len(t, paused.Conditions, len(got.Conditions))
	for i, cd := range paused.Conditions {
		switch cd.Type {
		case "Paused":
			assert.Equal(t, metav1.ConditionTrue, cd.Status)
		case "TopologyReconciled":
			assert.Equal(t, "Paused", cd.Reason)
		default:
			assert.Equal(t, got.Conditions[i], cd, cd.Type)
		}
	}
	assert.Equal(t, got.Workers, paused.Workers, "counters kept while paused")
	assert.False(t, SameV1Beta2(&c.Status, paused))
}

// TestIndentIfMultiline: how a message goes under "* Name:" (the merge strategy's indentIfMultiline).
func TestIndentIfMultiline(t *testing.T) {
	assert.Equal(t, " one line", indentIfMultiline("one line"))
	assert.Equal(t, "\n  * a\n  * b", indentIfMultiline("* a\n* b"))
	assert.Equal(t, "\n  * head\n    * a", indentIfMultiline("head\n* a"))
	assert.Equal(t, "\n  * a\n  * b", indentIfMultiline("a\nb"))
	assert.Equal(t, "MachineDeployments", plural("MachineDeployment"))
	assert.Equal(t, "Machines", plural("Machine"))
	assert.Equal(t, "Proxies", plural("Proxy"))
}
