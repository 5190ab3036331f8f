package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RolloutSpec says which Clusters move, to what, and in which stages.
type RolloutSpec struct {
	// Clusters selects the Clusters to change. The selection is frozen when the rollout starts,
	// ordered by namespace and name; Clusters that match later are reported, not added.
	Clusters ClusterSelection `json:"clusters"`
	// Change is what the rollout writes to each selected Cluster's spec.topology.
	Change Change `json:"change"`
	// StrategyRef names a RolloutStrategy of the Rollout's namespace that gives the stages,
	// failure budget and maintenance windows; the Rollout then sets none of them. The strategy is
	// read when the rollout starts: a later edit of it moves only Rollouts started after.
	// +optional
	StrategyRef *StrategyReference `json:"strategyRef,omitempty"`
	// Stages run in order; each takes its Clusters from those no earlier stage took. Required
	// unless strategyRef is set.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Stages []Stage `json:"stages,omitempty"`
	// FailureBudget is how many Clusters may fail before the rollout halts (0, the default: the
	// first failure halts it). A Cluster fails when admission refuses its change, when it is not
	// done within its stage's progress deadline, or when another field manager changes what the
	// rollout wrote before it is done.
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailureBudget int32 `json:"failureBudget,omitempty"`
	// MaintenanceWindows are the weekly windows in which a Cluster's change may start, for
	// example "Sat,Sun 02:00-06:00 Europe/Berlin" or "Mon-Fri 22:00-04:00 UTC" (a window that
	// ends before it starts runs past midnight). A Cluster's annotation
	// topoflow.dev/maintenance-windows (the same syntax, ";"-separated) overrides them for that
	// Cluster. Empty: any time. A change already running always finishes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	MaintenanceWindows []string `json:"maintenanceWindows,omitempty"`
}

// StrategyReference names a RolloutStrategy in the Rollout's namespace.
type StrategyReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// RolloutStrategySpec is how Clusters move, shared by the Rollouts that name it: the fields a
// Rollout would otherwise carry itself, with the same meaning.
type RolloutStrategySpec struct {
	// Stages run in order; each takes its Clusters from those no earlier stage took.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	Stages []Stage `json:"stages"`
	// FailureBudget is how many Clusters may fail before a rollout halts (see the Rollout's).
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailureBudget int32 `json:"failureBudget,omitempty"`
	// MaintenanceWindows are the weekly windows in which a Cluster's change may start (see the
	// Rollout's).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	MaintenanceWindows []string `json:"maintenanceWindows,omitempty"`
}

// RolloutStrategy is a reusable rollout shape (stages, failure budget, maintenance windows) that
// Rollouts of its namespace name in spec.strategyRef.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rolloutstrategies,scope=Namespaced,categories=topoflow
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type RolloutStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutStrategySpec `json:"spec"`
}

// RolloutStrategyList is a list of RolloutStrategies.
// +kubebuilder:object:root=true
type RolloutStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutStrategy `json:"items"`
}

// ClusterSelection picks Clusters by label, in one or more namespaces.
type ClusterSelection struct {
	// Selector matches the Clusters' labels; an empty selector matches every Cluster.
	Selector metav1.LabelSelector `json:"selector"`
	// Namespaces to select from; empty means the Rollout's own namespace.
	// +optional
	// +listType=set
	Namespaces []string `json:"namespaces,omitempty"`
}

// Change is what a rollout writes to each Cluster, with server-side apply under the field
// manager topoflow-rollout. At least one field is set.
type Change struct {
	// Version is the Kubernetes version to move to (spec.topology.version).
	// +optional
	Version string `json:"version,omitempty"`
	// Class is the ClusterClass to rebase onto (spec.topology.class), in the Cluster's class
	// namespace.
	// +optional
	Class string `json:"class,omitempty"`
	// ClassRevision moves each Cluster to a revision of its ClusterClass (a class that opted in
	// with the annotation topoflow.dev/class-revisions: "enabled"): "latest" for the class's
	// newest revision when the rollout starts (later revisions do not move later stages), or a
	// revision number (an older one rolls back). The rollout writes the Cluster's annotation
	// topoflow.dev/class-revision; every selected Cluster must be of one such class. It cannot be
	// combined with class.
	// +optional
	// +kubebuilder:validation:Pattern=`^(latest|[1-9][0-9]*)$`
	ClassRevision string `json:"classRevision,omitempty"`
	// Topology holds further spec.topology fields in the v1beta1 shape, applied with server-side
	// apply: lists keyed by name (variables, machineDeployments) merge entry by entry, so
	// {"variables":[{"name":"imageRepository","value":"registry.example"}]} sets one variable.
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	Topology *apiextensionsv1.JSON `json:"topology,omitempty"`
}

