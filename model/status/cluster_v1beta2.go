package status

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/labels"
)

// The v1beta2 status of a Cluster as Cluster API v1.14's Cluster controller writes it
// (core/reconcilers/cluster, cluster_controller_status.go updateStatus): the conditions and the
// control plane and worker replica counters: status.conditions, status.controlPlane and
// status.workers of the hub's Cluster (a v1beta1 Cluster holds them under status.v1beta2).
// topoflow writes them in its Cluster controller role.
//
// Left out, for want of facts topoflow does not read: RemoteConnectionProbe (no probe of the
// workload cluster's API server), ControlPlaneMachinesReady, WorkerMachinesReady,
// ControlPlaneMachinesUpToDate, WorkerMachinesUpToDate and Remediating (no Machines or health
// checks are read), and the stand-alone Machines and MachineSets owned by the Cluster itself (a
// managed topology has none).

// ClusterV1Beta2Types are the v1beta2 condition types the Cluster controller role sets.
var ClusterV1Beta2Types = []string{
	capiv1beta2.ClusterAvailableCondition,
	capiv1beta2.ClusterInfrastructureReadyCondition,
	capiv1beta2.ClusterControlPlaneInitializedCondition,
	capiv1beta2.ClusterControlPlaneAvailableCondition,
	capiv1beta2.ClusterWorkersAvailableCondition,
	capiv1beta2.ClusterTopologyReconciledCondition,
	capiv1beta2.ClusterRollingOutCondition,
	capiv1beta2.ClusterScalingUpCondition,
	capiv1beta2.ClusterScalingDownCondition,
	capiv1beta2.PausedCondition,
	capiv1beta2.ClusterDeletingCondition,
}

// ClusterFacts is what a Cluster's v1beta2 status is computed from: the Cluster as read (its
// current status included) and the objects the Cluster controller reads.
type ClusterFacts struct {
	Cluster *clusterv1.Cluster
	// ClassAvailabilityGates are the ClusterClass's, used when the Cluster has none.
	ClassAvailabilityGates []clusterv1.ClusterAvailabilityGate
	// InfraCluster and ControlPlane are the referenced objects; nil when not found.
	InfraCluster, ControlPlane *unstructured.Unstructured
	// MachineDeployments and MachinePools are the Cluster's (label cluster.x-k8s.io/cluster-name),
	// in the version they are served in.
	MachineDeployments, MachinePools []unstructured.Unstructured
	// InfrastructureProvisioned is status.infrastructureReady as this write sets it (v1beta2:
	// status.initialization.infrastructureProvisioned as read).
	InfrastructureProvisioned bool
	// Topology is the topology role's TopologyReconciled condition for this write (nil: keep the
	// current one).
	Topology *Condition
}

