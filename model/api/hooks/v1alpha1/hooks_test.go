package v1alpha1

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

func TestHandlerPath(t *testing.T) {
	assert.Equal(t, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/beforeclustercreate/my-handler", HandlerPath(BeforeClusterCreate, "my-handler"))
	assert.Equal(t, "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery", HandlerPath(Discovery, ""))
}

func TestWireShapes(t *testing.T) {
	// A blocking hook's answer as an extension sends it.
	var resp RetryResponse
	require.NoError(t, json.Unmarshal([]byte(`{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"BeforeClusterCreateResponse","status":"Success","message":"wait","retryAfterSeconds":30}`), &resp))
	assert.Equal(t, ResponseStatusSuccess, resp.Status)
	assert.EqualValues(t, 30, resp.RetryAfterSeconds)
	assert.Equal(t, "wait", resp.Message)

	req := BeforeClusterUpgradeRequest{
		TypeMeta:              metav1.TypeMeta{APIVersion: APIVersion, Kind: "BeforeClusterUpgradeRequest"},
		CommonRequest:         CommonRequest{Settings: map[string]string{"k": "v"}},
		Cluster:               hubv1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}},
		FromKubernetesVersion: "v1.30.5",
		ToKubernetesVersion:   "v1.32.1",
	}
	js, err := json.Marshal(req)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(js, &m))
	for _, k := range []string{"apiVersion", "kind", "settings", "cluster", "fromKubernetesVersion", "toKubernetesVersion"} {
		assert.Contains(t, m, k)
	}
	assert.NotContains(t, m, "controlPlaneUpgrades", "empty plan steps are omitted")
	assert.Equal(t, "c", m["cluster"].(map[string]any)["metadata"].(map[string]any)["name"])

	plan, err := json.Marshal(GenerateUpgradePlanRequest{FromControlPlaneKubernetesVersion: "v1.30.5", FromWorkersKubernetesVersion: "v1.29.3", ToKubernetesVersion: "v1.33.0"})
	require.NoError(t, err)
	m = nil
	require.NoError(t, json.Unmarshal(plan, &m))
	assert.Equal(t, "v1.30.5", m["fromControlPlaneKubernetesVersion"])
	assert.Equal(t, "v1.29.3", m["fromWorkersKubernetesVersion"])
	assert.Equal(t, "v1.33.0", m["toKubernetesVersion"])
	var planResp GenerateUpgradePlanResponse
	require.NoError(t, json.Unmarshal([]byte(`{"status":"Success","controlPlaneUpgrades":[{"version":"v1.31.9"},{"version":"v1.32.4"}],"workersUpgrades":[{"version":"v1.32.4"}]}`), &planResp))
	assert.Equal(t, []UpgradeStepInfo{{Version: "v1.31.9"}, {Version: "v1.32.4"}}, planResp.ControlPlaneUpgrades)
	assert.Equal(t, []UpgradeStepInfo{{Version: "v1.32.4"}}, planResp.WorkersUpgrades)

	var disco DiscoveryResponse
	require.NoError(t, json.Unmarshal([]byte(`{"status":"Success","handlers":[{"name":"h","requestHook":{"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","hook":"BeforeClusterCreate"},"timeoutSeconds":10,"failurePolicy":"Fail"}]}`), &disco))
	require.Len(t, disco.Handlers, 1)
	assert.Equal(t, "BeforeClusterCreate", disco.Handlers[0].RequestHook.Hook)
	assert.EqualValues(t, 10, *disco.Handlers[0].TimeoutSeconds)
}

// DiscoverVariables answers from SDKs before and after Cluster API v1.13 decode to the same definitions.
func TestDiscoverVariablesResponseBothShapes(t *testing.T) {
	for name, js := range map[string]string{
		"v1beta1": `{"status":"Success","variables":[{"name":"region","required":true,"metadata":{"labels":{"a":"b"}},"schema":{"openAPIV3Schema":{"type":"string"}}}]}`,
		"v1beta2": `{"status":"Success","variables":[{"name":"region","required":true,"deprecatedV1Beta1Metadata":{"labels":{"a":"b"}},"schema":{"openAPIV3Schema":{"type":"string"}}}]}`,
	} {
		var resp DiscoverVariablesResponse
		require.NoError(t, json.Unmarshal([]byte(js), &resp), name)
		assert.Equal(t, ResponseStatusSuccess, resp.Status, name)
		require.Len(t, resp.Variables, 1, name)
		v := resp.Variables[0]
		assert.Equal(t, "region", v.Name, name)
		assert.True(t, v.Required, name)
		assert.Equal(t, map[string]string{"a": "b"}, v.Metadata.Labels, name)
		assert.Equal(t, "string", v.Schema.OpenAPIV3Schema.Type, name)
	}
}

func TestTrimRequestCluster(t *testing.T) {
	c := map[string]any{
		"metadata": map[string]any{"name": "c", "managedFields": []any{}, "annotations": map[string]any{
			"kubectl.kubernetes.io/last-applied-configuration": "{}", "cluster.x-k8s.io/conversion-data": "{}",
		}},
		"spec":   map[string]any{"paused": true},
		"status": map[string]any{"phase": "Provisioned"},
	}
	TrimRequestCluster(c)
	assert.Equal(t, map[string]any{"metadata": map[string]any{"name": "c"}, "spec": map[string]any{"paused": true}}, c)
}
