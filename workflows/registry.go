package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/topoflow/topoflow/activities"
)

// ReconcileObjectWorkflowType keeps the status of registry objects (ExtensionConfigs,
// ClusterClasses) current: started from watch events, it runs one activity until it succeeds.
const ReconcileObjectWorkflowType = "ReconcileObject"

// ObjectWorkflowID is the readable ID of an object's reconcile workflow.
func ObjectWorkflowID(ref activities.ObjectRef) string {
	switch ref.Kind {
	case "ExtensionConfig":
		return "extensionconfig/" + ref.Name
	case RolloutPlanKind:
		return "rolloutplan/" + ref.Namespace + "/" + ref.Name
	case ClassRevisionsKind:
		return "clusterclassrevisions/" + ref.Namespace + "/" + ref.Name
	default:
		return "clusterclass/" + ref.Namespace + "/" + ref.Name
	}
}

// ClassRevisionsKind is the ObjectRef kind that records the revisions of a ClusterClass (named by
// the ref) that opted in to them.
const ClassRevisionsKind = "ClusterClassRevisions"

// RolloutPlanKind is the ObjectRef kind that writes the fleet plan into the status of the Rollout
// it names, while it waits for the approval before its first stage.
const RolloutPlanKind = "RolloutPlan"

// ReconcileObject runs discovery for an ExtensionConfig, writes a ClusterClass's status, records a
// ClusterClass's revisions, or writes a Rollout's fleet plan. An unreachable extension or API
// server only delays it: the activity retries without limit. The kind is the input's, so a new
// kind leaves the histories of the others as they replay.
func ReconcileObject(ctx workflow.Context, ref activities.ObjectRef) error {
	summary := "discover the handlers of ExtensionConfig " + ref.Name
	var fn any = acts.DiscoverExtension
	switch ref.Kind {
	case "ClusterClass":
		summary, fn = fmt.Sprintf("write the status of ClusterClass %s/%s", ref.Namespace, ref.Name), acts.ReconcileClusterClassStatus
	case RolloutPlanKind:
		return ownActivity(ctx, 5*time.Minute, fmt.Sprintf("plan Rollout %s/%s for its first approval", ref.Namespace, ref.Name),
			acts.WriteRolloutPlanStatus, activities.RolloutRef{Namespace: ref.Namespace, Name: ref.Name}).Get(ctx, nil)
	case ClassRevisionsKind:
		summary, fn = fmt.Sprintf("record the revisions of ClusterClass %s/%s", ref.Namespace, ref.Name), acts.RecordClassRevisions
	}
	return ownActivity(ctx, time.Minute, summary, fn, ref).Get(ctx, nil)
}