// ClusterV1Beta2 computes the v1beta2 status the Cluster controller role writes: the conditions
// of ClusterV1Beta2Types (with the Cluster's generation, and the current transition time where the
// status did not change), and the replica counters. A paused Cluster gets only its Paused and
// TopologyReconciled conditions anew; the rest stays as it is, as Cluster API's controller does
// not reconcile a paused Cluster. The upgrade plans are left out (the topology role's). The
// answer is a status holding these fields only (conditions, controlPlane, workers).
func ClusterV1Beta2(f ClusterFacts, now time.Time) *clusterv1.ClusterStatus {
	c := f.Cluster
	current := &c.Status
	var set []metav1.Condition
	if f.Topology != nil {
		set = append(set, V1Beta2(*f.Topology, nil, 0, now))
	} else if cur := meta.FindStatusCondition(current.Conditions, capiv1beta2.ClusterTopologyReconciledCondition); cur != nil {
		set = append(set, *cur)
	}
	paused := pausedCondition(c)
	set = append(set, paused)
	out := &clusterv1.ClusterStatus{}
	if paused.Status == metav1.ConditionTrue {
		for _, t := range ClusterV1Beta2Types {
			if cur := meta.FindStatusCondition(current.Conditions, t); cur != nil && !slices.ContainsFunc(set, func(s metav1.Condition) bool { return s.Type == t }) {
				set = append(set, *cur)
			}
		}
		out.Conditions = setConditions(current.Conditions, set, c.Generation, now)
		if current.ControlPlane != nil {
			out.ControlPlane = counters(current.ControlPlane)
		}
		if current.Workers != nil {
			out.Workers = counters(current.Workers)
		}
		return out
	}

	out.ControlPlane = controlPlaneReplicas(c, f.ControlPlane)
	out.Workers = workersReplicas(f.MachineDeployments, f.MachinePools)

	cpInitialized := controlPlaneInitialized(f.ControlPlane) ||
		meta.IsStatusConditionTrue(current.Conditions, capiv1beta2.ClusterControlPlaneInitializedCondition)
	set = append(set,
		infrastructureReadyCondition(c, f.InfraCluster, f.InfrastructureProvisioned),
		controlPlaneAvailableCondition(c, f.ControlPlane, cpInitialized),
		controlPlaneInitializedCondition(c, f.ControlPlane, current.Conditions),
		workersAvailableCondition(f.MachineDeployments),
		rollingOutCondition(f.ControlPlane, f.MachineDeployments),
		scalingCondition(capiv1beta2.ClusterScalingUpCondition, capiv1beta2.ClusterScalingUpReason, capiv1beta2.ClusterScalingUpUnknownReason,
			capiv1beta2.ClusterNotScalingUpReason, f.ControlPlane, f.MachineDeployments),
		scalingCondition(capiv1beta2.ClusterScalingDownCondition, capiv1beta2.ClusterScalingDownReason, capiv1beta2.ClusterScalingDownUnknownReason,
			capiv1beta2.ClusterNotScalingDownReason, f.ControlPlane, f.MachineDeployments),
		deletingCondition(f),
	)
	// Available summarizes the others (and the availability gates' conditions, whoever sets them).
	all := slices.Clone(set)
	for _, cur := range current.Conditions {
		if !slices.ContainsFunc(all, func(s metav1.Condition) bool { return s.Type == cur.Type }) {
			all = append(all, cur)
		}
	}
	set = append(set, availableCondition(c, f.ClassAvailabilityGates, all))
	out.Conditions = setConditions(current.Conditions, set, c.Generation, now)
	return out
}

// SameV1Beta2 says whether the current status already holds what next would write: next's
// conditions (conditions of other types, someone else's, are not compared) and counters.
func SameV1Beta2(current, next *clusterv1.ClusterStatus) bool {
	if current == nil {
		current = &clusterv1.ClusterStatus{}
	}
	for _, n := range next.Conditions {
		cur := meta.FindStatusCondition(current.Conditions, n.Type)
		if cur == nil || !equality.Semantic.DeepEqual(*cur, n) {
			return false
		}
	}
	cp, nextCP := &clusterv1.ClusterReplicasStatus{}, &clusterv1.ClusterReplicasStatus{}
	if current.ControlPlane != nil {
		cp = counters(current.ControlPlane)
	}
	if next.ControlPlane != nil {
		nextCP = counters(next.ControlPlane)
	}
	w, nextW := &clusterv1.ClusterReplicasStatus{}, &clusterv1.ClusterReplicasStatus{}
	if current.Workers != nil {
		w = counters(current.Workers)
	}
	if next.Workers != nil {
		nextW = counters(next.Workers)
	}
	return equality.Semantic.DeepEqual(cp, nextCP) && equality.Semantic.DeepEqual(w, nextW)
}

// counters is a control plane or workers status without its upgrade plan (the topology role's).
func counters(s *clusterv1.ClusterReplicasStatus) *clusterv1.ClusterReplicasStatus {
	out := s.DeepCopy()
	out.UpgradePlan = nil
	return out
}

// setConditions gives the conditions set the generation and their transition time: the current
// one while the status stays, otherwise the source's (a mirrored condition) or now, to the second
// (conditions.Set). They are sorted as Cluster API sorts them.
func setConditions(current, set []metav1.Condition, generation int64, now time.Time) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(set))
	for _, s := range set {
		s.ObservedGeneration = generation
		switch cur := meta.FindStatusCondition(current, s.Type); {
		case cur != nil && cur.Status == s.Status:
			s.LastTransitionTime = cur.LastTransitionTime
		case s.LastTransitionTime.IsZero():
			s.LastTransitionTime = metav1.NewTime(now)
		}
		s.LastTransitionTime = metav1.NewTime(s.LastTransitionTime.Truncate(time.Second))
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		oi, oj := conditionOrder(out[i].Type), conditionOrder(out[j].Type)
		return oi < oj || (oi == oj && out[i].Type < out[j].Type)
	})
	return out
}

