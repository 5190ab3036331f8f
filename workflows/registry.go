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
	default:
		return "clusterclass/" + ref.Namespace + "/" + ref.Name
	}
}

// ReconcileObject runs discovery for an ExtensionConfig, or writes a ClusterClass's status.
// An unreachable extension or API server only delays it: the activity retries without limit.
func ReconcileObject(ctx workflow.Context, ref activities.ObjectRef) error {
	summary := "discover the handlers of ExtensionConfig " + ref.Name
	var fn any = acts.DiscoverExtension
	if ref.Kind == "ClusterClass" {
		summary, fn = fmt.Sprintf("write the status of ClusterClass %s/%s", ref.Namespace, ref.Name), acts.ReconcileClusterClassStatus
	}
	return ownActivity(ctx, time.Minute, summary, fn, ref).Get(ctx, nil)
}
