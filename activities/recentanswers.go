package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"k8s.io/apimachinery/pkg/util/cache"
)

// recentAnswers keeps the answers of recent hook calls by the activity that made them, so that a
// retry of the same activity (same workflow run and activity ID: the attempt whose completion
// never reached Temporal, say during a Temporal outage) returns the answer already received
// instead of calling the extension again. It narrows Cluster API's at-least-once window to a
// worker that dies after the extension answered; see docs/extensions.md, "What an extension can
// rely on".
// (Not the hook ledger, model/upgrade.Ledger: that is what the workflow records of the answers.)
type recentAnswers struct {
	cache *cache.LRUExpireCache
}

// recentAnswersTTL outlasts the activity's retries during any outage worth riding out; an entry
// is only ever read by a retry of the activity that wrote it.
const recentAnswersTTL = time.Hour

// recentAnswersSize bounds the memory; when full, the least recently used answer goes.
const recentAnswersSize = 4096

func newRecentAnswers(clock cache.Clock) *recentAnswers {
	if clock == nil {
		return &recentAnswers{cache: cache.NewLRUExpireCache(recentAnswersSize)}
	}
	return &recentAnswers{cache: cache.NewLRUExpireCacheWithClock(recentAnswersSize, clock)}
}

// hookCallKey names the hook call an activity makes: stable across its retries, different for
// every other call. "" outside an activity (tests calling the activity directly).
func hookCallKey(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	info := activity.GetInfo(ctx)
	return info.WorkflowExecution.ID + "@" + info.WorkflowExecution.RunID + "#" + info.ActivityID
}

// earlier returns the answer an earlier attempt of the same call received.
func (r *recentAnswers) earlier(key string) (HookOutcome, bool) {
	if r == nil || key == "" {
		return HookOutcome{}, false
	}
	v, ok := r.cache.Get(key)
	if !ok {
		return HookOutcome{}, false
	}
	return v.(HookOutcome), true
}

// record keeps an answer received for the call.
func (r *recentAnswers) record(key string, out HookOutcome) {
	if r == nil || key == "" {
		return
	}
	r.cache.Add(key, out, recentAnswersTTL)
}