// conditionOrder is where Cluster API's conditions.Set puts a Cluster condition: Available first,
// Paused and Deleting last, the others (gates among them) in between (util/conditions sort.go;
// only the types a Cluster has are listed).
func conditionOrder(t string) int {
	order := []string{
		capiv1beta2.AvailableCondition,
		capiv1beta2.ClusterRemoteConnectionProbeCondition,
		capiv1beta2.ClusterInfrastructureReadyCondition,
		capiv1beta2.ClusterControlPlaneInitializedCondition,
		capiv1beta2.ClusterControlPlaneAvailableCondition,
		capiv1beta2.ClusterWorkersAvailableCondition,
		capiv1beta2.ClusterTopologyReconciledCondition,
		capiv1beta2.RollingOutCondition,
		capiv1beta2.RemediatingCondition,
		capiv1beta2.ScalingDownCondition,
		capiv1beta2.ScalingUpCondition,
		capiv1beta2.ClusterControlPlaneMachinesReadyCondition,
		capiv1beta2.ClusterWorkerMachinesReadyCondition,
		capiv1beta2.ClusterControlPlaneMachinesUpToDateCondition,
		capiv1beta2.ClusterWorkerMachinesUpToDateCondition,
		"", // any other type
		capiv1beta2.PausedCondition,
		capiv1beta2.DeletingCondition,
	}
	if i := slices.Index(order, t); i >= 0 {
		return i
	}
	return slices.Index(order, "")
}

// pausedCondition follows util/paused pausedCondition.
func pausedCondition(c *clusterv1.Cluster) metav1.Condition {
	_, annotated := c.Annotations[labels.Paused]
	paused := c.Spec.Paused != nil && *c.Spec.Paused
	if !paused && !annotated {
		return metav1.Condition{Type: capiv1beta2.PausedCondition, Status: metav1.ConditionFalse, Reason: capiv1beta2.NotPausedReason}
	}
	var why []string
	if paused {
		why = append(why, "Cluster spec.paused is set to true")
	}
	if annotated {
		why = append(why, "Cluster has the cluster.x-k8s.io/paused annotation")
	}
	return metav1.Condition{Type: capiv1beta2.PausedCondition, Status: metav1.ConditionTrue, Reason: capiv1beta2.PausedReason,
		Message: strings.Join(why, ", ")}
}

// waitingForTopology is the message of a part the topology has not created yet (empty while deleting).
func waitingForTopology(c *clusterv1.Cluster) string {
	if c.DeletionTimestamp != nil {
		return ""
	}
	return "Waiting for cluster topology to be reconciled"
}

// refCondition is how Cluster API's Cluster controller reports a referenced object (the
// infrastructure cluster, the control plane): mirrored from one of the object's conditions, else
// from a flag of its status (the fallback), else why the object is missing.
type refCondition struct {
	condType, mirrored, flagField          string
	trueReason, falseReason, invalidReason string
	doesNotExistReason, deletedReason      string
}

func (r refCondition) of(c *clusterv1.Cluster, ref clusterv1.ContractVersionedObjectReference, obj *unstructured.Unstructured, flag bool) metav1.Condition {
	if !ref.IsDefined() {
		return metav1.Condition{Type: r.condType, Status: metav1.ConditionFalse, Reason: r.doesNotExistReason, Message: waitingForTopology(c)}
	}
	if obj == nil {
		return missingObject(c, r.condType, ref.Kind, flag, r.deletedReason, r.doesNotExistReason)
	}
	fallback := metav1.Condition{Type: r.condType, Status: metav1.ConditionFalse, Reason: r.falseReason,
		Message: fmt.Sprintf("%s status.initialization.%s is false", ref.Kind, r.flagField)}
	if flag {
		fallback = metav1.Condition{Type: r.condType, Status: metav1.ConditionTrue, Reason: r.trueReason}
	}
	return mirror(obj, r.mirrored, fallback, r.trueReason, r.invalidReason)
}

// infrastructureReadyCondition follows setInfrastructureReadyCondition.
func infrastructureReadyCondition(c *clusterv1.Cluster, infra *unstructured.Unstructured, provisioned bool) metav1.Condition {
	return refCondition{
		condType: capiv1beta2.ClusterInfrastructureReadyCondition, mirrored: capiv1beta2.ReadyCondition, flagField: "provisioned",
		trueReason: capiv1beta2.ClusterInfrastructureReadyReason, falseReason: capiv1beta2.ClusterInfrastructureNotReadyReason,
		invalidReason:      capiv1beta2.ClusterInfrastructureInvalidConditionReportedReason,
		doesNotExistReason: capiv1beta2.ClusterInfrastructureDoesNotExistReason, deletedReason: capiv1beta2.ClusterInfrastructureDeletedReason,
	}.of(c, c.Spec.InfrastructureRef, infra, provisioned)
}

