package activities

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topoflow/topoflow/activities/runtimeext"
)

// TestHookLedger: an answer is given back to the same call only, until it expires; a full
// ledger drops what expired and then its older half; no key keeps nothing.
func TestHookLedger(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	l := newHookLedger()
	l.now = func() time.Time { return now }
	blocked := HookOutcome{Result: runtimeext.Result{RetryAfterSeconds: 30, Message: "wait"}}

	l.record("wf@run#5", blocked)
	got, ok := l.earlier("wf@run#5")
	assert.True(t, ok)
	assert.Equal(t, blocked, got)
	_, ok = l.earlier("wf@run#6")
	assert.False(t, ok, "another call of the same run")
	_, ok = l.earlier("wf@other#5")
	assert.False(t, ok, "the same activity ID in another run")

	l.record("", blocked)
	_, ok = l.earlier("")
	assert.False(t, ok, "no key: not an activity, nothing kept")

	now = now.Add(hookLedgerTTL + time.Second)
	_, ok = l.earlier("wf@run#5")
	assert.False(t, ok, "expired")

	for i := range hookLedgerSize {
		now = now.Add(time.Millisecond)
		l.record(fmt.Sprintf("k%d", i), blocked)
	}
	l.record("last", blocked)
	assert.LessOrEqual(t, len(l.entries), hookLedgerSize/2+1, "the older half went")
	_, ok = l.earlier("last")
	assert.True(t, ok)
	_, ok = l.earlier(fmt.Sprintf("k%d", hookLedgerSize-1))
	assert.True(t, ok, "the newest stay")
	_, ok = l.earlier("k0")
	assert.False(t, ok, "the oldest went")
}
