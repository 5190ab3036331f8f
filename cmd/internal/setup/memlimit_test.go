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
