// Package workflows holds topoflow's durable lifecycle: one long-running workflow per managed
// Cluster, started and signalled from watch events. Workflow code is deterministic: all I/O is in
// activities, all waiting is on signals and Temporal timers.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
	corev1 "k8s.io/api/core/v1"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/model/upgrade"
)

// Names shared with the starter (which signals) and the worker (which registers).
const (
	ClusterWorkflowType = "ClusterTopology"
	SignalClusterEvent  = "cluster-event"
	QueryState          = "state"
	DefaultTaskQueue    = "topoflow"
)

// WorkflowID is the stable ID of a Cluster's workflow.
func WorkflowID(namespace, name string) string { return "topology/" + namespace + "/" + name }

// Search attributes kept current on every Cluster workflow (registered by the stack and the worker).
var (
	SAClusterNamespace = temporal.NewSearchAttributeKeyKeyword("TopoflowClusterNamespace")
	SAClusterName      = temporal.NewSearchAttributeKeyKeyword("TopoflowClusterName")
	SAClass            = temporal.NewSearchAttributeKeyKeyword("TopoflowClass")
	SATargetVersion    = temporal.NewSearchAttributeKeyKeyword("TopoflowTargetVersion")
	SAPhase            = temporal.NewSearchAttributeKeyKeyword("TopoflowPhase")
)

// ClusterStart is what a Cluster's workflow starts with wherever it is started (by the starter,
// or by an upgrade that outlived it; see restartCluster): its summary and details in the UI, and
// the search attributes naming its Cluster.
func ClusterStart(ref activities.ClusterRef) (summary, details string, attrs temporal.SearchAttributes) {
	return "Cluster " + ref.String(),
		"Lifecycle of the managed Cluster **" + ref.String() + "**: create, day-2 changes, upgrades and delete.",
		temporal.NewSearchAttributes(SAClusterNamespace.ValueSet(ref.Namespace), SAClusterName.ValueSet(ref.Name))
}

// SearchAttributeNames lists the names above, for registration.
var SearchAttributeNames = []string{"TopoflowClusterNamespace", "TopoflowClusterName", "TopoflowClass", "TopoflowTargetVersion", "TopoflowPhase"}

// ClusterEvent tells the workflow something about its Cluster changed. The workflow is
// level-based: it re-reads the API server, so the event only says where the change was seen.
type ClusterEvent struct {
	// Source is "Cluster", "ClusterClass name", "Kind name" of an owned object, or "resync".
	Source string `json:"source"`
	// Seen are the objects the coalesced watch events were about, with the resourceVersions
	// they showed: the next pass reads them no older (the worker's cache may lag the starter's).
	Seen []corev1.ObjectReference `json:"seen,omitempty"`
}

// Timing holds the workflow's waits. Zero values take the defaults.
type Timing struct {
	// Resync is the safety-net re-check of a settled Cluster.
	Resync time.Duration `json:"resync,omitempty"`
	// WaitResync re-checks while waiting on providers or on a missing object, in case an event
	// was missed.
	WaitResync time.Duration `json:"waitResync,omitempty"`
	// PassesBeforeContinueAsNew bounds the history of one run.
	PassesBeforeContinueAsNew int `json:"passesBeforeContinueAsNew,omitempty"`
}

func (t Timing) withDefaults() Timing {
	if t.Resync == 0 {
		t.Resync = 10 * time.Minute
	}
	if t.WaitResync == 0 {
		t.WaitResync = time.Minute
	}
	if t.PassesBeforeContinueAsNew == 0 {
		t.PassesBeforeContinueAsNew = 200
	}
	return t
}

// ClusterInput starts (or continues) a Cluster's workflow.
type ClusterInput struct {
	Cluster activities.ClusterRef `json:"cluster"`
	Timing  Timing                `json:"timing,omitempty"`
	// Ledger is what the lifecycle hooks answered: the workflow cannot read it back from the API
	// server, so it is carried across continue-as-new.
	Ledger upgrade.Ledger `json:"ledger,omitempty"`
	// Hooks is the hook log shown by the state query, carried across continue-as-new.
	Hooks []HookRecord `json:"hooks,omitempty"`
	// Upgrade is an upgrade workflow still running when the previous run continued as new: this
	// run waits for it before anything else.
	Upgrade *UpgradeState `json:"upgrade,omitempty"`
}

