package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/upgrade"
)

// A fleet plan says, for many Clusters at once, what one change would do to each (a Rollout's
// change, an edited ClusterClass): which objects are created, updated, rotated and deleted, which
// machines roll, which lifecycle hooks are called, or that admission refuses it. Each Cluster's
// plan is Through's, on the Cluster as the change leaves it, so it is the apply's own decision.
// Everything here is pure: the reads are the caller's (activities.FleetPlanReader), so an activity
// can make the same plan.

// Outcome is what a change does to one Cluster. Each Cluster has exactly one.
type Outcome string

// Outcomes.
const (
	// OutcomeRefused: admission refuses the change (the API server's dry run, or the webhook's rules the
	// plan applies itself): nothing is written.
	OutcomeRefused Outcome = "refused"
	// OutcomeFailed: the plan could not be made (a read failed, a template is missing, the upgrade has no
	// plan); Reason says why.
	OutcomeFailed Outcome = "failed"
	// OutcomeUnchanged: nothing is written: the change already holds on the Cluster (or does not touch
	// it) and no topology object is created, updated, rotated or deleted.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeChanged: something is written; RollsControlPlane and RollsWorkers say whether machines roll.
	OutcomeChanged Outcome = "changed"
)

// ClusterPlan is what a change does to one Cluster.
type ClusterPlan struct {
	// Cluster is "namespace/name"; Stage the rollout stage that takes it (none for a class plan).
	Cluster string  `json:"cluster"`
	Stage   string  `json:"stage,omitempty"`
	Outcome Outcome `json:"outcome"`
	// Reason is why a change is refused or the plan failed.
	Reason string `json:"reason,omitempty"`
	// WritesCluster: the change itself is written to the Cluster's spec.topology (a rollout's
	// change that does not hold yet).
	WritesCluster bool `json:"writesCluster,omitempty"`
	// RollsControlPlane: the control plane's machines are replaced; ControlPlane says why.
	RollsControlPlane bool   `json:"rollsControlPlane,omitempty"`
	ControlPlane      string `json:"controlPlane,omitempty"`
	// RollsWorkers are the pools whose machines are replaced, in topology order.
	RollsWorkers []PoolRoll `json:"rollsWorkers,omitempty"`
	// Changes are the objects written or deleted (create, update, rotate, delete) and the pools
	// that keep waiting (pending: deferred or held), without diffs; unchanged objects are left out.
	Changes []Change `json:"changes,omitempty"`
	// Hooks are the lifecycle hooks owed on the way, in order (none without a version change).
	Hooks []Hook `json:"hooks,omitempty"`
	// Stays names the pools that keep their version (defer-upgrade, hold-upgrade-sequence): the
	// upgrade does not complete, and a rollout never sees the Cluster done.
	Stays []string `json:"stays,omitempty"`
}

// PoolRoll is a pool whose machines roll, and why.
type PoolRoll struct {
	Kind string `json:"kind"`
	// Pool is the topology name, Name the object's.
	Pool string `json:"pool"`
	Name string `json:"name"`
	Why  string `json:"why"`
}

// Hook is a lifecycle hook owed on the way: Called when an extension handles it (a request is
// sent), else it passes without a call.
type Hook struct {
	upgrade.Due
	Called bool `json:"called"`
}

func (h Hook) String() string {
	s := h.Hook
	switch {
	case h.From != "" && h.To != "":
		s += " " + h.From + "->" + h.To
	case h.To != "":
		s += " ->" + h.To
	case h.Version != "":
		s += " " + h.Version
	}
	return s
}

// ClusterInput is one Cluster of a fleet plan as the reader found it.
type ClusterInput struct {
	Cluster, Stage string
	// Refused is admission's answer to the change (the API server's dry run); Err a read that
	// failed. Either one ends the Cluster's plan there.
	Refused, Err string
	// WritesCluster: the change is written to the Cluster (it does not hold yet).
	WritesCluster bool
	// Plan is the Cluster's plan input with the Cluster (and its class) as the change leaves them.
	Plan *Input
	// Unhandled are the hooks no extension handles for the Cluster's namespace (no call is made).
	Unhandled []string
}

