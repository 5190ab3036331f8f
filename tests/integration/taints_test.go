//go:build integration

package integration

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/validation"
)

var (
	classTaint       = map[string]any{"key": "example.com/class", "effect": "NoSchedule", "propagation": "Always"}
	machineCondition = map[string]any{"type": "example.com/Stuck", "status": "True", "timeout": "5m0s"}
)

// withTaints puts a control plane taint, a MachineDeployment class taint and a control plane
// health check machine condition in the sample class, a topology taint on md-1, and rollout.after
// on the control plane and md-0.
func withTaints(u *unstructured.Unstructured) {
	switch u.GetKind() {
	case "ClusterClass":
		_ = unstructured.SetNestedSlice(u.Object, []any{classTaint}, "spec", "controlPlane", "taints")
		_ = unstructured.SetNestedSlice(u.Object, []any{machineCondition}, "spec", "controlPlane", "machineHealthCheck", "unhealthyMachineConditions")
		mds, _, _ := unstructured.NestedSlice(u.Object, "spec", "workers", "machineDeployments")
		for _, md := range mds {
			md.(map[string]any)["taints"] = []any{classTaint}
		}
		_ = unstructured.SetNestedSlice(u.Object, mds, "spec", "workers", "machineDeployments")
	case "Cluster":
		_ = unstructured.SetNestedField(u.Object, "2026-03-09T09:00:00Z", "spec", "topology", "controlPlane", "rollout", "after")
		mds, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "workers", "machineDeployments")
		for _, md := range mds {
			m := md.(map[string]any)
			switch m["name"] {
			case "md-0":
				m["rollout"] = map[string]any{"after": "2026-03-09T09:00:00Z"}
			case "md-1":
				m["taints"] = []any{map[string]any{"key": "example.com/topo", "value": "x", "effect": "PreferNoSchedule", "propagation": "OnInitialization"}}
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, mds, "spec", "topology", "workers", "machineDeployments")
	}
}

// TestTaintsNeedTheGate: with MachineTaintPropagation off (Cluster API v1.14's default), the
// webhooks refuse a class with taints, naming the field.
func TestTaintsNeedTheGate(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.serveAdmission()
	var err error
	e.eventually(20*time.Second, "a class with taints refused", func() (bool, string) {
		data, rerr := os.ReadFile(repoFile(classFile))
		require.NoError(t, rerr)
		docs, derr := decode.Documents(bytes.NewReader(data))
		require.NoError(t, derr)
		for _, d := range docs {
			if d.GetKind() != "ClusterClass" {
				continue
			}
			d.SetNamespace(e.ns)
			withTaints(d)
			_, err = kc.Apply(e.ctx, d, "kubectl")
		}
		return err != nil, "accepted"
	})
	assert.Contains(t, err.Error(), "spec.controlPlane.taints: Forbidden: taints are not allowed to be set when the feature gate MachineTaintPropagation is disabled")
}

// TestTaintsAndRolloutAfterOnTheWire: with the gate on, the control plane and the pools carry
// the taints (the topology's over the class's) and rollout.after, as Cluster API v1.13+ writes
// them (computeControlPlane, computeMachineDeployment), and the control plane's health check its
// unhealthyMachineConditions (v1.12, computeMachineHealthCheck).
func TestTaintsAndRolloutAfterOnTheWire(t *testing.T) {
	e := newEnv(t, envOptions{})
	// The webhooks with the gate on admit what the gate-off test sees refused.
	e.serveAdmissionWith(validation.Gates{MachineTaintPropagation: true})
	e.applyFile(classFile, withTaints)
	e.applyFile(clusterFile, withTaints)
	c := e.waitReconciled("demo", 90*time.Second)

	cp := e.get(c.Spec.ControlPlaneRef)
	taints, _, _ := unstructured.NestedSlice(cp.Object, "spec", "machineTemplate", "taints")
	assert.Equal(t, []any{classTaint}, taints)
	after, _, _ := unstructured.NestedString(cp.Object, "spec", "rollout", "after")
	assert.Equal(t, "2026-03-09T09:00:00Z", after)

	mhc := e.getTyped(kube.V1Beta1MachineHealthChecks, cp.GetName(), &clusterv1.MachineHealthCheck{}).(*clusterv1.MachineHealthCheck)
	assert.Equal(t, []clusterv1.UnhealthyMachineCondition{{Type: "example.com/Stuck", Status: "True", Timeout: metav1.Duration{Duration: 5 * time.Minute}}},
		mhc.Spec.UnhealthyMachineConditions)

	mds := map[string]*clusterv1.MachineDeployment{}
	for _, u := range e.list(kube.V1Beta1MachineDeployments, labels.ClusterName+"=demo") {
		md := &clusterv1.MachineDeployment{}
		require.NoError(t, decode.FromUnstructured(&u, md))
		mds[md.Labels[labels.MachineDeploymentName]] = md
	}
	require.Len(t, mds, 2)
	assert.Equal(t, []clusterv1.MachineTaint{{Key: "example.com/class", Effect: "NoSchedule", Propagation: "Always"}}, mds["md-0"].Spec.Template.Spec.Taints)
	assert.Equal(t, []clusterv1.MachineTaint{{Key: "example.com/topo", Value: "x", Effect: "PreferNoSchedule", Propagation: "OnInitialization"}}, mds["md-1"].Spec.Template.Spec.Taints)
	require.NotNil(t, mds["md-0"].Spec.RolloutAfter)
	assert.Equal(t, "2026-03-09T09:00:00Z", mds["md-0"].Spec.RolloutAfter.UTC().Format(time.RFC3339))
	assert.Nil(t, mds["md-1"].Spec.RolloutAfter)

	// Settled: a pass over it writes nothing more (the intents match what the server holds).
	e.waitSettled("demo")
}
