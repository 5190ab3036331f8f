package kube

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"

	"github.com/topoflow/topoflow/model/api/conversion"
)

// servedAs is a client whose API server prefers the modelled resources in version: "v1beta2"
// serves them in both versions (Cluster API v1.11+), "v1beta1" in v1beta1 only (topoflow's CRDs).
// The sim providers' kinds are served too, for the versions of the references the conversion to
// v1beta1 writes.
func servedAs(version string) *Client {
	list := func(gv string, kinds map[string]string) *metav1.APIResourceList {
		l := &metav1.APIResourceList{GroupVersion: gv}
		for r, k := range kinds {
			l.APIResources = append(l.APIResources, metav1.APIResource{Name: r, Kind: k, Namespaced: true})
		}
		return l
	}
	var resources []*metav1.APIResourceList
	if version == "v1beta2" {
		resources = append(resources, list(v1beta2.String(), modelled))
	}
	resources = append(resources, list(v1beta1.String(), modelled),
		list("controlplane.cluster.x-k8s.io/v1beta1", map[string]string{"simcontrolplanes": "SimControlPlane"}),
		list("infrastructure.cluster.x-k8s.io/v1beta1", map[string]string{"simclusters": "SimCluster", "simmachinetemplates": "SimMachineTemplate"}),
		list("bootstrap.cluster.x-k8s.io/v1beta1", map[string]string{"simconfigtemplates": "SimConfigTemplate"}))
	disco := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: resources}}
	return &Client{mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))}
}

func object(t *testing.T, js string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON([]byte(js)))
	return u
}

func jsonOf(t *testing.T, u *unstructured.Unstructured) string {
	t.Helper()
	js, err := json.Marshal(u.Object)
	require.NoError(t, err)
	return string(js)
}

// TestWireVersion: a request for a modelled resource in either version goes to the version the
// API server prefers; other resources are not touched. ResourceFor maps a modelled kind in the
// version the server does not serve all the same (the request is wired).
func TestWireVersion(t *testing.T) {
	for _, tc := range []struct {
		served string
		asked  schema.GroupVersionResource
		want   schema.GroupVersionResource
	}{
		{"v1beta2", V1Beta1Clusters, Clusters},
		{"v1beta2", V1Beta1MachineSets, MachineSets},
		{"v1beta2", Clusters, Clusters},
		{"v1beta1", V1Beta1Clusters, V1Beta1Clusters},
		{"v1beta1", Clusters, V1Beta1Clusters},
		{"v1beta1", MachinePools, V1Beta1MachinePools},
		{"v1beta2", ClusterEndpoints, ClusterEndpoints},
		{"v1beta1", Rollouts, Rollouts},
	} {
		t.Run(tc.served+" "+tc.asked.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, servedAs(tc.served).wire(tc.asked))
		})
	}
	gvr, err := servedAs("v1beta1").ResourceFor(v1beta2.String(), "MachineDeployment")
	require.NoError(t, err)
	assert.Equal(t, MachineDeployments, gvr)
	_, err = servedAs("v1beta1").ResourceFor(v1beta2.String(), "MachinePoolX")
	assert.Error(t, err, "not modelled, not served")
}

