// Package status derives a managed Cluster's phase and conditions. Pure: the activity that
// writes status supplies the clock and the current conditions.
package status

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// Condition types topoflow sets on a Cluster (Cluster API v1beta1 names, which v1beta2 keeps in
// status.deprecated.v1beta1.conditions).
const (
	TopologyReconciled      = "TopologyReconciled"
	InfrastructureReady     = "InfrastructureReady"
	ControlPlaneInitialized = "ControlPlaneInitialized"
	ControlPlaneReady       = "ControlPlaneReady"
)

// The severities of a False v1beta1 condition (Cluster API v1beta1's ConditionSeverity values; a
// True condition has none).
const (
	SeverityError   = "Error"
	SeverityWarning = "Warning"
	SeverityInfo    = "Info"
)

// TopologyReconciled reasons (Cluster API v1beta1 values).
const (
	ReasonReconcileFailed                 = "TopologyReconcileFailed"
	ReasonMachineDeploymentsCreatePending = "MachineDeploymentsCreatePending"
	ReasonPaused                          = "Paused"
	ReasonDeleting                        = "Deleting"
	ReasonClusterUpgrading                = "ClusterUpgrading"
	ReasonClusterCreating                 = "ClusterCreating"
)

// Facts is what the phase depends on (seed 004).
type Facts struct {
	Deleting bool
	Failed   bool
	// RefsSet means the Cluster points at its infrastructure cluster (or needs none) and control plane.
	RefsSet             bool
	InfrastructureReady bool
	EndpointValid       bool
}

// Phase is Pending until the Cluster points at its infrastructure, Provisioning until that is
// ready and the control plane endpoint is known, then Provisioned.
func Phase(f Facts) string {
	switch {
	case f.Deleting:
		return clusterv1.ClusterPhaseDeleting
	case f.Failed:
		return clusterv1.ClusterPhaseFailed
	case !f.RefsSet:
		return clusterv1.ClusterPhasePending
	case f.InfrastructureReady && f.EndpointValid:
		return clusterv1.ClusterPhaseProvisioned
	default:
		return clusterv1.ClusterPhaseProvisioning
	}
}

// Condition is a condition to set, without its transition time.
type Condition struct {
	Type     string `json:"type"`
	Status   bool   `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	Severity string `json:"severity,omitempty"`
}

// True returns a True condition.
func True(t string) Condition { return Condition{Type: t, Status: true} }

// False returns a False condition with a reason, severity and message.
func False(t, reason, sev, msg string) Condition {
	return Condition{Type: t, Reason: reason, Severity: sev, Message: msg}
}

// Merge sets the given conditions on current ones. A condition keeps its lastTransitionTime unless
// its status changes; conditions of other types are kept. The result is sorted by type, as
// Cluster API keeps them, except that Ready stays first. The conditions are v1beta1 ones, as the
// hub keeps them (status.deprecated.v1beta1.conditions); nil stays nil when nothing is set.
func Merge(current clusterv1.V1Beta1Conditions, set []Condition, now time.Time) clusterv1.V1Beta1Conditions {
	out := current.DeepCopy()
	for _, c := range set {
		st := corev1.ConditionFalse
		if c.Status {
			st = corev1.ConditionTrue
		}
		next := clusterv1.V1Beta1Condition{Type: c.Type, Status: st, Reason: c.Reason, Message: c.Message, Severity: c.Severity}
		if c.Status {
			next.Severity = ""
		}
		if existing := find(out, c.Type); existing != nil {
			next.LastTransitionTime = existing.LastTransitionTime
			if existing.Status != st {
				next.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
			}
			*existing = next
			continue
		}
		next.LastTransitionTime = metav1.NewTime(now.Truncate(time.Second))
		out = append(out, next)
	}
	sortConditions(out)
	return out
}

func find(cs clusterv1.V1Beta1Conditions, t string) *clusterv1.V1Beta1Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

func sortConditions(cs clusterv1.V1Beta1Conditions) {
	less := func(a, b clusterv1.V1Beta1Condition) bool {
		if a.Type == "Ready" || b.Type == "Ready" {
			return a.Type == "Ready" && b.Type != "Ready"
		}
		return a.Type < b.Type
	}
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && less(cs[j], cs[j-1]); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
}

// V1Beta2 returns a condition as Cluster API v1.11+ keeps it in the v1beta2 conditions
// (status.conditions of a v1beta2 Cluster, status.v1beta2.conditions of a v1beta1 one), with the
// current one's transition time kept unless the status changes. Where the v1beta2 reasons
// differ from the v1beta1 ones (api/core/v1beta2 ClusterTopologyReconcile*Reason) they are
// translated; a reason is required there, so a True condition gets the success reason.
func V1Beta2(c Condition, current *metav1.Condition, generation int64, now time.Time) metav1.Condition {
	st := metav1.ConditionFalse
	if c.Status {
		st = metav1.ConditionTrue
	}
	reason := c.Reason
	switch {
	case c.Status && c.Type == TopologyReconciled:
		reason = "ReconcileSucceeded"
	case c.Status && reason == "":
		reason = "Ready"
	case reason == ReasonReconcileFailed:
		reason = "ReconcileFailed"
	case reason == "":
		reason = "NotReady"
	}
	out := metav1.Condition{Type: c.Type, Status: st, Reason: reason, Message: c.Message, ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now.Truncate(time.Second))}
	if current != nil && current.Status == st {
		out.LastTransitionTime = current.LastTransitionTime
	}
	return out
}
