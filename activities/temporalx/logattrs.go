package temporalx

import (
	"context"
	"log/slog"

	"go.temporal.io/sdk/activity"
)

// ActivityAttrs wraps a log handler so every record logged with an activity's context carries
// the workflow ID, run ID, activity type and attempt: an activity's log lines can be found from
// the workflow in the Temporal UI, and the other way round.
func ActivityAttrs(h slog.Handler) slog.Handler { return activityAttrs{h} }

type activityAttrs struct{ slog.Handler }

func (a activityAttrs) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil && activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		r = r.Clone()
		r.AddAttrs(slog.String("workflowID", info.WorkflowExecution.ID), slog.String("runID", info.WorkflowExecution.RunID),
			slog.String("activity", info.ActivityType.Name), slog.Int("attempt", int(info.Attempt)))
	}
	return a.Handler.Handle(ctx, r)
}

func (a activityAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return activityAttrs{a.Handler.WithAttrs(attrs)}
}

func (a activityAttrs) WithGroup(name string) slog.Handler {
	return activityAttrs{a.Handler.WithGroup(name)}
}
