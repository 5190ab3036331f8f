//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// TestOnlinePlanMatchesApply: mid-upgrade, the online plan (`starter plan --cluster`) makes the
// apply's decision: with the control plane rolling out the new version, the plan shows the control
// plane as already applied (unchanged), every pool as pending its upgrade and nothing else to
// write; further passes indeed write no pool, until the control plane has rolled out.
func TestOnlinePlanMatchesApply(t *testing.T) {
	e := newEnv(t, envOptions{sim: provider.Options{RolloutDuration: 25 * time.Second}})
	e.applyFile(classFile)
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)
	poolVersions := func() map[string]string {
		out := map[string]string{}
		for _, gvr := range [][2]string{{"cluster.x-k8s.io", "machinedeployments"}, {"cluster.x-k8s.io", "machinepools"}} {
			for _, u := range e.list(schemaGVR(gvr[0], gvr[1]), labels.ClusterName+"=demo") {
				v, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "version")
				out[u.GetKind()+"/"+u.GetName()] = v
			}
		}
		return out
	}
	before := poolVersions()
	require.Len(t, before, 3)

	e.setVersion("demo", "v1.32.0")
	cpRef := e.cluster("demo").Spec.ControlPlaneRef
	// The upgrade-step annotation follows one pass later: the pass that marks AfterClusterUpgrade
	// pending writes the pending-hooks annotation after its apply, and that write wakes the next.
	e.eventually(30*time.Second, "the control plane told v1.32.0, the Cluster marked with the upgrade step", func() (bool, string) {
		v, _, _ := unstructured.NestedString(e.get(cpRef).Object, "spec", "version")
		step := e.cluster("demo").Annotations[labels.UpgradeStep]
		return v == "v1.32.0" && step == "v1.32.0", "control plane " + v + ", upgrade step " + step
	})

	in, err := activities.New(kc, nil).PlanInput(e.ctx, activities.ClusterRef{Namespace: e.ns, Name: "demo"})
	require.NoError(t, err)
	res, err := plan.Compute(in)
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range res.Changes {
		got[c.Kind+"/"+c.Name] = string(c.Action) + " " + c.Reason
		switch c.Kind {
		case "MachineDeployment", "MachinePool":
			assert.Equal(t, plan.Pending, c.Action, "%s %s", c.Kind, c.Name)
			assert.Equal(t, "pending upgrade", c.Reason, "%s %s", c.Kind, c.Name)
		case "MachineHealthCheck", "SimControlPlane", "SimCluster", "Cluster":
			assert.Equal(t, plan.Unchanged, c.Action, "%s %s: already applied by the pass", c.Kind, c.Name)
		}
		assert.NotContains(t, []plan.Action{plan.Create, plan.Update, plan.Rotate, plan.Delete}, c.Action, "%s %s", c.Kind, c.Name)
	}
	t.Log(fmt.Sprint(got))

	// The apply agrees: as long as the control plane rolls out (its status changes wake the upgrade's
	// passes), no pool is written.
	e.annotate("cluster.x-k8s.io/v1beta1", "Cluster", "demo", "example.com/touched", "1")
	checks := 0
	e.eventually(60*time.Second, "the control plane rolled out v1.32.0", func() (bool, string) {
		pv := poolVersions()
		v, _, _ := unstructured.NestedString(e.get(cpRef).Object, "status", "version")
		if v != "v1.32.0" {
			checks++
			assert.Equal(t, before, pv, "no pool is written while the control plane rolls out")
		}
		return v == "v1.32.0", v
	})
	assert.Greater(t, checks, 3, "the pools were watched during the rollout")

	// Once the control plane has rolled out, the pools follow.
	e.eventually(120*time.Second, "the pools at v1.32.0", func() (bool, string) {
		pv := poolVersions()
		for _, v := range pv {
			if v != "v1.32.0" {
				return false, fmt.Sprint(pv)
			}
		}
		return true, ""
	})
}

// TestPlanSendsWhatApplySends (#20): once the sample Cluster has settled, the online plan's objects
// are, object by object, the intents the apply last sent under capi-topology (the same decision,
// the same owner references and names; only the plan's action annotation and the uid the apply
// stamps on an update differ). The shim owner on a create is model/plan's TestPlanShowsShimOwner.
func TestPlanSendsWhatApplySends(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.settledSample()
	e.waitSettled("demo")

	in, err := activities.New(kc, nil).PlanInput(e.ctx, activities.ClusterRef{Namespace: e.ns, Name: "demo"})
	require.NoError(t, err)
	res, err := plan.Compute(in)
	require.NoError(t, err)
	require.NotEmpty(t, res.Objects)
	for _, o := range res.Objects {
		key := o.GetKind() + "/" + o.GetName()
		v, ok := e.sent.Load(key)
		if !assert.True(t, ok, "the apply sent %s", key) {
			continue
		}
		sent := v.(*unstructured.Unstructured).DeepCopy()
		planned := o.DeepCopy()
		ann := planned.GetAnnotations()
		delete(ann, plan.ActionAnnotation)
		if len(ann) == 0 {
			ann = nil
		}
		planned.SetAnnotations(ann)
		sent.SetUID(planned.GetUID())
		assert.Equal(t, planned.Object, sent.Object, "%s: the plan's object is what the apply sent", key)
	}
	for _, c := range res.Changes {
		assert.Contains(t, []plan.Action{plan.Unchanged}, c.Action, "%s %s: settled, nothing to do", c.Kind, c.Name)
	}
}