// Stage is one step of a rollout: a set of Clusters changed with a concurrency limit, soaks and
// optional approvals.
type Stage struct {
	// Name names the stage in status, approvals and the Temporal history.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// Selector takes the remaining Clusters whose labels match. At most one of selector, count
	// and percent is set; none takes every remaining Cluster.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// Count takes the next Count remaining Clusters (in the selection's order).
	// +optional
	// +kubebuilder:validation:Minimum=1
	Count *int32 `json:"count,omitempty"`
	// Percent takes that share of the remaining Clusters, rounded up.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Percent *int32 `json:"percent,omitempty"`
	// MaxConcurrent is how many of the stage's Clusters change at once (default 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxConcurrent int32 `json:"maxConcurrent,omitempty"`
	// SoakAfterCluster is how long a Cluster must stay done (settled at the change) before it
	// counts as done.
	// +optional
	SoakAfterCluster metav1.Duration `json:"soakAfterCluster,omitempty"`
	// SoakAfterStage is how long the rollout waits after the stage's last Cluster is done.
	// +optional
	SoakAfterStage metav1.Duration `json:"soakAfterStage,omitempty"`
	// ProgressDeadline is how long a Cluster may take from its write to done before it fails
	// (default 30m). Waiting for a window or an approval never counts.
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`
	// ApproveBefore holds the stage until it is approved ("<stage>@gen-<generation>").
	// +optional
	ApproveBefore bool `json:"approveBefore,omitempty"`
	// ApproveAfter holds the next stage until this one's result is approved
	// ("<stage>/after@gen-<generation>").
	// +optional
	ApproveAfter bool `json:"approveAfter,omitempty"`
}

// RolloutStatus is what the rollout's workflow reports.
type RolloutStatus struct {
	// ObservedGeneration is the generation the running rollout follows: a later edit of the spec
	// is reported (condition SpecChanged), not followed.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase is Pending, Progressing, WaitingForApproval, Paused, Halted, Completed or Aborted.
	// +optional
	Phase string `json:"phase,omitempty"`
	// Stage is the stage running now (empty before the first and after the last).
	// +optional
	Stage string `json:"stage,omitempty"`
	// PendingApproval is what an approval must name to open the gate the rollout waits at.
	// +optional
	PendingApproval string `json:"pendingApproval,omitempty"`
	// ClassRevision is the revision number a classRevision change moves the Clusters to, fixed
	// when the rollout started ("latest" is the class's newest revision then).
	// +optional
	ClassRevision string `json:"classRevision,omitempty"`
	// Counts of the selected Clusters by state.
	// +optional
	Counts Counts `json:"counts,omitempty"`
	// Clusters is every selected Cluster with its stage and state, in the selection's order.
	// +optional
	// +listType=atomic
	Clusters []ClusterStatus `json:"clusters,omitempty"`
	// Stages are the stages begun so far, in order: when each started running (after its
	// approval before) and when it was through (every Cluster done, failed or skipped, and its
	// soak over).
	// +optional
	// +listType=atomic
	Stages []StageStatus `json:"stages,omitempty"`
	// LateMatches are Clusters the selection matches now that it did not match when the rollout
	// started: reported, not added (a new Rollout moves them). At most 50 are named here;
	// counts.lateMatches counts them all.
	// +optional
	// +listType=atomic
	LateMatches []string `json:"lateMatches,omitempty"`
	// Plan is what the change would do to each selected Cluster, summed up: computed while the
	// rollout waits for the approval before its first stage (what that approval lets happen), by
	// the code `starter rollout plan` runs. It stays after the approval, naming the one it was for.
	// +optional
	Plan *PlanStatus `json:"plan,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PlanStatus is a Rollout's fleet plan, summed up (the full plan: starter rollout plan).
type PlanStatus struct {
	// Approval is the approval the plan was made for ("<stage>@gen-<generation>").
	Approval string `json:"approval"`
	// PlannedAt is when the Clusters were read for it.
	PlannedAt metav1.Time `json:"plannedAt"`
	// Summary is the plan's line: "N Clusters: a roll their workers, b roll their control plane,
	// c change in place only, d unchanged, e refused".
	Summary string `json:"summary"`
	// Counts of the Clusters by what the change does to them (a Cluster that rolls both its
	// control plane and its workers counts in both).
	Clusters         int32 `json:"clusters"`
	RollWorkers      int32 `json:"rollWorkers"`
	RollControlPlane int32 `json:"rollControlPlane"`
	InPlace          int32 `json:"inPlace"`
	Unchanged        int32 `json:"unchanged"`
	Refused          int32 `json:"refused"`
	// +optional
	Failed int32 `json:"failed,omitempty"`
	// Refusals are the first refused (or unplannable) Clusters, "namespace/name: why" (at most 10).
	// +optional
	// +listType=atomic
	Refusals []string `json:"refusals,omitempty"`
}

// StageStatus is when a stage ran.
type StageStatus struct {
	Name string `json:"name"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// Counts are the selected Clusters by state.
type Counts struct {
	Total   int32 `json:"total"`
	Pending int32 `json:"pending"`
	// Changing: written (or found to hold the change already) and not yet done, or soaking.
	Changing int32 `json:"changing"`
	// Waiting: their turn has come, and they wait for their maintenance window to open.
	// +optional
	Waiting int32 `json:"waiting"`
	Done    int32 `json:"done"`
	Failed  int32 `json:"failed"`
	Skipped int32 `json:"skipped"`
	// LateMatches counts the Clusters that match the selection now and did not at the start.
	// +optional
	LateMatches int32 `json:"lateMatches,omitempty"`
}

// ClusterStatus is one selected Cluster's place in the rollout.
type ClusterStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Stage     string `json:"stage"`
	// State is Pending, WaitingForWindow, Progressing, Soaking, Done, Failed or Skipped.
	State string `json:"state"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}

// Rollout moves the Clusters it selects to a new version, class or topology values, in stages.
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rollouts,scope=Namespaced,categories=topoflow
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
// +kubebuilder:printcolumn:name="Stage",type="string",JSONPath=".status.stage"
// +kubebuilder:printcolumn:name="Done",type="integer",JSONPath=".status.counts.done"
// +kubebuilder:printcolumn:name="Total",type="integer",JSONPath=".status.counts.total"
// +kubebuilder:printcolumn:name="Waiting",type="integer",JSONPath=".status.counts.waiting",description="Clusters whose turn has come, waiting for their maintenance window"
// +kubebuilder:printcolumn:name="Approval",type="string",JSONPath=".status.pendingApproval"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RolloutSpec   `json:"spec"`
	Status RolloutStatus `json:"status,omitempty"`
}

// RolloutList is a list of Rollouts.
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}
