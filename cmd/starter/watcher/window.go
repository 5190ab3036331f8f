package watcher

import (
	"sync"
	"time"
)

// busyEpoch is how long a Cluster counts as busy after an event of its (between one and two
// epochs, see coalesceWindow).
const busyEpoch = 5 * time.Second

// perBusyCluster is how much longer a Cluster's events are held for each other busy Cluster.
const perBusyCluster = 20 * time.Millisecond

// coalesceWindow says how long to hold a Cluster's first queued event before signalling. One
// Cluster alone is woken within base. When many Clusters have events at once (a fleet created,
// upgraded or resynced), they share the worker, Temporal and the API server, a pass takes
// seconds, and a provider's updates of one Cluster's objects come hundreds of milliseconds
// apart instead of tens: each would wake the workflow on its own, a workflow task and a pass
// apiece. So the window grows by perBusyCluster for each other Cluster with events in the last
// epoch or two, up to max, and such a burst becomes one signal; the delay is small beside the
// passes it saves.
type coalesceWindow struct {
	base, max time.Duration

	mu         sync.Mutex
	epochStart time.Time
	// cur and prev are the Clusters with events in this epoch and the one before; newInCur counts
	// those of cur that are not in prev, so that prev and newInCur together count each once.
	cur, prev map[string]bool
	newInCur  int
}

func newCoalesceWindow(base, max time.Duration) *coalesceWindow {
	return &coalesceWindow{base: base, max: max, cur: map[string]bool{}, prev: map[string]bool{}}
}

// hold notes an event of the Cluster key at now and returns how long to hold it.
func (w *coalesceWindow) hold(key string, now time.Time) time.Duration {
	if w.base <= 0 || w.max <= w.base {
		return w.base // at once, or a fixed hold
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch elapsed := now.Sub(w.epochStart); {
	case elapsed >= 2*busyEpoch:
		w.prev, w.cur, w.newInCur, w.epochStart = map[string]bool{}, map[string]bool{}, 0, now
	case elapsed >= busyEpoch:
		w.prev, w.cur, w.newInCur, w.epochStart = w.cur, map[string]bool{}, 0, now
	}
	if !w.cur[key] {
		w.cur[key] = true
		if !w.prev[key] {
			w.newInCur++
		}
	}
	others := len(w.prev) + w.newInCur - 1
	return min(w.max, w.base+time.Duration(others)*perBusyCluster)
}
