package buildinfo

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLine: the line names the build, and a stamped revision wins over Go's VCS information.
func TestLine(t *testing.T) {
	assert.True(t, strings.HasPrefix(Line(), "topoflow "), Line())
	assert.Contains(t, Line(), "go1.")
	defer func(r string) { Revision = r }(Revision)
	Revision = "0123abc-dirty"
	assert.Contains(t, Line(), "revision 0123abc-dirty,")
}

// TestBuildScriptStamps: deploy/build.sh stamps the revision even with Go's VCS stamping off (as
// GOFLAGS=-buildvcs=false on some machines, and always without .git).
func TestBuildScriptStamps(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command(filepath.Join(root, "deploy", "build.sh"), out+"/", "./cmd/starter")
	cmd.Env = append(cmd.Environ(), "GOFLAGS=-buildvcs=false", "TOPOFLOW_REVISION=feedface")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	v, err := exec.Command(filepath.Join(out, "starter"), "version").CombinedOutput()
	require.NoError(t, err, "%s", v)
	assert.Contains(t, string(v), "revision feedface,")
}
