package topology

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

func TestDeleteHeld(t *testing.T) {
	now := metav1.Now()
	cluster := func(deleting, topology, okToDelete bool) *clusterv1.Cluster {
		c := &clusterv1.Cluster{}
		if deleting {
			c.DeletionTimestamp = &now
		}
		if topology {
			c.Spec.Topology = &clusterv1.Topology{Class: "c", Version: "v1.31.0"}
		}
		if okToDelete {
			c.Annotations = map[string]string{runtimev1.OkToDeleteAnnotation: ""}
		}
		return c
	}
	for _, tc := range []struct {
		name string
		c    *clusterv1.Cluster
		want bool
	}{
		{"deleting, hook not passed", cluster(true, true, false), true},
		{"deleting, hook passed", cluster(true, true, true), false},
		{"not deleting", cluster(false, true, false), false},
		{"no topology", cluster(true, false, false), false},
		{"Cluster gone", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeleteHeld(tc.c); got != tc.want {
				t.Errorf("DeleteHeld = %v, want %v", got, tc.want)
			}
		})
	}
}
