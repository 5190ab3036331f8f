package desired

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/model/labels"
)

// TestClusterPatch_reconcileCluster: the Cluster is patched only when a topology label, the
// upgrade-step annotation or a reference differs (Cluster API v1.14's reconcileCluster), and the
// patch carries only what differs; a reference in another version of the same group is the same.
func TestClusterPatch_reconcileCluster(t *testing.T) {
	in := sample(t)
	s, err := Compute(in)
	require.NoError(t, err)

	// A new Cluster: labels and references.
	p, err := ClusterPatch(in.Cluster, s.Cluster)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"labels":{"cluster.x-k8s.io/cluster-name":"demo","topology.cluster.x-k8s.io/owned":""}},
		"spec":{"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"SimCluster","name":"`+s.InfrastructureRef.Name+`","namespace":"default"},
		"controlPlaneRef":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlane","name":"`+s.ControlPlaneRef.Name+`","namespace":"default"}}}`, string(p))

	// All in place (the references read in another version of their group): nothing to write.
	c := in.Cluster.DeepCopy()
	c.Labels = map[string]string{labels.ClusterName: "demo", labels.TopologyOwned: "", "user": "kept"}
	c.Spec.InfrastructureRef = hubRef(&corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta2", Kind: "SimCluster", Name: s.InfrastructureRef.Name})
	c.Spec.ControlPlaneRef = hubRef(s.ControlPlaneRef)
	p, err = ClusterPatch(c, s.Cluster)
	require.NoError(t, err)
	assert.Nil(t, p)

	// An upgrade step to set, then to remove.
	s.Cluster.SetAnnotations(map[string]string{labels.UpgradeStep: "v1.32.0"})
	p, err = ClusterPatch(c, s.Cluster)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"annotations":{"topology.internal.cluster.x-k8s.io/upgrade-step":"v1.32.0"}}}`, string(p))
	c.Annotations = map[string]string{labels.UpgradeStep: "v1.32.0", "user": "kept"}
	s.Cluster.SetAnnotations(nil)
	p, err = ClusterPatch(c, s.Cluster)
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"annotations":{"topology.internal.cluster.x-k8s.io/upgrade-step":null}}}`, string(p))
}
