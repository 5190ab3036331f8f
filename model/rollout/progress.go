package rollout

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/upgrade"
)

// Progress is what the rollout reads of a Cluster it changed.
type Progress struct {
	// ReconciledFor is the generation TopologyReconciled=True was reported for (0: it is not True);
	// Why says what the condition says when it is not.
	ReconciledFor int64  `json:"reconciledFor,omitempty"`
	Why           string `json:"why,omitempty"`
	// Running is the Cluster's control plane and pools (upgrade.InputFrom).
	Running upgrade.Input `json:"running"`
	// Pin and Applied are the Cluster's revision annotations: the ClusterClassRevision it is
	// pinned to, and the one its topology was last applied from.
	Pin     string `json:"pin,omitempty"`
	Applied string `json:"applied,omitempty"`
}

// Reconciled reads TopologyReconciled from a Cluster: the v1beta2 condition (status.conditions,
// with its own observedGeneration) when there is one, as Cluster API core and topoflow's Cluster
// controller role write it, else the v1beta1 condition (status.deprecated.v1beta1.conditions)
// with status.observedGeneration, as a status written before the v1beta2 one holds it. These are
// the v1beta1 status.v1beta2.conditions and status.conditions read before: Cluster API v1.14.2's
// conversion (core/v1beta1 Convert_v1beta1_ClusterStatus_To_v1beta2_ClusterStatus and back) moves
// each list as a whole between the two places, so the rule reads the same conditions whichever
// version the server stores.
func Reconciled(c *clusterv1.Cluster) (int64, string) {
	for _, cond := range c.Status.Conditions {
		if cond.Type == status.TopologyReconciled {
			if cond.Status == metav1.ConditionTrue {
				return cond.ObservedGeneration, ""
			}
			return 0, fmt.Sprintf("TopologyReconciled is %s (%s: %s)", cond.Status, cond.Reason, cond.Message)
		}
	}
	if d := c.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		for _, cond := range d.V1Beta1.Conditions {
			if cond.Type == status.TopologyReconciled {
				if cond.Status == corev1.ConditionTrue {
					return c.Status.ObservedGeneration, ""
				}
				return 0, fmt.Sprintf("TopologyReconciled is %s (%s: %s)", cond.Status, cond.Reason, cond.Message)
			}
		}
	}
	return 0, "no TopologyReconciled condition yet"
}

// Settled says whether a Cluster is done with a change the rollout wrote at generation written:
// topoflow reconciled that generation (TopologyReconciled=True for it), the control plane is
// stable and no pool is rolling out (by its Machines' versions or its replica counts), and for a
// version change the control plane and every pool run the new version. It is the same for a
// class rebase or a variable change as for an upgrade. A classRevision change writes only an
// annotation, which bumps no generation: it also waits until the Cluster's topology was applied
// from the revision it is pinned to (the applied annotation names the pin). When not done, the
// string says what it waits for.
func Settled(p Progress, c rolloutv1.Change, written int64) (bool, string) {
	if p.ReconciledFor < written {
		if p.Why != "" {
			return false, "waiting for the topology of generation " + fmt.Sprint(written) + ": " + p.Why
		}
		return false, fmt.Sprintf("waiting for the topology of generation %d to be reconciled (reported for %d)", written, p.ReconciledFor)
	}
	if c.ClassRevision != "" && (p.Pin == "" || p.Applied != p.Pin) {
		return false, fmt.Sprintf("waiting for the topology to be applied from ClusterClassRevision %s (annotation %s: %q)", p.Pin, revision.AppliedAnnotation, p.Applied)
	}
	cp := p.Running.ControlPlane
	switch {
	case !cp.Exists:
		return false, "no control plane yet"
	case c.Version != "" && cp.StatusVersion != c.Version:
		return false, fmt.Sprintf("control plane at %q, want %s", cp.StatusVersion, c.Version)
	case !cp.Stable:
		return false, "control plane rolling out"
	}
	for _, pool := range p.Running.Pools {
		switch {
		case !pool.Exists:
			return false, fmt.Sprintf("pool %s not created yet", pool.Name)
		case c.Version != "" && pool.Version != c.Version:
			return false, fmt.Sprintf("pool %s at %s, want %s", pool.Name, pool.Version, c.Version)
		case pool.RollingOut || pool.Converging:
			return false, fmt.Sprintf("pool %s rolling out", pool.Name)
		}
	}
	return true, ""
}

// NewlyReconciled says whether a Cluster's update is the first to report its topology reconciled
// for its current generation (old: the Cluster before the update, nil if none), or, reconciled,
// the first to record its topology applied from the revision it is pinned to (newlyApplied). That
// is the moment a Rollout following the Cluster may find it done: the starter wakes the Rollout's
// workflow then, so a Cluster's end is seen at once rather than at the next poll.
func NewlyReconciled(old, cur *clusterv1.Cluster) bool {
	if gen, _ := Reconciled(cur); gen < cur.Generation {
		return false
	}
	if old == nil {
		return true
	}
	gen, _ := Reconciled(old)
	return gen < cur.Generation || newlyApplied(old, cur)
}

// newlyApplied: the update records the Cluster's topology applied from the revision it is pinned
// to. A revision move writes only annotations, so no generation marks its end.
func newlyApplied(old, cur *clusterv1.Cluster) bool {
	pin := cur.Annotations[revision.PinAnnotation]
	return pin != "" && cur.Annotations[revision.AppliedAnnotation] == pin && old.Annotations[revision.AppliedAnnotation] != pin
}
