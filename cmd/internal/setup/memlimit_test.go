package setup

import (
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	dir := t.TempDir()
	old := memoryLimitFiles
	defer func() { memoryLimitFiles = old }()

	for _, tc := range []struct {
		content string
		want    int64
	}{
		{"1000000000\n", 900000000},
		{"max\n", math.MaxInt64},
	} {
		debug.SetMemoryLimit(math.MaxInt64)
		f := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(f, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		memoryLimitFiles = []string{f}
		setMemoryLimit(slog.Default())
		if got := debug.SetMemoryLimit(-1); got != tc.want {
			t.Errorf("container limit %q: Go memory limit %d, want %d", tc.content, got, tc.want)
		}
	}
}

func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, tc := range []struct {
		env     string
		percent int
		want    int
	}{
		{"", 50, 50},     // the flag's value
		{"", 0, 100},     // 0 leaves the runtime's own
		{"200", 50, 100}, // GOGC set: the environment wins (the runtime read it at start)
	} {
		debug.SetGCPercent(100)
		t.Setenv("GOGC", tc.env)
		if tc.env == "" {
			os.Unsetenv("GOGC")
		}
		SetGCPercent(slog.Default(), tc.percent)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("GOGC=%q, percent %d: GC percent %d, want %d", tc.env, tc.percent, got, tc.want)
		}
	}
}
