package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// starterBinary builds the starter once for the exit-code tests.
func starterBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "starter")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// TestCLIExitCodes: --help exits 0 everywhere and prints the command's flags; bad use exits 1
// with one "starter: ..." line naming the problem; version prints the build.
func TestCLIExitCodes(t *testing.T) {
	bin := starterBinary(t)
	for _, tc := range []struct {
		args     []string
		code     int
		contains string
	}{
		{[]string{"--help"}, 0, "status"},
		{[]string{"help"}, 0, "plan"},
		{[]string{"run", "--help"}, 0, "--task-queue"},
		{[]string{"plan", "--help"}, 0, "--cluster"},
		{[]string{"plan", "-h"}, 0, "--seed"},
		{[]string{"status", "--help"}, 0, "--watch"},
		{[]string{"version", "--help"}, 0, "version"},
		{[]string{"version"}, 0, "topoflow "},
		{[]string{"nonsense"}, 1, `starter: unknown command "nonsense"`},
		{[]string{"plan"}, 1, "starter: give exactly one of -f, --cluster or --class"},
		{[]string{"plan", "-f", "x", "-o", "xml"}, 1, `unknown output format "xml"`},
		{[]string{"status", "a/b", "c/d"}, 1, "accepts at most 1 arg(s), received 2"},
		{[]string{"status", "a/b", "-n", "x"}, 1, "--namespace lists Clusters: give it or NAMESPACE/NAME, not both"},
		{[]string{"status", "noslash"}, 1, `want NAMESPACE/NAME, got "noslash"`},
		{[]string{"status", "a/b", "-o", "yaml"}, 1, `unknown output format "yaml" (text or json)`},
		{[]string{"--no-such-flag"}, 1, "unknown flag: --no-such-flag"},
	} {
		cmd := exec.Command(bin, tc.args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, out.String())
		assert.Contains(t, out.String(), tc.contains, "%v", tc.args)
		if tc.code != 0 {
			assert.Equal(t, 1, strings.Count(out.String(), "starter:"), "one error line: %s", out.String())
		}
	}
}