// Categorize plans one Cluster of a fleet plan (Through) and says what the change does to it.
func Categorize(in ClusterInput) ClusterPlan {
	out := ClusterPlan{Cluster: in.Cluster, Stage: in.Stage, WritesCluster: in.WritesCluster}
	switch {
	case in.Refused != "":
		out.Outcome, out.Reason, out.WritesCluster = OutcomeRefused, in.Refused, false
		return out
	case in.Err != "":
		out.Outcome, out.Reason = OutcomeFailed, in.Err
		return out
	case in.Plan == nil:
		out.Outcome, out.Reason = OutcomeFailed, "nothing to plan from"
		return out
	}
	res, err := Through(in.Plan)
	if err != nil {
		var ie *desired.InvalidError
		if errors.As(err, &ie) {
			out.Outcome, out.Reason, out.WritesCluster = OutcomeRefused, err.Error(), false
		} else {
			out.Outcome, out.Reason = OutcomeFailed, err.Error()
		}
		return out
	}
	return categorize(out, in, res)
}

func categorize(out ClusterPlan, in ClusterInput, res *Result) ClusterPlan {
	writes := in.WritesCluster
	for _, c := range res.Changes {
		switch c.Action {
		case Unchanged:
			continue
		case Create, Update, Rotate, Delete:
			writes = true
		}
		c.Diff = ""
		out.Changes = append(out.Changes, c)
	}
	if res.Course != nil {
		for _, d := range res.Course.Hooks {
			out.Hooks = append(out.Hooks, Hook{Due: d, Called: !slices.Contains(in.Unhandled, d.Hook)})
		}
		out.Stays = append(append(out.Stays, res.Course.Deferred...), res.Course.Held...)
	}
	if dec := res.decision; dec != nil {
		cur := in.Plan.Desired.Current
		out.ControlPlane = controlPlaneRoll(cur.ControlPlane, dec.State)
		out.RollsControlPlane = out.ControlPlane != ""
		out.RollsWorkers = workerRolls(cur, dec.State)
	}
	out.Outcome = OutcomeUnchanged
	if writes {
		out.Outcome = OutcomeChanged
	}
	return out
}

// controlPlaneRoll says why the control plane's machines roll ("" when they do not): the control
// plane is written with another spec.version, another machine template
// (spec.machineTemplate.infrastructureRef: a rotated template) or another spec.rollout.after.
// Other changes are updates in place as far as topoflow knows (a provider may roll its machines for
// more, KubeadmControlPlane for a kubeadmConfigSpec change, say).
func controlPlaneRoll(cur *unstructured.Unstructured, state *desired.State) string {
	want := state.ControlPlane
	if cur == nil || want == nil || state.ControlPlanePending {
		return ""
	}
	var why []string
	if from, to := str(cur, contract.ControlPlaneVersion), str(want, contract.ControlPlaneVersion); to != "" && from != to {
		why = append(why, "version "+from+" -> "+to)
	}
	if from, to := machineTemplateName(cur), machineTemplateName(want); to != "" && from != to {
		why = append(why, "machine template "+from+" -> "+to)
	}
	if from, to := str(cur, contract.ControlPlaneRolloutAfter), str(want, contract.ControlPlaneRolloutAfter); to != "" && from != to {
		why = append(why, "rollout.after "+to)
	}
	return strings.Join(why, ", ")
}

// workerRolls are the pools whose machines roll: a MachineDeployment written with another
// spec.template.spec.version, infrastructure template or bootstrap config template (a rotated
// template), failureDomain or spec.rolloutAfter (the fields of its machine template that Cluster
// API's MachineDeployment controller does not update in place); a MachinePool written with
// another version, infrastructure pool or bootstrap config. New pools do not roll (they are
// created), pools that wait are not written.
func workerRolls(cur desired.Current, state *desired.State) []PoolRoll {
	var out []PoolRoll
	for _, md := range state.MachineDeployments {
		old := cur.MachineDeployments[md.TopologyName]
		if old == nil || md.Pending || md.PendingCreate {
			continue
		}
		a, b := old.Spec.Template.Spec, md.Object.Spec.Template.Spec
		why := machineSpecChanges(a, b)
		if t := md.Object.Spec.Rollout.After; !t.IsZero() && (old.Spec.Rollout.After.IsZero() || !t.Equal(&old.Spec.Rollout.After)) {
			why = append(why, "rolloutAfter "+t.UTC().Format("2006-01-02T15:04:05Z"))
		}
		if a.FailureDomain != b.FailureDomain && b.FailureDomain != "" {
			why = append(why, "failureDomain "+orNone(a.FailureDomain)+" -> "+b.FailureDomain)
		}
		if len(why) > 0 {
			out = append(out, PoolRoll{Kind: "MachineDeployment", Pool: md.TopologyName, Name: md.Object.Name, Why: strings.Join(why, ", ")})
		}
	}
	for _, mp := range state.MachinePools {
		old := cur.MachinePools[mp.TopologyName]
		if old == nil || mp.Pending || mp.PendingCreate {
			continue
		}
		if why := machineSpecChanges(old.Spec.Template.Spec, mp.Object.Spec.Template.Spec); len(why) > 0 {
			out = append(out, PoolRoll{Kind: "MachinePool", Pool: mp.TopologyName, Name: mp.Object.Name, Why: strings.Join(why, ", ")})
		}
	}
	return out
}