// controlPlaneAvailableCondition follows setControlPlaneAvailableCondition.
func controlPlaneAvailableCondition(c *clusterv1.Cluster, cp *unstructured.Unstructured, initialized bool) metav1.Condition {
	return refCondition{
		condType: capiv1beta2.ClusterControlPlaneAvailableCondition, mirrored: capiv1beta2.AvailableCondition, flagField: "controlPlaneInitialized",
		trueReason: capiv1beta2.ClusterControlPlaneAvailableReason, falseReason: capiv1beta2.ClusterControlPlaneNotAvailableReason,
		invalidReason:      capiv1beta2.ClusterControlPlaneInvalidConditionReportedReason,
		doesNotExistReason: capiv1beta2.ClusterControlPlaneDoesNotExistReason, deletedReason: capiv1beta2.ClusterControlPlaneDeletedReason,
	}.of(c, c.Spec.ControlPlaneRef, cp, initialized)
}

// missingObject is the condition for a referenced object that is not there: deleted (it was
// provisioned) or not created yet (conditions' last cases in setInfrastructureReadyCondition and
// setControlPlaneAvailableCondition).
func missingObject(c *clusterv1.Cluster, t, kind string, wasThere bool, deletedReason, doesNotExistReason string) metav1.Condition {
	switch {
	case wasThere && c.DeletionTimestamp != nil:
		return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: deletedReason, Message: kind + " has been deleted"}
	case wasThere:
		return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: deletedReason, Message: kind + " has been deleted while the cluster still exists"}
	}
	return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: doesNotExistReason, Message: kind + " does not exist"}
}

// mirror follows conditions.NewMirrorConditionFromUnstructured: the object's condition of type
// source, as the Cluster's condition of fallback's type, or fallback when the object has none; a
// True condition without reason (a v1beta1 one) gets trueReason; conditions that cannot be read
// give Unknown with invalidReason.
func mirror(obj *unstructured.Unstructured, source string, fallback metav1.Condition, trueReason, invalidReason string) metav1.Condition {
	conds, err := objectConditions(obj)
	if err != nil {
		return metav1.Condition{Type: fallback.Type, Status: metav1.ConditionUnknown, Reason: invalidReason, Message: err.Error()}
	}
	src := meta.FindStatusCondition(conds, source)
	if src == nil {
		return fallback
	}
	out := metav1.Condition{Type: fallback.Type, Status: src.Status, Reason: src.Reason, Message: src.Message, LastTransitionTime: src.LastTransitionTime}
	if out.Reason == noReasonReported && out.Status == metav1.ConditionTrue {
		out.Reason = trueReason
	}
	return out
}

// controlPlaneInitialized reads the control plane's initialized flag (status.initialized by the
// v1beta1 contract, status.initialization.controlPlaneInitialized by the v1beta2 one).
func controlPlaneInitialized(cp *unstructured.Unstructured) bool {
	if cp == nil {
		return false
	}
	st, err := contract.ReadControlPlane(cp)
	return err == nil && st.Initialized
}

// controlPlaneInitializedCondition follows setControlPlaneInitializedCondition (a True condition
// stays True).
func controlPlaneInitializedCondition(c *clusterv1.Cluster, cp *unstructured.Unstructured, current []metav1.Condition) metav1.Condition {
	const t = capiv1beta2.ClusterControlPlaneInitializedCondition
	if cur := meta.FindStatusCondition(current, t); cur != nil && cur.Status == metav1.ConditionTrue {
		return *cur
	}
	ref := c.Spec.ControlPlaneRef
	switch {
	case !ref.IsDefined():
		return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: capiv1beta2.ClusterControlPlaneDoesNotExistReason, Message: waitingForTopology(c)}
	case cp == nil:
		return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: capiv1beta2.ClusterControlPlaneDoesNotExistReason, Message: ref.Kind + " does not exist"}
	}
	st, err := contract.ReadControlPlane(cp)
	switch {
	case err != nil:
		return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: capiv1beta2.ClusterControlPlaneInitializedInternalErrorReason,
			Message: "Please check controller logs for errors"}
	case st.Initialized:
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: capiv1beta2.ClusterControlPlaneInitializedReason}
	}
	return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: capiv1beta2.ClusterControlPlaneNotInitializedReason, Message: "Control plane not yet initialized"}
}

