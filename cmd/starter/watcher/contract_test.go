package watcher

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/topoflow/topoflow/internal/kube"
)

// TestContractResource: a v1beta2 Cluster's contract reference names an API group and kind only;
// the watch goes to the version the API server prefers for them, and an unserved kind is none.
func TestContractResource(t *testing.T) {
	v1beta1 := map[string]any{"groupVersion": "controlplane.cluster.x-k8s.io/v1beta1", "version": "v1beta1"}
	v1beta2 := map[string]any{"groupVersion": "controlplane.cluster.x-k8s.io/v1beta2", "version": "v1beta2"}
	kcp := func(gv string) map[string]any {
		return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": []any{
			map[string]any{"name": "kubeadmcontrolplanes", "singularName": "kubeadmcontrolplane", "namespaced": true,
				"kind": "KubeadmControlPlane", "verbs": []any{"get", "list", "watch"}}}}
	}
	docs := map[string]any{
		"/api":    map[string]any{"kind": "APIVersions", "versions": []any{"v1"}},
		"/api/v1": map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1", "resources": []any{}},
		"/apis": map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{map[string]any{
			"name": "controlplane.cluster.x-k8s.io", "versions": []any{v1beta2, v1beta1}, "preferredVersion": v1beta2}}},
		"/apis/controlplane.cluster.x-k8s.io/v1beta1": kcp("controlplane.cluster.x-k8s.io/v1beta1"),
		"/apis/controlplane.cluster.x-k8s.io/v1beta2": kcp("controlplane.cluster.x-k8s.io/v1beta2"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer srv.Close()
	k, err := kube.New(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	w := &Watcher{kube: k}

	gvr, err := w.contractResource("controlplane.cluster.x-k8s.io", "KubeadmControlPlane")
	require.NoError(t, err)
	assert.Equal(t, schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Resource: "kubeadmcontrolplanes"}, gvr)

	_, err = w.contractResource("infrastructure.cluster.x-k8s.io", "DockerCluster")
	assert.ErrorContains(t, err, "DockerCluster")
}
