package topology

import (
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// DeleteHeld says whether a Cluster's topology objects must not be deleted yet: the Cluster is
// being deleted and its BeforeClusterDelete hook has not passed (no ok-to-delete annotation, which
// topoflow writes when its teardown starts). Cluster API core's Cluster controller waits for that
// annotation only with its ClusterTopology and RuntimeSDK gates on (reconcileDelete); with them
// off, beside topoflow, an admission webhook refuses its deletes until then. A Cluster that is not
// being deleted holds nothing: topology objects are rotated, removed and recreated as usual.
func DeleteHeld(c *clusterv1.Cluster) bool {
	if c == nil || c.Spec.Topology == nil || c.DeletionTimestamp == nil {
		return false
	}
	_, ok := c.Annotations[runtimev1.OkToDeleteAnnotation]
	return !ok
}
