package setup

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// memoryLimitFiles are where a container's memory limit shows (cgroup v2, then v1).
var memoryLimitFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryLimit gives the Go runtime a soft memory limit of 90% of the container's, unless
// GOMEMLIMIT says otherwise: the garbage collector then works harder near the limit instead of
// letting the heap double past it (the worker's cache is most of its memory).
func setMemoryLimit(log *slog.Logger) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	for _, f := range memoryLimitFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		limit, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || limit <= 0 || limit >= 1<<60 { // "max", or v1's "unlimited"
			return
		}
		soft := limit / 10 * 9
		debug.SetMemoryLimit(soft)
		log.Info("Go memory limit set from the container's", "containerLimitBytes", limit, "goMemoryLimitBytes", soft)
		return
	}
}

// SetGCPercent sets the garbage collector's target (GOGC) to percent unless the GOGC environment
// variable is set, which wins. Go's default of 100 lets the heap grow to twice its live data
// between collections; a process whose live heap is mostly long-lived caches (the worker's
// informers) pays that doubling in resident memory for little gain in CPU.
func SetGCPercent(log *slog.Logger, percent int) {
	if os.Getenv("GOGC") != "" || percent <= 0 {
		return
	}
	if old := debug.SetGCPercent(percent); old != percent {
		log.Info("Go garbage collector target set", "gcPercent", percent, "was", old)
	}
}
