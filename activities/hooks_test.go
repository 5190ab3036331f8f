package activities

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestHookRequest: each lifecycle hook's request carries the fields of its type in Cluster API's
// runtime hooks API (BeforeClusterUpgradeRequest, the per-step requests, the Cluster-only ones),
// and nothing of another hook's.
func TestHookRequest(t *testing.T) {
	cluster := &hubv1.Cluster{}
	cluster.Name, cluster.Namespace = "c1", "ns"
	call := HookCall{FromKubernetesVersion: "v1.31.2", ToKubernetesVersion: "v1.33.0", KubernetesVersion: "v1.32.3",
		ControlPlaneUpgrades: []string{"v1.32.3", "v1.33.0"}, WorkersUpgrades: []string{"v1.33.0"}}
	for _, tc := range []struct {
		hook string
		want string // the request without the Cluster
	}{
		{hooksv1.BeforeClusterCreate, `{}`},
		{hooksv1.AfterControlPlaneInitialized, `{}`},
		{hooksv1.BeforeClusterDelete, `{}`},
		{hooksv1.BeforeClusterUpgrade, `{"fromKubernetesVersion":"v1.31.2","toKubernetesVersion":"v1.33.0",
			"controlPlaneUpgrades":[{"version":"v1.32.3"},{"version":"v1.33.0"}],"workersUpgrades":[{"version":"v1.33.0"}]}`},
		{hooksv1.AfterControlPlaneUpgrade, `{"fromKubernetesVersion":"v1.31.2","toKubernetesVersion":"v1.33.0","kubernetesVersion":"v1.32.3",
			"controlPlaneUpgrades":[{"version":"v1.32.3"},{"version":"v1.33.0"}],"workersUpgrades":[{"version":"v1.33.0"}]}`},
	} {
		in := call
		in.Hook = tc.hook
		req, err := hookRequest(in, cluster)
		require.NoError(t, err, tc.hook)
		got, ok := req["cluster"].(map[string]any)
		require.True(t, ok, tc.hook)
		assert.Equal(t, "c1", got["metadata"].(map[string]any)["name"], tc.hook)
		delete(req, "cluster")
		js, err := json.Marshal(req)
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(js), tc.hook)
	}
}
