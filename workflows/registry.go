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
	case "RolloutPlan":
		return "rolloutplan/" + ref.Namespace + "/" + ref.Name
	default:
		return "clusterclass/" + ref.Namespace + "/" + ref.Name
	}
}

// ReconcileObject runs discovery for an ExtensionConfig, writes a ClusterClass's status, or writes
// the fleet plan into the status of a Rollout waiting for its first approval.
// An unreachable extension or API server only delays it: the activity retries without limit.
func ReconcileObject(ctx workflow.Context, ref activities.ObjectRef) error {
	summary := "discover the handlers of ExtensionConfig " + ref.Name
	var fn any = acts.DiscoverExtension
	switch ref.Kind {
	case "ClusterClass":
		summary, fn = fmt.Sprintf("write the status of ClusterClass %s/%s", ref.Namespace, ref.Name), acts.ReconcileClusterClassStatus
	case "RolloutPlan":
		return ownActivity(ctx, 5*time.Minute, fmt.Sprintf("plan Rollout %s/%s for its first approval", ref.Namespace, ref.Name),
			acts.WriteRolloutPlanStatus, activities.RolloutRef{Namespace: ref.Namespace, Name: ref.Name}).Get(ctx, nil)
	}
	return ownActivity(ctx, time.Minute, summary, fn, ref).Get(ctx, nil)
}
