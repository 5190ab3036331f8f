package temporalx

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
)

// TestActivityAttrs: lines logged inside an activity carry its workflow and activity; others not.
func TestActivityAttrs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(ActivityAttrs(slog.NewTextHandler(&buf, nil))).With("component", "test")
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		log.InfoContext(ctx, "inside")
		return nil
	}, activity.RegisterOptions{Name: "logs"})
	_, err := env.ExecuteActivity("logs")
	require.NoError(t, err)
	log.InfoContext(context.Background(), "outside")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	assert.Contains(t, string(lines[0]), "workflowID=")
	assert.Contains(t, string(lines[0]), "activity=")
	assert.Contains(t, string(lines[0]), "component=test")
	assert.NotContains(t, string(lines[1]), "workflowID=")
}
