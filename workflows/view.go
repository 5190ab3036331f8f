package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
)

// What the "state" query shows beyond the step: the upgrade in progress and the latest hook
// calls. None of it steers the workflow; it is kept so that `starter status` and the query tell
// the same story as the history in the Temporal UI.

// maxHookRecords bounds the hook log a workflow keeps (and carries across continue-as-new).
const maxHookRecords = 30

// HookRecord is one lifecycle hook call as the workflow saw it.
type HookRecord struct {
	// At is the workflow time of the answer.
	At   time.Time `json:"at"`
	Hook string    `json:"hook"`
	// Version is the Kubernetes version the call was about (upgrade hooks only).
	Version string `json:"version,omitempty"`
	// Outcome is "passed", "passed (no handler registered)", "retry in 30s: <message>",
	// "failed (<handlers>): <message>" or "error: <error>".
	Outcome string `json:"outcome"`
}

func (h HookRecord) String() string {
	s := h.At.UTC().Format(time.RFC3339) + " " + h.Hook
	if h.Version != "" {
		s += "(" + h.Version + ")"
	}
	return s + ": " + h.Outcome
}

// UpgradeState is where an upgrade stands.
type UpgradeState struct {
	// Workflow is the ID of the ClusterUpgrade workflow that runs it.
	Workflow string `json:"workflow"`
	From     string `json:"from"`
	To       string `json:"to"`
	// Plan is the control plane's steps as planned when the upgrade began, and PlannedBy the
	// GenerateUpgradePlan handler that planned them ("" for kubernetesVersions or one step).
	Plan      []string `json:"plan,omitempty"`
	PlannedBy string   `json:"plannedBy,omitempty"`
	// ControlPlane is the version the control plane runs (all its machines); ControlPlaneTarget
	// the version it is given now.
	ControlPlane       string `json:"controlPlane,omitempty"`
	ControlPlaneTarget string `json:"controlPlaneTarget,omitempty"`
	// HeldBy names the hook that holds the next move, if any.
	HeldBy    string   `json:"heldBy,omitempty"`
	Upgrading []string `json:"upgrading,omitempty"`
	Pending   []string `json:"pending,omitempty"`
	Deferred  []string `json:"deferred,omitempty"`
	Held      []string `json:"held,omitempty"`
}

// PlanLine shows the plan with the step the control plane is at marked, e.g.
// "v1.31.2 -> [v1.32.4] -> v1.33.1".
func (u *UpgradeState) PlanLine() string {
	steps := append([]string{u.From}, u.Plan...)
	at := u.ControlPlane
	if at == "" {
		at = u.From
	}
	for i, s := range steps {
		if s == at {
			steps[i] = "[" + s + "]"
		}
	}
	return strings.Join(steps, " -> ")
}

// observe takes what the apply reported about the upgrade; nil means every part has the target
// (pools may still be rolling out, and the last hooks may be owed).
func (u *UpgradeState) observe(s *activities.UpgradeSummary) {
	if s == nil {
		*u = UpgradeState{Workflow: u.Workflow, From: u.From, To: u.To, Plan: u.Plan, PlannedBy: u.PlannedBy, ControlPlane: u.To, ControlPlaneTarget: u.To}
		return
	}
	u.ControlPlane, u.ControlPlaneTarget, u.HeldBy = s.Reached, s.ControlPlane, s.HeldBy
	u.Upgrading, u.Pending, u.Deferred, u.Held = s.Upgrading, s.Pending, s.Deferred, s.Held
}

// recordHook adds a hook call to the log, keeping the newest maxHookRecords.
func (r *clusterRun) recordHook(ctx workflow.Context, call activities.HookCall, out *activities.HookOutcome, err error) {
	rec := HookRecord{At: workflow.Now(ctx), Hook: call.Hook, Version: hookVersion(call)}
	switch {
	case err != nil:
		rec.Outcome = "error: " + err.Error()
	case out.ClusterGone:
		rec.Outcome = "Cluster gone"
	case len(out.Failed) > 0:
		rec.Outcome = fmt.Sprintf("failed (%s): %s", strings.Join(out.Failed, ", "), out.Message)
	case out.RetryAfterSeconds > 0:
		rec.Outcome = fmt.Sprintf("retry in %ds", out.RetryAfterSeconds)
		if out.Message != "" {
			rec.Outcome += ": " + out.Message
		}
	case len(out.Calls) == 0:
		rec.Outcome = "passed (no handler registered)"
	default:
		rec.Outcome = "passed"
	}
	r.state.Hooks = appendHooks(r.state.Hooks, rec)
}

func appendHooks(log []HookRecord, recs ...HookRecord) []HookRecord {
	log = append(log, recs...)
	if n := len(log) - maxHookRecords; n > 0 {
		log = append([]HookRecord(nil), log[n:]...)
	}
	return log
}

// hookVersion is the version an upgrade hook call is about.
func hookVersion(c activities.HookCall) string {
	if c.ToKubernetesVersion != "" {
		return c.ToKubernetesVersion
	}
	return c.KubernetesVersion
}
