package watcher

import (
	"fmt"
	"testing"
	"time"
)

func TestCoalesceWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	const base, ceiling = 100 * time.Millisecond, time.Second
	type event struct {
		key string
		at  time.Duration // after t0
	}
	// busy is n Clusters with an event each at t0.
	busy := func(n int, then ...event) []event {
		var evs []event
		for i := range n {
			evs = append(evs, event{key: fmt.Sprintf("ns/c%03d", i)})
		}
		return append(evs, then...)
	}
	for _, tc := range []struct {
		name      string
		base, max time.Duration
		events    []event
		want      time.Duration // the last event's hold
	}{
		{"one Cluster alone", base, ceiling, []event{{"ns/a", 0}, {"ns/a", time.Second}}, base},
		{"a second busy Cluster", base, ceiling, []event{{"ns/a", 0}, {"ns/b", time.Second}}, base + perBusyCluster},
		{"ten busy Clusters", base, ceiling, busy(10), base + 9*perBusyCluster},
		{"a fleet: capped", base, ceiling, busy(100), ceiling},
		{"busy in the epoch before still counts", base, ceiling, busy(10, event{"ns/z", busyEpoch + time.Second}), base + 10*perBusyCluster},
		{"quiet for two epochs: alone again", base, ceiling, busy(10, event{"ns/z", 2*busyEpoch + time.Second}), base},
		{"busy in both epochs counts once", base, ceiling, busy(10, event{"ns/c000", busyEpoch}, event{"ns/z", busyEpoch + time.Second}), base + 10*perBusyCluster},
		{"coalesce 0 signals at once however busy", 0, ceiling, busy(100), 0},
		{"max not above coalesce: a fixed hold", base, base, busy(100), base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newCoalesceWindow(tc.base, tc.max)
			var got time.Duration
			for _, ev := range tc.events {
				got = w.hold(ev.key, t0.Add(ev.at))
			}
			if got != tc.want {
				t.Errorf("hold %s, want %s", got, tc.want)
			}
		})
	}
}
