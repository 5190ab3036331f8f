//go:build realcapi

package realcapi

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/stacktest"
)

// TestRolloutBesideClusterAPI: a Rollout moves three in-memory Clusters one minor up in two
// stages (one, then two at once) beside Cluster API's controllers, with the SDK extension
// answering every hook (each blocking hook retrying once): the start's dry run and every write
// pass Cluster API's webhooks and topoflow's, and each Cluster's own workflow runs its upgrade
// and hooks.
func TestRolloutBesideClusterAPI(t *testing.T) {
	k := stacktest.Client(t, "tests/capi.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ns, ext := namespaceWithExtension(t, ctx, k)
	names := []string{"r0", "r1", "r2"}
	start := time.Now()
	createSettled(t, ctx, k, ns, names...)
	t.Logf("three Clusters created in %s", time.Since(start).Round(time.Second))

	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "to-1-34", "namespace": ns},
		"spec": map[string]any{
			"clusters": map[string]any{"selector": map[string]any{}},
			"change":   map[string]any{"version": "v1.34.0"},
			"stages": []any{
				map[string]any{"name": "first", "count": 1},
				map[string]any{"name": "rest", "maxConcurrent": 2},
			},
		},
	}}
	_, err := k.Dynamic.Resource(kube.Rollouts).Namespace(ns).Create(ctx, r, metav1.CreateOptions{})
	require.NoError(t, err)
	start = time.Now()
	var st rolloutv1.RolloutStatus
	stacktest.WaitFor(t, 10*time.Minute, "the rollout completed", func() (bool, string) {
		ro := &rolloutv1.Rollout{}
		if err := k.GetTyped(ctx, kube.Rollouts, ns, "to-1-34", ro); err != nil {
			return false, err.Error()
		}
		st = ro.Status
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %s stage %s %+v", st.Phase, st.Stage, st.Counts)
	})
	t.Logf("rolled out in %s", time.Since(start).Round(time.Second))
	assert.Equal(t, rolloutv1.Counts{Total: 3, Done: 3}, st.Counts)
	for _, name := range names {
		ok, state := settled(ctx, k, ns, name, "v1.34.0")
		assert.True(t, ok, "%s: %s", name, state)
		noSharedFields(t, ctx, k, ns, name)
	}
	// The first stage's Cluster was done before the rest started.
	first := st.Clusters[0]
	require.Equal(t, "first", first.Stage)
	for _, c := range st.Clusters[1:] {
		assert.False(t, c.StartedAt.Before(first.FinishedAt), "%s started %s, before %s was done at %s", c.Name, c.StartedAt, first.Name, first.FinishedAt)
	}
	// Every Cluster's own workflow ran the upgrade hooks, each passing once.
	for _, name := range names {
		passed := 0
		for _, c := range ext.Calls(t, hooksv1.BeforeClusterUpgrade) {
			if c.Cluster == ns+"/"+name && c.Passed() {
				passed++
				assert.Equal(t, "v1.34.0", c.TopologyVersion)
			}
		}
		assert.Equal(t, 1, passed, "%s: BeforeClusterUpgrade passed once", name)
	}
}
