package clusterstatus

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/mocks"
	"k8s.io/client-go/rest"

	"github.com/topoflow/topoflow/internal/kube"
)

// fakeServer is a client of a fake API server answering GETs of objects (by request path); its
// discovery serves cluster.x-k8s.io as v1beta2 only and a control plane provider's v1beta2 group.
func fakeServer(t *testing.T, objects map[string]any) *kube.Client {
	t.Helper()
	resources := func(gv string, list ...[2]string) map[string]any {
		var rs []any
		for _, r := range list {
			rs = append(rs, map[string]any{"name": r[0], "singularName": strings.ToLower(r[1]), "namespaced": true, "kind": r[1],
				"verbs": []any{"get", "list", "watch"}})
		}
		return map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": rs}
	}
	group := func(name string) map[string]any {
		v := map[string]any{"groupVersion": name + "/v1beta2", "version": "v1beta2"}
		return map[string]any{"name": name, "versions": []any{v}, "preferredVersion": v}
	}
	docs := map[string]any{
		"/api":    map[string]any{"kind": "APIVersions", "versions": []any{"v1"}},
		"/api/v1": resources("v1"),
		"/apis": map[string]any{"kind": "APIGroupList", "apiVersion": "v1",
			"groups": []any{group("cluster.x-k8s.io"), group("controlplane.cluster.x-k8s.io")}},
		"/apis/cluster.x-k8s.io/v1beta2": resources("cluster.x-k8s.io/v1beta2",
			[2]string{"clusters", "Cluster"}, [2]string{"machinedeployments", "MachineDeployment"}, [2]string{"machinepools", "MachinePool"}),
		"/apis/controlplane.cluster.x-k8s.io/v1beta2": resources("controlplane.cluster.x-k8s.io/v1beta2", [2]string{"kubeadmcontrolplanes", "KubeadmControlPlane"}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := docs[r.URL.Path]
		if !ok {
			body, ok = objects[r.URL.Path]
		}
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	k, err := kube.New(&rest.Config{Host: srv.URL})
	require.NoError(t, err)
	return k
}

func list(kind string, items ...map[string]any) map[string]any {
	out := []any{}
	for _, i := range items {
		out = append(out, i)
	}
	return map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": kind + "List", "metadata": map[string]any{}, "items": out}
}

func meta(name string, labels map[string]any) map[string]any {
	return map[string]any{"name": name, "namespace": "default", "labels": labels}
}

// demo is a Cluster as Cluster API v1.14 serves it: the class named by classRef only (v1beta1's
// spec.topology.class is not there), the contract reference by API group, the v1beta1
// conditions under status.deprecated.v1beta1 (an upgrade under way) beside v1beta2 ones that
// say otherwise, so a reading of the wrong list shows.
var demo = map[string]any{
	"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": meta("demo", nil),
	"spec": map[string]any{
		"controlPlaneRef": map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "demo-x"},
		"topology":        map[string]any{"classRef": map[string]any{"name": "quick-start", "namespace": "shared"}, "version": "v1.32.4"},
	},
	"status": map[string]any{
		"phase": "Provisioned",
		"conditions": []any{
			map[string]any{"type": "TopologyReconciled", "status": "True", "reason": "ReconcileSucceeded", "lastTransitionTime": "2026-11-24T10:00:00Z"},
		},
		"deprecated": map[string]any{"v1beta1": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-24T10:00:00Z"},
			map[string]any{"type": "TopologyReconciled", "status": "False", "severity": "Info", "reason": "ClusterUpgrading",
				"message": "Cluster is upgrading to v1.32.4\n  * Control plane upgrading", "lastTransitionTime": "2026-11-24T10:00:00Z"},
		}}},
	},
}

// modern is a Cluster whose status has only v1beta2 conditions (no v1beta1 ones kept).
var modern = map[string]any{
	"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": meta("modern", nil),
	"spec": map[string]any{"topology": map[string]any{"classRef": map[string]any{"name": "quick-start"}, "version": "v1.31.2"}},
	"status": map[string]any{"conditions": []any{
		map[string]any{"type": "TopologyReconciled", "status": "True", "reason": "ReconcileSucceeded", "lastTransitionTime": "2026-11-24T10:00:00Z"},
	}},
}

// unmanaged has no topology: not listed.
var unmanaged = map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": meta("plain", nil),
	"spec": map[string]any{"controlPlaneRef": map[string]any{"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": "p"}}}

