package activities

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// hookLedger keeps the answers of recent hook calls by the activity that made them, so that a
// retry of the same activity (same workflow run and activity ID: the attempt whose completion
// never reached Temporal, say during a Temporal outage) returns the answer already received
// instead of calling the extension again. It narrows Cluster API's at-least-once window to a
// worker that dies after the extension answered; see the README's "What an extension can rely on".
type hookLedger struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]ledgerEntry
}

type ledgerEntry struct {
	at  time.Time
	out HookOutcome
}

// hookLedgerTTL outlasts the activity's retries during any outage worth riding out; an entry
// is only ever read by a retry of the activity that wrote it.
const hookLedgerTTL = time.Hour

// hookLedgerSize bounds the ledger; when full, expired entries go, then the oldest half.
const hookLedgerSize = 4096

func newHookLedger() *hookLedger {
	return &hookLedger{now: time.Now, entries: map[string]ledgerEntry{}}
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
func (l *hookLedger) earlier(key string) (HookOutcome, bool) {
	if l == nil || key == "" {
		return HookOutcome{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[key]
	if !ok || l.now().Sub(e.at) > hookLedgerTTL {
		return HookOutcome{}, false
	}
	return e.out, true
}

// record keeps an answer received for the call.
func (l *hookLedger) record(key string, out HookOutcome) {
	if l == nil || key == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.entries) >= hookLedgerSize {
		l.evict(now)
	}
	l.entries[key] = ledgerEntry{at: now, out: out}
}

// evict drops expired entries, and when that is not enough the older half.
func (l *hookLedger) evict(now time.Time) {
	var times []time.Time
	for k, e := range l.entries {
		if now.Sub(e.at) > hookLedgerTTL {
			delete(l.entries, k)
		} else {
			times = append(times, e.at)
		}
	}
	if len(l.entries) < hookLedgerSize {
		return
	}
	// The median time splits the entries; everything at or before it goes.
	slices.SortFunc(times, time.Time.Compare)
	cut := times[len(times)/2]
	for k, e := range l.entries {
		if !e.at.After(cut) {
			delete(l.entries, k)
		}
	}
}