// workersAvailableCondition follows setWorkersAvailableCondition. Cluster API v1.14 aggregates
// only the MachineDeployments' Available conditions (MachinePools are passed as an empty list).
func workersAvailableCondition(mds []unstructured.Unstructured) metav1.Condition {
	const t = capiv1beta2.ClusterWorkersAvailableCondition
	if len(mds) == 0 {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: capiv1beta2.ClusterWorkersAvailableNoWorkersReason}
	}
	objs, err := reportedBy(mds, capiv1beta2.AvailableCondition)
	if err != nil {
		return metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: capiv1beta2.ClusterWorkersAvailableInternalErrorReason,
			Message: "Please check controller logs for errors"}
	}
	return aggregate(t, capiv1beta2.AvailableCondition, objs, true, polarityPriority(),
		mergeReasons{capiv1beta2.ClusterWorkersNotAvailableReason, capiv1beta2.ClusterWorkersAvailableUnknownReason, capiv1beta2.ClusterWorkersAvailableReason})
}

// rollingOutCondition follows setRollingOutCondition: the control plane's RollingOut condition (if
// it reports one) and the MachineDeployments', negative polarity.
func rollingOutCondition(cp *unstructured.Unstructured, mds []unstructured.Unstructured) metav1.Condition {
	return negativeAggregate(capiv1beta2.ClusterRollingOutCondition, capiv1beta2.RollingOutCondition,
		mergeReasons{capiv1beta2.ClusterRollingOutReason, capiv1beta2.ClusterRollingOutUnknownReason, capiv1beta2.ClusterNotRollingOutReason},
		capiv1beta2.ClusterRollingOutInternalErrorReason, cp, mds)
}

// scalingCondition follows setScalingUpCondition and setScalingDownCondition (without the
// MachineSets the Cluster owns directly: a managed topology has none).
func scalingCondition(t, issue, unknown, info string, cp *unstructured.Unstructured, mds []unstructured.Unstructured) metav1.Condition {
	return negativeAggregate(t, t, mergeReasons{issue, unknown, info}, capiv1beta2.InternalErrorReason, cp, mds)
}

func negativeAggregate(t, source string, r mergeReasons, internalError string, cp *unstructured.Unstructured, mds []unstructured.Unstructured) metav1.Condition {
	internal := metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: internalError, Message: "Please check controller logs for errors"}
	var objs []reported
	if cp != nil {
		// The control plane counts only when it reports the condition (the contract does not require it).
		conds, err := objectConditions(cp)
		if err != nil {
			return internal
		}
		if c := meta.FindStatusCondition(conds, source); c != nil {
			objs = append(objs, reported{kind: cp.GetKind(), name: cp.GetName(), Condition: *c})
		}
	}
	more, err := reportedBy(mds, source)
	if err != nil {
		return internal
	}
	objs = append(objs, more...)
	if len(objs) == 0 {
		return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: r.info}
	}
	return aggregate(t, source, objs, false, polarityPriority(source), r)
}

// reportedBy is each object's condition of type t (an empty one when it has none).
func reportedBy(objs []unstructured.Unstructured, t string) ([]reported, error) {
	out := make([]reported, 0, len(objs))
	for i := range objs {
		conds, err := objectConditions(&objs[i])
		if err != nil {
			return nil, err
		}
		r := reported{kind: objs[i].GetKind(), name: objs[i].GetName()}
		if c := meta.FindStatusCondition(conds, t); c != nil {
			r.Condition = *c
		}
		out = append(out, r)
	}
	return out, nil
}

