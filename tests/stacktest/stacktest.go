// Package stacktest holds what the end-to-end tests that run against a stack brought up by a
// script (tests/capi.sh, tests/v1beta2.sh) share: a client for the stack's API server and a
// wait that logs each new state.
package stacktest

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/internal/kube"
)

// Client connects to the API server of $KUBECONFIG; without one the test fails, naming the
// script that brings the stack up.
func Client(t *testing.T, script string) *kube.Client {
	t.Helper()
	if os.Getenv("KUBECONFIG") == "" {
		t.Fatalf("this test needs the stack %s brings up (its KUBECONFIG): run it with %s", script, script)
	}
	cfg, err := kube.RESTConfig("")
	require.NoError(t, err)
	k, err := kube.New(cfg)
	require.NoError(t, err)
	return k
}

// WaitFor polls cond every second until it holds, logging each state it reports that differs
// from the previous one, and fails the test after timeout with the last state.
func WaitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		if state != last {
			t.Logf("waiting for %s: %s", what, state)
		}
		last = state
		time.Sleep(time.Second)
	}
	t.Fatalf("timed out after %s waiting for %s; last state: %s", timeout, what, last)
}
