package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
)

// TestReleases: only deleting pool objects carrying Cluster API's topology finalizer are let go,
// and only of that finalizer (Cluster API's topology/machineset and topology/machinedeployment
// reconcileDelete remove their own finalizer and no other).
func TestReleases(t *testing.T) {
	now := metav1.Now()
	md := func(name string, deleting bool, fins ...string) *clusterv1.MachineDeployment {
		m := &clusterv1.MachineDeployment{}
		m.Name, m.ResourceVersion, m.Finalizers = name, "7", fins
		if deleting {
			m.DeletionTimestamp = &now
		}
		return m
	}
	ms := func(name string, deleting bool, fins ...string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetName(name)
		u.SetResourceVersion("9")
		u.SetFinalizers(fins)
		if deleting {
			u.SetDeletionTimestamp(&now)
		}
		return u
	}
	cur := desired.Current{
		MachineDeployments: map[string]*clusterv1.MachineDeployment{
			"md-0": md("c-md-0", false, MachineDeploymentTopologyFinalizer),
			"md-1": md("c-md-1", true, "cluster.x-k8s.io/machinedeployment", MachineDeploymentTopologyFinalizer),
		},
		MachineSets: []*unstructured.Unstructured{
			ms("old", true, MachineSetTopologyFinalizer, "cluster.x-k8s.io/machineset"),
			ms("current", false, MachineSetTopologyFinalizer),
			ms("gone-without", true, "cluster.x-k8s.io/machineset"),
		},
	}
	assert.Equal(t, []Release{
		{Kind: "MachineDeployment", Name: "c-md-1", ResourceVersion: "7", Finalizer: MachineDeploymentTopologyFinalizer, Kept: []string{"cluster.x-k8s.io/machinedeployment"}},
		{Kind: "MachineSet", Name: "old", ResourceVersion: "9", Finalizer: MachineSetTopologyFinalizer, Kept: []string{"cluster.x-k8s.io/machineset"}},
	}, Releases(cur))
	assert.Empty(t, Releases(desired.Current{}))
}