// objectConditions reads an object's v1beta2 conditions as Cluster API's conditions.UnstructuredGetAll
// does: status.v1beta2.conditions (a v1beta1 object's), else status.conditions (a v1beta2
// object's, or a v1beta1 object's v1beta1 conditions); a condition without reason gets
// NoReasonReported.
func objectConditions(u *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, found, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "v1beta2", "conditions")
	if _, isList := raw.([]any); !found || !isList {
		raw, _, _ = unstructured.NestedFieldNoCopy(u.Object, "status", "conditions")
	}
	list, _ := raw.([]any)
	var out []metav1.Condition
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m == nil {
			continue
		}
		c := metav1.Condition{}
		c.Type, _ = m["type"].(string)
		st, _ := m["status"].(string)
		c.Status = metav1.ConditionStatus(st)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		if ltt, _ := m["lastTransitionTime"].(string); ltt != "" {
			if err := c.LastTransitionTime.UnmarshalQueryParameter(ltt); err != nil {
				return nil, fmt.Errorf("%s %s: condition %s: lastTransitionTime %q: %w", u.GetKind(), u.GetName(), c.Type, ltt, err)
			}
			c.LastTransitionTime = metav1.NewTime(c.LastTransitionTime.UTC())
		}
		switch {
		case c.Type == "":
			return nil, fmt.Errorf("%s %s: a condition has no type", u.GetKind(), u.GetName())
		case c.Status != metav1.ConditionTrue && c.Status != metav1.ConditionFalse && c.Status != metav1.ConditionUnknown:
			return nil, fmt.Errorf("%s %s: condition %s has status %q", u.GetKind(), u.GetName(), c.Type, st)
		}
		if c.Reason == "" {
			c.Reason = noReasonReported
		}
		out = append(out, c)
	}
	return out, nil
}

// deletingCondition follows setDeletingCondition, with the reasons reconcileDelete gives by how far
// the deletion got: the BeforeClusterDelete hook, then the workers, the control plane and the
// infrastructure cluster.
func deletingCondition(f ClusterFacts) metav1.Condition {
	const t = capiv1beta2.ClusterDeletingCondition
	c := f.Cluster
	if c.DeletionTimestamp == nil {
		return metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: capiv1beta2.ClusterNotDeletingReason}
	}
	deleting := func(reason, msg string) metav1.Condition {
		return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg}
	}
	if _, ok := c.Annotations[runtimev1.OkToDeleteAnnotation]; c.Spec.Topology.IsDefined() && !ok {
		return deleting(capiv1beta2.ClusterDeletingWaitingForBeforeDeleteHookReason, "Waiting for BeforeClusterDelete hook")
	}
	var pending []string
	for _, g := range []struct {
		what string
		objs []unstructured.Unstructured
	}{{"MachineDeployments", f.MachineDeployments}, {"MachinePools", f.MachinePools}} {
		var names []string
		for _, o := range g.objs {
			names = append(names, o.GetName())
		}
		if len(names) > 0 {
			sort.Strings(names)
			pending = append(pending, "* "+g.what+": "+nameList(names, 5))
		}
	}
	switch {
	case len(pending) > 0:
		return deleting(capiv1beta2.ClusterDeletingWaitingForWorkersDeletionReason, strings.Join(pending, "\n"))
	case c.Spec.ControlPlaneRef.IsDefined() && f.ControlPlane != nil:
		return deleting(capiv1beta2.ClusterDeletingWaitingForControlPlaneDeletionReason, fmt.Sprintf("Waiting for %s to be deleted", c.Spec.ControlPlaneRef.Kind))
	case c.Spec.InfrastructureRef.IsDefined() && f.InfraCluster != nil:
		return deleting(capiv1beta2.ClusterDeletingWaitingForInfrastructureDeletionReason, fmt.Sprintf("Waiting for %s to be deleted", c.Spec.InfrastructureRef.Kind))
	}
	return deleting(capiv1beta2.ClusterDeletingDeletionCompletedReason, "Deletion completed")
}

// nameList joins names, the first n of them and how many more (util/log ListToString).
func nameList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-n)
}