// machineSpecChanges names what differs between two machine specs that replaces machines: the
// version and the references to the infrastructure and bootstrap templates (by kind and name: a
// new apiVersion of the same template is not a roll).
func machineSpecChanges(a, b clusterv1.MachineSpec) []string {
	var why []string
	if a.Version != b.Version {
		why = append(why, "version "+orNone(a.Version)+" -> "+b.Version)
	}
	if refChanged(a.InfrastructureRef, b.InfrastructureRef) {
		why = append(why, "infrastructure "+a.InfrastructureRef.Name+" -> "+b.InfrastructureRef.Name)
	}
	if refChanged(a.Bootstrap.ConfigRef, b.Bootstrap.ConfigRef) {
		why = append(why, "bootstrap "+refOrNone(a.Bootstrap.ConfigRef)+" -> "+refOrNone(b.Bootstrap.ConfigRef))
	}
	return why
}

func refChanged(a, b clusterv1.ContractVersionedObjectReference) bool {
	if b.Name == "" {
		return false
	}
	return !a.IsDefined() || a.Kind != b.Kind || a.Name != b.Name
}

func refOrNone(r clusterv1.ContractVersionedObjectReference) string {
	if !r.IsDefined() {
		return "none"
	}
	return r.Name
}

func str(u *unstructured.Unstructured, p contract.Path) string {
	s, _, _ := contract.String(u, p)
	return s
}

// machineTemplateName is the name of the control plane's machine template, by either contract.
func machineTemplateName(cp *unstructured.Unstructured) string {
	ref, err := contract.ControlPlaneMachineInfrastructureRef(cp)
	if err != nil || ref == nil {
		return ""
	}
	return ref.Name
}

// orNone is a value, "none" when empty (unset).
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Summary counts a fleet plan's Clusters. Every Cluster is exactly one of Refused, Failed,
// Unchanged and Changed (Outcome); of the Changed, RollWorkers and RollControlPlane count those whose
// machines roll (a Cluster can be in both), InPlace those where none does.
// CategorizeAll plans every Cluster of a fleet plan, in order.
func CategorizeAll(cs []ClusterInput) []ClusterPlan {
	out := make([]ClusterPlan, 0, len(cs))
	for _, c := range cs {
		out = append(out, Categorize(c))
	}
	return out
}

type Summary struct {
	Clusters         int `json:"clusters"`
	RollWorkers      int `json:"rollWorkers"`
	RollControlPlane int `json:"rollControlPlane"`
	InPlace          int `json:"inPlace"`
	Unchanged        int `json:"unchanged"`
	Refused          int `json:"refused"`
	Failed           int `json:"failed"`
}

// Summarize counts the plans.
func Summarize(plans []ClusterPlan) Summary {
	s := Summary{Clusters: len(plans)}
	for _, p := range plans {
		switch p.Outcome {
		case OutcomeRefused:
			s.Refused++
		case OutcomeFailed:
			s.Failed++
		case OutcomeUnchanged:
			s.Unchanged++
		case OutcomeChanged:
			if len(p.RollsWorkers) > 0 {
				s.RollWorkers++
			}
			if p.RollsControlPlane {
				s.RollControlPlane++
			}
			if len(p.RollsWorkers) == 0 && !p.RollsControlPlane {
				s.InPlace++
			}
		}
	}
	return s
}

// String is the summary line, "12 Clusters: 9 roll their workers, 2 roll their control plane, 0
// change in place only, 3 unchanged, 0 refused" (and ", N failed to plan" when some did).
func (s Summary) String() string {
	noun := "Clusters"
	if s.Clusters == 1 {
		noun = "Cluster"
	}
	line := fmt.Sprintf("%d %s: %d roll their workers, %d roll their control plane, %d change in place only, %d unchanged, %d refused",
		s.Clusters, noun, s.RollWorkers, s.RollControlPlane, s.InPlace, s.Unchanged, s.Refused)
	if s.Failed > 0 {
		line += fmt.Sprintf(", %d failed to plan", s.Failed)
	}
	return line
}
