//go:build integration

package integration

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/decode"
)

// TestDeployManifests (#10): deploy/default (CRDs, the Rollout's included, RBAC, webhooks, worker and starter) renders
// with kustomize and the real API server accepts every object (server-side dry run), so the
// manifests an operator applies stay valid.
func TestDeployManifests(t *testing.T) {
	kubectl := repoFile("bin/kubectl")
	out, err := exec.Command(kubectl, "kustomize", repoFile("deploy/default")).Output()
	require.NoError(t, err, "kubectl kustomize deploy/default")
	docs, err := decode.Documents(bytes.NewReader(out))
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, d := range docs {
		kinds[d.GetKind()]++
		if d.GetKind() == "Namespace" {
			// Namespaced objects are checked in it: create it for real (idempotent).
			_, err := kc.Apply(t.Context(), d, "integration-test")
			require.NoError(t, err)
		}
	}
	for kind, n := range map[string]int{"CustomResourceDefinition": 11, "Deployment": 2, "Service": 2, "ClusterRole": 1,
		"Role": 1, "MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1, "ConfigMap": 1, "ServiceAccount": 1} {
		assert.Equal(t, n, kinds[kind], kind)
	}
	cmd := exec.Command(kubectl, "apply", "--server-side", "--dry-run=server", "-f", "-")
	cmd.Stdin = bytes.NewReader(out)
	res, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", res)
	assert.Equal(t, len(docs), strings.Count(string(res), "(server dry run)"), "%s", res)
}