// TestFromWire: an object the API server sends comes back in the version asked. Read as v1beta2
// it carries no conversion data (restored from it, as Cluster API's hub); read as v1beta1 a
// Cluster keeps the v1beta2 original in it.
func TestFromWire(t *testing.T) {
	const (
		clusterV1 = `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns",` +
			`"annotations":{"a":"b","cluster.x-k8s.io/conversion-data":"{\"spec\":{\"paused\":false}}"}},` +
			`"spec":{"controlPlaneRef":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlane","name":"cp","namespace":"ns"},` +
			`"topology":{"class":"quick-start","version":"v1.31.2"}}}`
		clusterV2 = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns","annotations":{"a":"b"}},` +
			`"spec":{"paused":false,"controlPlaneRef":{"apiGroup":"controlplane.cluster.x-k8s.io","kind":"SimControlPlane","name":"cp"},` +
			`"topology":{"classRef":{"name":"quick-start"},"version":"v1.31.2"}}}`
		mdV1 = `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},` +
			`"spec":{"clusterName":"c","replicas":2,"minReadySeconds":5,"selector":{},"template":{"metadata":{},"spec":{"clusterName":"c","version":"v1.31.2",` +
			`"bootstrap":{"configRef":{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"SimConfigTemplate","name":"b","namespace":"ns"}},` +
			`"infrastructureRef":{"apiVersion":"infrastructure.cluster.x-k8s.io/v1beta1","kind":"SimMachineTemplate","name":"m","namespace":"ns"}}}},` +
			`"status":{"availableReplicas":0,"readyReplicas":0,"replicas":0,"unavailableReplicas":0,"updatedReplicas":0}}`
		mdV2 = `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},` +
			`"spec":{"clusterName":"c","replicas":2,"template":{"spec":{"clusterName":"c","version":"v1.31.2","minReadySeconds":5,` +
			`"bootstrap":{"configRef":{"apiGroup":"bootstrap.cluster.x-k8s.io","kind":"SimConfigTemplate","name":"b"}},` +
			`"infrastructureRef":{"apiGroup":"infrastructure.cluster.x-k8s.io","kind":"SimMachineTemplate","name":"m"}}}},` +
			`"status":{"deprecated":{"v1beta1":{"availableReplicas":0,"readyReplicas":0,"unavailableReplicas":0,"updatedReplicas":0}},"replicas":0}}`
	)
	for _, tc := range []struct {
		name, served string
		asked        schema.GroupVersionResource
		in, want     string
		wantErr      string
	}{
		{name: "Cluster as v1beta2 from v1beta1", served: "v1beta1", asked: Clusters, in: clusterV1, want: clusterV2},
		{name: "MachineDeployment as v1beta2 from v1beta1", served: "v1beta1", asked: MachineDeployments, in: mdV1, want: mdV2},
		{name: "MachineDeployment as v1beta1 from v1beta2", served: "v1beta2", asked: V1Beta1MachineDeployments, in: mdV2, want: mdV1},
		{name: "Cluster as v1beta2 from v1beta2", served: "v1beta2", asked: Clusters, in: clusterV2, want: clusterV2},
		{name: "Cluster as v1beta1 from v1beta1", served: "v1beta1", asked: V1Beta1Clusters, in: clusterV1, want: clusterV1},
		{name: "Machine as v1beta2 from v1beta1: no conversion", served: "v1beta1", asked: Machines,
			in:      `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Machine","metadata":{"name":"m","namespace":"ns"}}`,
			wantErr: "Machine ns/m is v1beta1 and wanted as v1beta2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := servedAs(tc.served)
			in := object(t, tc.in)
			got, err := c.fromWire(tc.asked, in)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, jsonOf(t, got))
			if tc.asked.GroupVersion() == in.GroupVersionKind().GroupVersion() {
				assert.Same(t, in, got, "asked as sent: not converted")
			}
		})
	}

	// Read as v1beta1 from v1beta2, a Cluster keeps the original, and converts back whole.
	c := servedAs("v1beta2")
	got, err := c.fromWire(V1Beta1Clusters, object(t, clusterV2))
	require.NoError(t, err)
	assert.Equal(t, "quick-start", got.Object["spec"].(map[string]any)["topology"].(map[string]any)["class"])
	assert.Contains(t, got.GetAnnotations()[conversion.DataAnnotation], `"paused":false`)
	back, converted, err := c.toWire(got)
	require.NoError(t, err)
	assert.True(t, converted)
	assert.JSONEq(t, clusterV2, jsonOf(t, back), "paused: false, which v1beta1 cannot say, survives the round trip")

	// The watch's transform: either way, no conversion data.
	for _, tc := range []struct {
		served string
		asked  schema.GroupVersionResource
		in     string
	}{{"v1beta2", V1Beta1Clusters, clusterV2}, {"v1beta1", Clusters, clusterV1}} {
		out, err := servedAs(tc.served).ModelledTransform(tc.asked)(object(t, tc.in))
		require.NoError(t, err)
		assert.Equal(t, tc.asked.GroupVersion().String(), out.(*unstructured.Unstructured).GetAPIVersion())
		assert.Equal(t, map[string]string{"a": "b"}, out.(*unstructured.Unstructured).GetAnnotations())
	}
}

