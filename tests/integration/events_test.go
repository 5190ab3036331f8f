//go:build integration

package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
)

// eventReasons counts the Events recorded on a Cluster by reason (as `kubectl describe` finds
// them: by the involved object's kind and name).
func (e *env) eventReasons(name string) map[string]int {
	e.t.Helper()
	events := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	list, err := kc.Dynamic.Resource(events).Namespace(e.ns).List(e.ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Cluster,involvedObject.name=" + name})
	if err != nil {
		return nil
	}
	out := map[string]int{}
	for _, ev := range list.Items {
		reason, _ := ev.Object["reason"].(string)
		out[reason]++
	}
	return out
}

// eventMessages are the messages of a Cluster's Events with the given reason.
func (e *env) eventMessages(name, reason string) []string {
	e.t.Helper()
	events := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	list, err := kc.Dynamic.Resource(events).Namespace(e.ns).List(e.ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Cluster,involvedObject.name=" + name + ",reason=" + reason})
	if err != nil {
		return nil
	}
	var out []string
	for _, ev := range list.Items {
		m, _ := ev.Object["message"].(string)
		out = append(out, m)
	}
	return out
}

// TestEvents (#10): `kubectl describe cluster` shows what topoflow did: the topology and pools
// created, the upgrade started, the blocking hook with its message, each part's step, the upgrade
// completed.
func TestEvents(t *testing.T) {
	e := newEnv(t, envOptions{})
	ext := e.hookedCluster("v1.31.2", "v1.32.4", "v1.33.1")
	e.eventually(10*time.Second, "create Events", func() (bool, string) {
		got := e.eventReasons("demo")
		return got["TopologyCreated"] == 1 && got["MachineDeploymentCreated"] == 2 && got["MachinePoolCreated"] == 1, fmt.Sprint(got)
	})
	ext.BlockFirstCall(2, "waiting for the maintenance window", hooksv1.BeforeClusterUpgrade)
	e.setVersion("demo", "v1.33.1")
	e.waitUpgraded(ext, "v1.33.1", 120*time.Second)
	e.eventually(10*time.Second, "upgrade Events", func() (bool, string) {
		got := e.eventReasons("demo")
		return got["UpgradeStarted"] == 1 && got["UpgradeCompleted"] == 1 && got["HookBlocking"] >= 1 &&
			got["ControlPlaneUpgrade"] == 2 && got["MachineDeploymentUpgrade"] == 2 && got["MachinePoolUpgrade"] == 1, fmt.Sprint(got)
	})
	blocking := e.eventMessages("demo", "HookBlocking")
	assert.True(t, len(blocking) > 0 && strings.Contains(blocking[0], "waiting for the maintenance window"), "%v", blocking)
	steps := strings.Join(e.eventMessages("demo", "ControlPlaneUpgrade"), "\n")
	assert.Contains(t, steps, "version v1.31.2 -> v1.32.4")
	assert.Contains(t, steps, "version v1.32.4 -> v1.33.1")
	assert.Equal(t, []string{"Upgrade v1.31.2 -> v1.33.1 started (control plane steps v1.32.4, v1.33.1)"}, e.eventMessages("demo", "UpgradeStarted"))
}