// State is what the "state" query returns: where the Cluster's lifecycle stands.
type State struct {
	Cluster   string `json:"cluster"`
	Class     string `json:"class,omitempty"`
	Version   string `json:"version,omitempty"`
	Phase     string `json:"phase,omitempty"`
	Step      string `json:"step"`
	Waiting   string `json:"waiting,omitempty"`
	LastError string `json:"lastError,omitempty"`
	Passes    int    `json:"passes"`
	// Upgrade is the upgrade in progress, if any: in a Cluster's workflow only its ID, from and to
	// (query that workflow for the rest).
	Upgrade *UpgradeState `json:"upgrade,omitempty"`
	// LastUpgrade is how the latest upgrade ended: "from -> to: completed", "...: withdrawn: ...".
	LastUpgrade string `json:"lastUpgrade,omitempty"`
	// Hooks are the latest lifecycle hook calls, oldest first.
	Hooks []HookRecord `json:"hooks,omitempty"`
	// Ledger is what the lifecycle hooks answered (an online plan shows what it holds).
	Ledger *upgrade.Ledger `json:"ledger,omitempty"`
}

// passOutcome says what to do after one reconcile pass.
type passOutcome int

const (
	settled  passOutcome = iota // everything applied; re-check at Resync
	waiting                     // waiting on a provider or a missing object; re-check at WaitResync
	finished                    // the Cluster is gone or no longer managed; end the workflow
	again                       // something moved on (a hook passed); pass again at once
	handOver                    // an upgrade runs on; continue as new and wait for it there
)

// ClusterTopology is the entity workflow of one managed Cluster. Each pass re-reads the Cluster
// and its class and moves the topology one step further (see pass); then it waits for the next
// event (or a resync) and passes again, so day-2 edits (replicas, labels, pools) are applied by the
// same steps. An upgrade runs as a child workflow (ClusterUpgrade), which this one waits for.
func ClusterTopology(ctx workflow.Context, in ClusterInput) error {
	r := newRun(ctx, in.Cluster, in.Timing, in.Ledger)
	r.state = State{Cluster: in.Cluster.String(), Step: "starting", Hooks: in.Hooks, Ledger: &r.ledger}
	if err := workflow.SetQueryHandlerWithOptions(ctx, QueryState, func() (State, error) { return r.state, nil },
		workflow.QueryHandlerOptions{Description: "Where the Cluster's lifecycle stands: phase, step, what it waits for and the hook ledger"}); err != nil {
		return err
	}
	// The starter set the Cluster's namespace and name search attributes at the start; the first
	// status write adds the class, version and phase.
	adopt := in.Upgrade
	for ; ; adopt = nil {
		r.drain()
		var outcome passOutcome
		if adopt != nil {
			r.state.Upgrade = adopt
			r.setStep(ctx, "upgrade "+adopt.From+" -> "+adopt.To, "the upgrade workflow "+adopt.Workflow)
			outcome = r.awaitUpgrade(ctx, nil)
		} else {
			outcome = r.pass(ctx)
		}
		r.state.Passes++
		switch outcome {
		case finished:
			r.setStep(ctx, "finished", "")
			return nil
		case handOver:
			// The ledger is the upgrade's to return; the pending-hooks annotation is its to write.
			next := in
			next.Ledger, next.Hooks, next.Upgrade = r.ledger, r.state.Hooks, r.state.Upgrade
			return workflow.NewContinueAsNewError(ctx, ClusterTopology, next)
		}
		r.syncPendingHooks(ctx)
		r.waitAfter(ctx, outcome, r.timing.Resync)
		if r.state.Passes >= r.timing.PassesBeforeContinueAsNew || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			r.drain()
			next := in
			next.Ledger, next.Hooks, next.Upgrade = r.ledger, r.state.Hooks, nil
			return workflow.NewContinueAsNewError(ctx, ClusterTopology, next)
		}
	}
}
