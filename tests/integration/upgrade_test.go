//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/tests/sim/provider"
)

// TestChainedUpgrade: with kubernetesVersions in the class, an upgrade over two minors steps the
// control plane through the last patch of each minor, then upgrades the pools one after another
// straight to the target (within the supported skew they skip the intermediate step).
func TestChainedUpgrade(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			require.NoError(t, unstructured.SetNestedStringSlice(u.Object, []string{"v1.31.2", "v1.32.1", "v1.32.4", "v1.33.1"}, "spec", "kubernetesVersions"))
		}
	})
	e.applyFile(clusterFile)
	e.waitReconciled("demo", 90*time.Second)

	c := e.cluster("demo")
	c.Spec.Topology.Version = "v1.33.1"
	e.updateTopology(c)

	e.eventually(120*time.Second, "every part rolled out v1.33.1", func() (bool, string) {
		done := map[string]bool{}
		for _, tr := range e.sim.Transitions() {
			if tr.Version == "v1.33.1" {
				done[tr.Kind+"/"+poolOf(tr)] = true
			}
		}
		cond := e.cluster("demo").Status.Conditions.Get("TopologyReconciled")
		msg := ""
		if cond != nil {
			msg = cond.Reason + ": " + cond.Message
		}
		return len(done) == 4, fmt.Sprintf("%v; %s", done, msg)
	})
	e.waitReconciled("demo", 60*time.Second)

	// What each part reported, in the order the rollouts finished.
	var seq []string
	versions := map[string][]string{}
	for _, tr := range e.sim.Transitions() {
		versions[tr.Kind] = append(versions[tr.Kind], tr.Version)
		if tr.Version != "v1.31.2" {
			seq = append(seq, tr.Kind+"/"+poolOf(tr)+"@"+tr.Version)
		}
	}
	assert.Equal(t, []string{"v1.31.2", "v1.32.4", "v1.33.1"}, versions["SimControlPlane"], "control plane stepped through v1.32.4")
	for _, kind := range []string{"MachineDeployment", "MachinePool"} {
		for _, v := range versions[kind] {
			assert.NotEqual(t, "v1.32.4", v, "%s never ran the intermediate step", kind)
		}
	}
	require.Len(t, seq, 5, fmt.Sprint(seq))
	assert.Equal(t, "SimControlPlane/@v1.32.4", seq[0])
	assert.Equal(t, "SimControlPlane/@v1.33.1", seq[1])
	pools := seq[2:]
	assert.Equal(t, []string{"MachineDeployment/md-0@v1.33.1", "MachineDeployment/md-1@v1.33.1", "MachinePool/mp-0@v1.33.1"}, pools,
		"pools upgraded one after another, in topology order")
}

func poolOf(tr provider.Transition) string {
	if tr.Kind == "SimControlPlane" {
		return ""
	}
	// Names are <cluster>-<pool>-<random>.
	parts := strings.Split(tr.Name, "-")
	if len(parts) < 3 {
		return tr.Name
	}
	return strings.Join(parts[1:len(parts)-1], "-")
}