// TestToWire: what topoflow writes in one version is sent in the version the server prefers, as
// model/api/conversion makes it, a partial object staying partial (a status write names no spec
// field, a rollout's topology fragment no version) and carrying no conversion data to a v1beta1
// server; the answer's conversion back is TestFromWire's.
func TestToWire(t *testing.T) {
	for _, tc := range []struct {
		name, served string
		in, want     string
		specOnly     string // why only the spec is compared
		skip         string
	}{
		{name: "status write, v1beta1 to v1beta2", served: "v1beta2",
			in: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"phase":"Provisioned","infrastructureReady":true,"v1beta2":{"conditions":[{"type":"Available","status":"True","reason":"Available","message":"","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"conditions":[{"lastTransitionTime":"2026-01-01T00:00:00Z","message":"","reason":"Available","status":"True","type":"Available"}],` +
				`"initialization":{"infrastructureProvisioned":true},"phase":"Provisioned"}}`},
		{name: "rollout fragment, v1beta1 to v1beta2", served: "v1beta2",
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},"spec":{"topology":{"class":"quick-start-2"}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},"spec":{"topology":{"classRef":{"name":"quick-start-2"}}}}`},
		{name: "rollout fragment, v1beta2 to v1beta1", served: "v1beta1",
			in: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns","labels":{"l":"v"}},` +
				`"spec":{"topology":{"classRef":{"name":"quick-start-2"},"variables":[{"name":"region","value":"east"}]}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns","labels":{"l":"v"}},` +
				`"spec":{"topology":{"class":"quick-start-2","variables":[{"name":"region","value":"east"}]}}}`},
		{name: "status write, v1beta2 to v1beta1", served: "v1beta1",
			in: `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"phase":"Provisioned","initialization":{"infrastructureProvisioned":true}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c","namespace":"ns"},` +
				`"status":{"phase":"Provisioned","infrastructureReady":true}}`},
		{name: "a pool's replicas, v1beta1 to v1beta2", served: "v1beta2",
			specOnly: "model/api/conversion.ObjectV1Beta2 writes a status of zeros (dropped by the API server but in a status write)",
			in:       `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},"spec":{"replicas":3}}`,
			want:     `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},"spec":{"replicas":3}}`},
		{name: "a pool's replicas, v1beta2 to v1beta1", served: "v1beta1",
			skip: "model/api/conversion.ObjectV1Beta1 fills what a partial object does not set (clusterName, selector, template, status)",
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},"spec":{"replicas":3}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"MachineDeployment","metadata":{"name":"md","namespace":"ns"},"spec":{"replicas":3}}`},
		{name: "served as written", served: "v1beta1",
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"spec":{"topology":{"class":"x"}}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"Cluster","metadata":{"name":"c"},"spec":{"topology":{"class":"x"}}}`},
		{name: "not modelled", served: "v1beta2",
			in:   `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterEndpoint","metadata":{"name":"c"}}`,
			want: `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterEndpoint","metadata":{"name":"c"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			in := object(t, tc.in)
			out, converted, err := servedAs(tc.served).toWire(in)
			require.NoError(t, err)
			if tc.specOnly != "" {
				out = out.DeepCopy()
				delete(out.Object, "status")
			}
			assert.JSONEq(t, tc.want, jsonOf(t, out))
			assert.Equal(t, in.GetAPIVersion() != out.GetAPIVersion(), converted)
			if !converted {
				assert.Same(t, in, out)
			}
		})
	}
}

// TestPatchToWire: a merge patch keeps its metadata as written (null removes an annotation in
// both versions) and a Cluster's references cross as the conversion makes them, either way; a
// patch of another part, or a spec removal (null), is refused across versions rather than sent
// with the other version's names.
func TestPatchToWire(t *testing.T) {
	const (
		meta   = `{"metadata":{"annotations":{"topology.internal.cluster.x-k8s.io/upgrade-step":null,"x":"y"}}}`
		specV1 = `{"metadata":{"labels":{"l":"v"}},"spec":{"controlPlaneRef":{"apiVersion":"controlplane.cluster.x-k8s.io/v1beta1","kind":"SimControlPlane","name":"cp","namespace":"ns"}}}`
		specV2 = `{"metadata":{"labels":{"l":"v"}},"spec":{"controlPlaneRef":{"apiGroup":"controlplane.cluster.x-k8s.io","kind":"SimControlPlane","name":"cp"}}}`
	)
	for _, tc := range []struct {
		name, served string
		asked        schema.GroupVersionResource
		patch, want  string
		wantErr      string
	}{
		{name: "metadata, v1beta2 to v1beta1", served: "v1beta1", asked: Clusters, patch: meta, want: meta},
		{name: "metadata of a pool, v1beta2 to v1beta1", served: "v1beta1", asked: MachineSets, patch: meta, want: meta},
		{name: "metadata, v1beta1 to v1beta2", served: "v1beta2", asked: V1Beta1Clusters, patch: meta, want: meta},
		{name: "a Cluster's spec, v1beta1 to v1beta2", served: "v1beta2", asked: V1Beta1Clusters, patch: specV1, want: specV2},
		{name: "a Cluster's spec, v1beta2 to v1beta1", served: "v1beta1", asked: Clusters, patch: specV2, want: specV1},
		{name: "same version", served: "v1beta1", asked: V1Beta1Clusters, patch: specV1, want: specV1},
		{name: "a pool's spec", served: "v1beta1", asked: MachineDeployments, patch: `{"spec":{"replicas":3}}`, wantErr: `sets "spec"`},
		{name: "a removal in a Cluster's spec", served: "v1beta1", asked: Clusters, patch: `{"spec":{"paused":null}}`, wantErr: "removes a field of the spec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := servedAs(tc.served)
			out, err := c.patchToWire(tc.asked, c.wire(tc.asked), "ns", []byte(tc.patch))
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(out))
		})
	}
}

// TestCachedReadConvertsOnce: a cached object read in the other version is converted on the
// first read of that cached copy, not again while it is among the copies read most recently (every pass reads its class, Cluster, pools and health checks);
// each read gets its own copy; a newer copy is converted again; a read in the stored version
// is not converted.
func TestCachedReadConvertsOnce(t *testing.T) {
	c := servedAs("v1beta1")
	class := func(rv, region string) *packed {
		return packOf(t, object(t, `{"apiVersion":"cluster.x-k8s.io/v1beta1","kind":"ClusterClass","metadata":{"name":"cc","namespace":"ns","uid":"u1","resourceVersion":"`+rv+`"},`+
			`"spec":{"variables":[{"name":"region","required":true,"schema":{"openAPIV3Schema":{"type":"string","default":"`+region+`"}}}]}}`), nil)
	}
	converts := 0
	r := c.reading(ClusterClasses, c.wire(ClusterClasses))
	require.NotNil(t, r, "the server serves v1beta1 only: a v1beta2 read converts")
	counted := *r
	counted.convert = func(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		converts++
		return r.convert(u)
	}
	stored := class("1", "eu")
	first, err := stored.unpackAs(&counted)
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta2", first.GetAPIVersion())
	first.SetLabels(map[string]string{"changed": "by the caller"})
	second, err := stored.unpackAs(&counted)
	require.NoError(t, err)
	assert.Equal(t, 1, converts, "the second read of the same cached copy is not converted again")
	assert.Equal(t, jsonOf(t, withoutLabels(first)), jsonOf(t, second), "the same object as the first read")
	assert.Empty(t, second.GetLabels(), "a copy: the caller's change stays its own")
	asStored, err := stored.unpackAs(nil)
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", asStored.GetAPIVersion(), "read as stored")

	newer, err := class("2", "us").unpackAs(&counted)
	require.NoError(t, err)
	assert.Equal(t, 2, converts, "a newer copy is converted")
	assert.Contains(t, jsonOf(t, newer), `"default":"us"`)
	assert.Nil(t, c.reading(V1Beta1ClusterClasses, c.wire(V1Beta1ClusterClasses)), "asked as served: nothing to convert")
}

func withoutLabels(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetLabels(nil)
	return u
}

// TestConversionsBounded: the remembered conversions are the most recently read ones: one read
// again stays while others come, one not read again goes after two generations of others.
func TestConversionsBounded(t *testing.T) {
	var c conversions
	key := func(i int) conversionKey {
		return conversionKey{uid: "u", resourceVersion: fmt.Sprint(i), apiVersion: "v1beta2"}
	}
	kept, dropped := key(-1), key(-2)
	c.put(kept, &packed{})
	c.put(dropped, &packed{})
	for i := range 3 * maxConversions {
		c.put(key(i), &packed{})
		if i%(maxConversions/2) == 0 {
			assert.NotNil(t, c.get(kept), "read again: kept (after %d others)", i)
		}
	}
	assert.NotNil(t, c.get(kept))
	assert.Nil(t, c.get(dropped), "not read again: gone")
	assert.LessOrEqual(t, len(c.cur)+len(c.prev), 2*maxConversions)
}