// availableCondition follows setAvailableCondition: a summary of Deleting, InfrastructureReady,
// ControlPlaneAvailable, WorkersAvailable, TopologyReconciled and the availability gates (the
// Cluster's, else its class's). Cluster API also gates on RemoteConnectionProbe, which topoflow
// does not set: it is left out, lest Available stay Unknown.
func availableCondition(c *clusterv1.Cluster, classGates []clusterv1.ClusterAvailabilityGate, conds []metav1.Condition) metav1.Condition {
	types := []string{
		capiv1beta2.ClusterDeletingCondition,
		capiv1beta2.ClusterInfrastructureReadyCondition,
		capiv1beta2.ClusterControlPlaneAvailableCondition,
		capiv1beta2.ClusterWorkersAvailableCondition,
		capiv1beta2.ClusterTopologyReconciledCondition,
	}
	negative := []string{capiv1beta2.ClusterDeletingCondition}
	gates := c.Spec.AvailabilityGates
	if gates == nil {
		gates = classGates
	}
	for _, g := range gates {
		types = append(types, g.ConditionType)
		if g.Polarity == clusterv1.NegativePolarityCondition {
			negative = append(negative, g.ConditionType)
		}
	}
	var ignore []string
	if !c.Spec.Topology.IsDefined() {
		ignore = []string{capiv1beta2.ClusterTopologyReconciledCondition}
	}
	deleting := c.DeletionTimestamp != nil
	base := polarityPriority(negative...)
	prio := func(cond metav1.Condition) priority {
		// While deleting, the parts being gone is expected.
		if deleting {
			if cond.Type == capiv1beta2.ClusterInfrastructureReadyCondition &&
				(cond.Reason == capiv1beta2.ClusterInfrastructureDeletedReason || cond.Reason == capiv1beta2.ClusterInfrastructureDoesNotExistReason) {
				return infoPriority
			}
			if cond.Type == capiv1beta2.ClusterControlPlaneAvailableCondition &&
				(cond.Reason == capiv1beta2.ClusterControlPlaneDeletedReason || cond.Reason == capiv1beta2.ClusterControlPlaneDoesNotExistReason) {
				return infoPriority
			}
		}
		// A topology held back (creating, upgrading, pending, paused...) is not an issue; failing is.
		if cond.Type == capiv1beta2.ClusterTopologyReconciledCondition && cond.Status == metav1.ConditionFalse &&
			cond.Reason != capiv1beta2.ClusterTopologyReconciledFailedReason && cond.Reason != capiv1beta2.ClusterTopologyReconciledClusterClassNotReconciledReason {
			return infoPriority
		}
		return base(cond)
	}
	return summarize(capiv1beta2.ClusterAvailableCondition, conds, types, ignore, prio,
		mergeReasons{capiv1beta2.ClusterNotAvailableReason, capiv1beta2.ClusterAvailableUnknownReason, capiv1beta2.ClusterAvailableReason})
}

// controlPlaneReplicas follows setControlPlaneReplicas for a Cluster with a control plane object:
// its counters as it reports them (a counter it does not report keeps the Cluster's current
// value), all of them cleared while the object is not there. By the v1beta1 contract, available
// replicas are the desired ones less the unavailable ones and up-to-date ones are status.updatedReplicas.
func controlPlaneReplicas(c *clusterv1.Cluster, cp *unstructured.Unstructured) *clusterv1.ClusterReplicasStatus {
	out := &clusterv1.ClusterReplicasStatus{}
	if cp == nil {
		return out
	}
	if c.Status.ControlPlane != nil {
		out = counters(c.Status.ControlPlane)
	}
	get := func(p contract.Path) *int32 {
		if n, ok, err := contract.Int64(cp, p); err == nil && ok {
			v := int32(n)
			return &v
		}
		return nil
	}
	keep := func(dst **int32, v *int32) {
		if v != nil {
			*dst = v
		}
	}
	keep(&out.DesiredReplicas, get(contract.ControlPlaneReplicas))
	keep(&out.Replicas, get(contract.ControlPlaneStatusReplicas))
	keep(&out.ReadyReplicas, get(contract.ControlPlaneStatusReady))
	if _, v1beta2, _ := unstructured.NestedFieldNoCopy(cp.Object, contract.StatusInitialization...); v1beta2 {
		keep(&out.AvailableReplicas, get(contract.ControlPlaneStatusAvailable))
		keep(&out.UpToDateReplicas, get(contract.ControlPlaneStatusUpToDate))
	} else {
		if unavailable := get(contract.ControlPlaneStatusUnavailable); unavailable != nil && out.DesiredReplicas != nil {
			avail := max(*out.DesiredReplicas-*unavailable, 0)
			out.AvailableReplicas = &avail
		}
		keep(&out.UpToDateReplicas, get(contract.ControlPlaneStatusUpdated))
	}
	if raw, found, _ := unstructured.NestedSlice(cp.Object, "status", "versions"); found {
		out.Versions = statusVersions(raw)
	} else if _, present, _ := unstructured.NestedFieldNoCopy(cp.Object, "status", "versions"); !present {
		out.Versions = nil
	}
	return out
}

