package kube

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// servedAs is a client that found, by discovery, the modelled resources served best in version.
func servedAs(version string) *Client {
	c := &Client{}
	for r := range modelled {
		c.served.Store(r, version)
	}
	return c
}

// TestWireVersion: requests for a modelled v1beta1 resource go to v1beta2 where the API server
// prefers it (Cluster API v1.11+), and stay v1beta1 where it serves nothing newer; other resources
// are not touched.
func TestWireVersion(t *testing.T) {
	assert.Equal(t, "v1beta2", servedAs("v1beta2").wire(V1Beta1Clusters).Version)
	assert.Equal(t, "v1beta2", servedAs("v1beta2").wire(V1Beta1MachineSets).Version)
	assert.Equal(t, "v1beta1", servedAs("v1beta1").wire(V1Beta1Clusters).Version)
	assert.Equal(t, ClusterEndpoints, servedAs("v1beta2").wire(ClusterEndpoints), "not modelled")
	assert.Equal(t, Rollouts, servedAs("v1beta2").wire(Rollouts))
}

// TestToWire: what topoflow writes as v1beta1 is sent as Cluster API's conversion makes it, a
// partial object staying partial (a status write names no spec field, a rollout's topology
// fragment no version).
func TestToWire(t *testing.T) {
	c := servedAs("v1beta2")
	for name, tc := range map[string]struct{ in, want string }{
		"status write": {
			in: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"phase":"Provisioned","infrastructureReady":true,"v1beta2":{"conditions":[{"type":"Available","status":"True","reason":"Available","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z","message":"","reason":"Available","status":"True","type":"Available"}],` +
				`"initialization":{"infrastructureProvisioned":true},"phase":"Provisioned"}}`,
		},
		"rollout fragment": {
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},"spec":{"topology":{"class":"quick-start-2"}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},"spec":{"topology":{"classRef":{"name":"quick-start-2"}}}}`,
		},
		"not modelled": {
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterEndpoint","metadata":{"name":"c"}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterEndpoint","metadata":{"name":"c"}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{}
			require.NoError(t, u.UnmarshalJSON([]byte(tc.in)))
			out, _, err := c.toWire(u)
			require.NoError(t, err)
			js, err := json.Marshal(out.Object)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(js))
		})
	}
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"}}`)))
	out, converted, err := servedAs("v1beta1").toWire(u)
	require.NoError(t, err)
	assert.False(t, converted, "a server that prefers v1beta1 gets v1beta1")
	assert.Same(t, u, out)
}

// TestPatchToWire: a merge patch keeps its metadata as written (null removes an annotation in
// both versions) and a Cluster's references become contract references; a patch of another part
// of a v1beta2 resource is refused rather than sent with v1beta1 names.
func TestPatchToWire(t *testing.T) {
	c := servedAs("v1beta2")
	patch := `{"metadata":{"annotations":{"topology.internal.cluster.x-k8s.io/upgrade-step":null}},` +
		`"spec":{"controlPlaneRef":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlane","name":"cp","namespace":"ns"}}}`
	out, err := c.patchToWire(V1Beta1Clusters, c.wire(V1Beta1Clusters), []byte(patch))
	require.NoError(t, err)
	assert.JSONEq(t, `{"metadata":{"annotations":{"topology.internal.cluster.x-k8s.io/upgrade-step":null}},`+
		`"spec":{"controlPlaneRef":{"apiGroup":"controlplane.cluster.x-k8s.io","kind":"SimControlPlane","name":"cp"}}}`, string(out))

	same, err := servedAs("v1beta1").patchToWire(V1Beta1Clusters, V1Beta1Clusters, []byte(patch))
	require.NoError(t, err)
	assert.Equal(t, patch, string(same))

	_, err = c.patchToWire(V1Beta1MachineDeployments, c.wire(V1Beta1MachineDeployments), []byte(`{"spec":{"replicas":3}}`))
	assert.ErrorContains(t, err, `sets "spec"`)
}

// TestFromWire: what the API server sends as v1beta2 is read as the v1beta1 object Cluster API
// serves for it, the v1beta2 original in the conversion-data annotation; v1beta2 the caller asked
// for is left alone.
func TestFromWire(t *testing.T) {
	c := servedAs("v1beta2")
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(`{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},`+
		`"spec":{"paused":false,"topology":{"classRef":{"name":"quick-start"},"version":"v1.31.2"}}}`)))
	got, err := c.fromWire(V1Beta1Clusters, u)
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", got.GetAPIVersion())
	class, _, _ := unstructured.NestedString(got.Object, "spec", "topology", "class")
	assert.Equal(t, "quick-start", class)
	assert.Contains(t, got.GetAnnotations()["cluster.x-k8s.io/conversion-data"], `"paused":false`)

	back, _, err := c.toWire(got)
	require.NoError(t, err)
	paused, found, _ := unstructured.NestedBool(back.Object, "spec", "paused")
	assert.True(t, found && !paused, "paused: false, which v1beta1 cannot say, survives the round trip")

	asked, err := c.fromWire(c.wire(V1Beta1Clusters), u)
	require.NoError(t, err)
	assert.Same(t, u, asked)
}
