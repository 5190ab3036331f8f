package activities

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topoflow/topoflow/activities/runtimeext"
)

type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// TestRecentAnswers: an answer is given back to the same call only, until it expires; when full
// the least recently used answer goes; no key keeps nothing.
func TestRecentAnswers(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)}
	l := newRecentAnswers(clock)
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

	clock.now = clock.now.Add(recentAnswersTTL + time.Second)
	_, ok = l.earlier("wf@run#5")
	assert.False(t, ok, "expired")

	for i := range recentAnswersSize {
		l.record(fmt.Sprintf("k%d", i), blocked)
	}
	l.record("last", blocked)
	_, ok = l.earlier("last")
	assert.True(t, ok)
	_, ok = l.earlier(fmt.Sprintf("k%d", recentAnswersSize-1))
	assert.True(t, ok, "the newest stay")
	_, ok = l.earlier("k0")
	assert.False(t, ok, "the oldest went")
}