func objects() map[string]any {
	mdLabels := map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/deployment-name": "md-0"}
	mpLabels := map[string]any{"cluster.x-k8s.io/cluster-name": "demo", "topology.cluster.x-k8s.io/pool-name": "mp-0"}
	return map[string]any{
		"/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/demo": demo,
		"/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters":      list("Cluster", modern, demo, unmanaged),
		"/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/default/kubeadmcontrolplanes/demo-x": map[string]any{
			"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane", "metadata": meta("demo-x", nil),
			"spec": map[string]any{"version": "v1.32.4", "replicas": int64(1)},
			"status": map[string]any{"version": "v1.31.2", "initialization": map[string]any{"controlPlaneInitialized": true},
				"replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "upToDateReplicas": int64(0)},
		},
		// The v1beta1 counters (updated 2, ready 3) differ from the v1beta2 ones (up to date 1, ready 1).
		"/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinedeployments": list("MachineDeployment", map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment", "metadata": meta("demo-md-0-y", mdLabels),
			"spec": map[string]any{"clusterName": "demo", "template": map[string]any{"spec": map[string]any{"clusterName": "demo", "version": "v1.31.2"}}},
			"status": map[string]any{"replicas": int64(3), "readyReplicas": int64(1), "upToDateReplicas": int64(1),
				"deprecated": map[string]any{"v1beta1": map[string]any{"updatedReplicas": int64(2), "readyReplicas": int64(3),
					"availableReplicas": int64(3), "unavailableReplicas": int64(0)}}},
		}),
		// Only v1beta2 counters: they stand in.
		"/apis/cluster.x-k8s.io/v1beta2/namespaces/default/machinepools": list("MachinePool", map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachinePool", "metadata": meta("demo-mp-0-z", mpLabels),
			"spec":   map[string]any{"clusterName": "demo", "template": map[string]any{"spec": map[string]any{"clusterName": "demo", "version": "v1.31.2"}}},
			"status": map[string]any{"replicas": int64(2), "readyReplicas": int64(2)},
		}),
	}
}

func notRunning() *mocks.Client {
	tc := &mocks.Client{}
	tc.On("QueryWorkflow", mock.Anything, mock.Anything, "", mock.Anything).Return(nil, serviceerror.NewNotFound("no such workflow"))
	return tc
}

// TestCollectReadsV1Beta2: the report shows what it showed from v1beta1 objects, read from the
// v1beta2 shapes: the class from classRef, the control plane through its contract reference
// (API group and kind, in the version the server prefers), the v1beta1 conditions and counters
// from status.deprecated.v1beta1, a MachinePool's v1beta2 counters where it has no v1beta1 ones.
func TestCollectReadsV1Beta2(t *testing.T) {
	k := fakeServer(t, objects())
	r, err := Collect(context.Background(), k, notRunning(), "default", "demo")
	require.NoError(t, err)
	assert.Equal(t, "quick-start", r.Class)
	assert.Equal(t, "v1.32.4", r.Version)
	assert.Equal(t, "Provisioned", r.Phase)
	require.NotNil(t, r.ControlPlane)
	assert.Equal(t, Part{Kind: "KubeadmControlPlane", Name: "demo-x", Version: "v1.31.2", DesiredVersion: "v1.32.4", Initialized: true,
		Ready: r.ControlPlane.Ready}, *r.ControlPlane)
	assert.Equal(t, []Part{
		{Pool: "md-0", Kind: "MachineDeployment", Name: "demo-md-0-y", Version: "v1.31.2", Replicas: 3, Updated: 2, ReadyReplicas: 3},
		{Pool: "mp-0", Kind: "MachinePool", Name: "demo-mp-0-z", Version: "v1.31.2", Replicas: 2, ReadyReplicas: 2},
	}, r.Pools)
	assert.Equal(t, []Condition{
		{Type: "Ready", Status: "True"},
		{Type: "TopologyReconciled", Status: "False", Reason: "ClusterUpgrading", Message: "Cluster is upgrading to v1.32.4\n  * Control plane upgrading"},
	}, r.Conditions)
	assert.Equal(t, "not running", r.StateError)
}

// TestListReadsV1Beta2: managed Clusters only, the class from classRef, the TOPOLOGY column from
// the v1beta1 condition, or from the v1beta2 one ("True", not its reason) where there is none.
func TestListReadsV1Beta2(t *testing.T) {
	k := fakeServer(t, objects())
	rows, err := List(context.Background(), k, notRunning(), "default")
	require.NoError(t, err)
	assert.Equal(t, []Row{
		{Cluster: "default/demo", Class: "quick-start", Version: "v1.32.4", Phase: "Provisioned", Topology: "ClusterUpgrading", StateError: "not running"},
		{Cluster: "default/modern", Class: "quick-start", Version: "v1.31.2", Topology: "True", StateError: "not running"},
	}, rows)
}

// TestTopologyColumn: "True", or the reason when not, or the status when there is no reason.
func TestTopologyColumn(t *testing.T) {
	for _, tc := range []struct {
		conds []Condition
		want  string
	}{
		{nil, ""},
		{[]Condition{{Type: "Ready", Status: "False", Reason: "X"}}, ""},
		{[]Condition{{Type: "TopologyReconciled", Status: "True"}}, "True"},
		{[]Condition{{Type: "TopologyReconciled", Status: "True", Reason: "ReconcileSucceeded"}}, "True"},
		{[]Condition{{Type: "TopologyReconciled", Status: "False", Reason: "TopologyReconcileFailed"}}, "TopologyReconcileFailed"},
		{[]Condition{{Type: "TopologyReconciled", Status: "Unknown"}}, "Unknown"},
	} {
		assert.Equal(t, tc.want, topologyColumn(tc.conds), "%v", tc.conds)
	}
}