// statusVersions reads a list of {version, replicas}.
func statusVersions(raw []any) []clusterv1.StatusVersion {
	var out []clusterv1.StatusVersion
	for _, item := range raw {
		m, _ := item.(map[string]any)
		v, _ := m["version"].(string)
		sv := clusterv1.StatusVersion{Version: v}
		switch n := m["replicas"].(type) {
		case int64:
			sv.Replicas = int32(n)
		case float64:
			sv.Replicas = int32(n)
		}
		out = append(out, sv)
	}
	return out
}

// workersReplicas follows setWorkersReplicas: the sums over the MachinePools and MachineDeployments
// (desired from spec.replicas), nil where none reports a counter, and their versions aggregated.
func workersReplicas(mds, mps []unstructured.Unstructured) *clusterv1.ClusterReplicasStatus {
	out := &clusterv1.ClusterReplicasStatus{}
	var versions []clusterv1.StatusVersion
	add := func(dst **int32, v *int32) {
		if v != nil {
			sum := *v
			if *dst != nil {
				sum += **dst
			}
			*dst = &sum
		}
	}
	for _, pools := range [][]unstructured.Unstructured{mps, mds} {
		for i := range pools {
			p := poolCountersOf(&pools[i])
			add(&out.DesiredReplicas, p.desired)
			add(&out.Replicas, p.replicas)
			add(&out.ReadyReplicas, p.ready)
			add(&out.AvailableReplicas, p.available)
			add(&out.UpToDateReplicas, p.upToDate)
			versions = append(versions, p.versions...)
		}
	}
	out.Versions = aggregateVersions(versions)
	return out
}

type poolCounters struct {
	desired, replicas, ready, available, upToDate *int32
	versions                                      []clusterv1.StatusVersion
}

// poolCountersOf reads a MachineDeployment's or MachinePool's counters in the version it is
// served in: v1beta2 has them in status; v1beta1 has replicas in status and the others under
// status.v1beta2. A v1beta1 pool without status.v1beta2 (topoflow's own CRDs, whose pools the
// MachineDeployment and MachinePool controllers report in v1beta1 terms only) counts its v1beta1
// readyReplicas, availableReplicas and updatedReplicas instead: topoflow's reading, not Cluster API's.
func poolCountersOf(u *unstructured.Unstructured) poolCounters {
	get := func(p ...string) *int32 {
		if n, ok, err := contract.Int64(u, p); err == nil && ok {
			v := int32(n)
			return &v
		}
		return nil
	}
	out := poolCounters{desired: get("spec", "replicas"), replicas: get("status", "replicas")}
	_, hasV1Beta2, _ := unstructured.NestedFieldNoCopy(u.Object, "status", "v1beta2")
	switch {
	case strings.HasSuffix(u.GetAPIVersion(), "/v1beta2"):
		out.ready, out.available, out.upToDate = get("status", "readyReplicas"), get("status", "availableReplicas"), get("status", "upToDateReplicas")
	case hasV1Beta2:
		out.ready, out.available, out.upToDate = get("status", "v1beta2", "readyReplicas"), get("status", "v1beta2", "availableReplicas"),
			get("status", "v1beta2", "upToDateReplicas")
	default:
		out.ready, out.available, out.upToDate = get("status", "readyReplicas"), get("status", "availableReplicas"), get("status", "updatedReplicas")
	}
	// status.versions is the same field in both versions (v1beta1 has it since Cluster API v1.14).
	if raw, found, _ := unstructured.NestedSlice(u.Object, "status", "versions"); found {
		out.versions = statusVersions(raw)
	}
	return out
}

// aggregateVersions follows AggregateStatusVersions (internal/util/version): replicas summed by
// version, versions ordered lowest first (by semantic version; others after, by name).
func aggregateVersions(in []clusterv1.StatusVersion) []clusterv1.StatusVersion {
	var out []clusterv1.StatusVersion
	for _, v := range in {
		if v.Version == "" {
			continue
		}
		if i := slices.IndexFunc(out, func(o clusterv1.StatusVersion) bool { return o.Version == v.Version }); i >= 0 {
			out[i].Replicas += v.Replicas
			continue
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		vi, erri := semver.NewVersion(out[i].Version)
		vj, errj := semver.NewVersion(out[j].Version)
		switch {
		case erri == nil && errj == nil:
			if c := vi.Compare(vj); c != 0 {
				return c < 0
			}
			return out[i].Version < out[j].Version
		case erri == nil:
			return true
		case errj == nil:
			return false
		}
		return out[i].Version < out[j].Version
	})
	return out
}
