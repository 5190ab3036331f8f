package desired

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

func intentOf(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// TestUIDsStamp: an intent for an object the pass read carries that object's uid (Cluster API's
// structuredmerge.NewServerSidePatchHelper does the same), anything else carries none, so only
// objects that did not exist are created.
func TestUIDsStamp(t *testing.T) {
	var noCluster *clusterv1.Cluster
	read := &unstructured.Unstructured{}
	read.SetKind("SimCluster")
	read.SetNamespace("ns")
	read.SetName("c1-abcde")
	read.SetUID("u-infra")
	uids := UIDs{}
	uids.Add("SimCluster", read)
	uids.Add("Cluster", &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", UID: "u-cluster"}})
	uids.Add("MachineDeployment", &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1-md"}}) // no uid: not stored
	uids.Add("Cluster", noCluster)                                                                                             // typed nil
	uids.Add("SimCluster", nil)

	tests := []struct {
		name   string
		intent *unstructured.Unstructured
		want   types.UID
	}{
		{"object read", intentOf("SimCluster", "ns", "c1-abcde"), "u-infra"},
		{"typed object read", intentOf("Cluster", "ns", "c1"), "u-cluster"},
		{"same name, other kind", intentOf("SimMachineTemplate", "ns", "c1-abcde"), ""},
		{"same name, other namespace", intentOf("SimCluster", "other", "c1-abcde"), ""},
		{"object read without uid", intentOf("MachineDeployment", "ns", "c1-md"), ""},
		{"new object", intentOf("MachineDeployment", "ns", "c1-md-2"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.intent.SetUID("stale") // Stamp decides alone: whatever the intent held is replaced
			uids.Stamp(tt.intent)
			if got := tt.intent.GetUID(); got != tt.want {
				t.Errorf("uid = %q, want %q", got, tt.want)
			}
		})
	}
	if len(uids) != 2 {
		t.Errorf("UIDs holds %d entries, want 2 (nil and uid-less objects skipped): %v", len(uids), uids)
	}
}
