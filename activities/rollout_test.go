package activities

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
)

// changeKinds are a Rollout change of every kind: version, class rebase, class revision pin,
// variables, topology metadata, replicas, variable overrides, the v1beta1 fields v1beta2 keeps
// elsewhere or under another name, and one v1beta1 does not know.
var changeKinds = []struct {
	name   string
	change rolloutv1.Change
	// v1beta1Drops are the fields (of spec) the v1beta1 request named before and the request to a
	// server that serves only v1beta1 no longer names: fields v1beta1 does not know (that server
	// drops them from an apply anyway), a variable's definitionFrom (Cluster API v1.14's conversion
	// drops it, as the old request to a server that stores v1beta2 did) and the empty topology of a
	// revision move.
	v1beta1Drops []string
}{
	{"version", rolloutv1.Change{Version: "v1.35.0"}, nil},
	{"class rebase", rolloutv1.Change{Class: "gold-v2"}, nil},
	{"version and class", rolloutv1.Change{Version: "v1.35.0", Class: "gold-v2"}, nil},
	{"class revision pin", rolloutv1.Change{ClassRevision: "2"}, []string{".topology"}},
	{"class revision pin and version", rolloutv1.Change{ClassRevision: "3", Version: "v1.35.0"}, nil},
	{"variables", topologyChange(`{"variables":[{"name":"imageRepository","value":"registry.example"},
		{"name":"sizes","value":{"cpu":4,"ratio":0.5,"zones":["a","b"],"spot":false,"none":null}}]}`), nil},
	{"variables and version", func() rolloutv1.Change {
		c := topologyChange(`{"variables":[{"name":"region","value":"eu-1"}]}`)
		c.Version = "v1.35.0"
		return c
	}(), nil},
	{"an empty variable value", topologyChange(`{"variables":[{"name":"tags","value":{}},{"name":"list","value":[]},{"name":"s","value":""}]}`), nil},
	{"topology metadata", topologyChange(`{"controlPlane":{"metadata":{"labels":{"tier":"cp"},"annotations":{"owner":"team-a"}}},
		"workers":{"machineDeployments":[{"name":"md-0","class":"default","metadata":{"labels":{"pool":"general"}}}],
		"machinePools":[{"name":"mp-0","class":"default","metadata":{"annotations":{"a":"b"}}}]}}`), nil},
	{"replicas", topologyChange(`{"controlPlane":{"replicas":3},"workers":{"machineDeployments":[{"name":"md-0","class":"default","replicas":5}]}}`), nil},
	{"variable overrides", topologyChange(`{"controlPlane":{"variables":{"overrides":[{"name":"a","value":1}]}},
		"workers":{"machineDeployments":[{"name":"md-0","class":"default","variables":{"overrides":[{"name":"b","value":{"x":"y"}}]}}],
		"machinePools":[{"name":"mp-0","class":"default","variables":{"overrides":[{"name":"c","value":true}]}}]}}`), nil},
	{"fields v1beta2 moved", topologyChange(`{"classNamespace":"classes","controlPlane":{"nodeDrainTimeout":"90s","nodeDeletionTimeout":"10s",
		"nodeVolumeDetachTimeout":"1m","readinessGates":[{"conditionType":"Ready"}],
		"machineHealthCheck":{"enable":true,"maxUnhealthy":"40%","nodeStartupTimeout":"10m","unhealthyConditions":[{"type":"Ready","status":"False","timeout":"5m"}]}},
		"workers":{"machineDeployments":[{"name":"md-0","class":"default","failureDomain":"fd-1","minReadySeconds":30,"nodeDrainTimeout":"2m",
		"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0,"deletePolicy":"Oldest"}},
		"machineHealthCheck":{"enable":false}}],
		"machinePools":[{"name":"mp-0","class":"default","failureDomains":["fd-1"],"nodeDeletionTimeout":"30s","minReadySeconds":10}]}}`), nil},
	{"a variable's deprecated definitionFrom", topologyChange(`{"variables":[{"name":"a","value":1,"definitionFrom":"inline"}]}`),
		[]string{".topology.variables[a].definitionFrom"}},
	{"a field v1beta1 does not know", topologyChange(`{"controlPlane":{"replicas":1,"surge":2},"notAField":true}`),
		[]string{".topology.controlPlane.surge", ".topology.notAField"}},
}

func topologyChange(raw string) rolloutv1.Change {
	return rolloutv1.Change{Topology: &apiextensionsv1.JSON{Raw: []byte(raw)}}
}

// v1beta1Fragment is the spec.topology fragment a change wrote before the model moved to the hub
// (v1beta1: change.topology as written, version and class set over it).
func v1beta1Fragment(t *testing.T, c rolloutv1.Change) map[string]any {
	out := map[string]any{}
	if c.Topology != nil {
		require.NoError(t, json.Unmarshal(c.Topology.Raw, &out))
	}
	if c.Version != "" {
		out["version"] = c.Version
	}
	if c.Class != "" {
		out["class"] = c.Class
	}
	return out
}

// v1beta1ChangeObject is the Cluster a change's apply sent before: v1beta1, which the client
// converted with conversion.ToV1Beta2 for a server that stores v1beta2.
func v1beta1ChangeObject(t *testing.T, c rolloutv1.Change, cluster *hubv1.Cluster, by RolloutRef) *unstructured.Unstructured {
	ann := map[string]any{rollout.ClaimAnnotation: by.String()}
	if c.ClassRevision != "" {
		ann[revision.PinAnnotation] = "gold-" + c.ClassRevision
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"name": cluster.Name, "namespace": cluster.Namespace, "annotations": ann},
		"spec":     map[string]any{"topology": v1beta1Fragment(t, c)},
	}}
}

// TestChangeWireUnchanged: on a server that stores v1beta2 (Cluster API v1.11+, the default
// stack), the v1beta2 object a change's apply sends now is, byte for byte, the one the client
// sent for the v1beta1 object before (conversion.ToV1Beta2 at the client's edge), for every kind
// of change. kube.Client.ApplyKeeping reads the Cluster, merges what the rollout's manager owns
// into that one object and applies it, so the request, and the managed fields of the Clusters
// Rollouts wrote, are as they were. On a server that serves only v1beta1 the client converts the
// new object back (conversion.ToV1Beta1, without conversion data): it means what the old request
// meant and names the same fields but v1beta1Drops (durations are spelled canonically: "90s" is
// sent as "1m30s").
func TestChangeWireUnchanged(t *testing.T) {
	by := RolloutRef{Namespace: "fleet", Name: "edge"}
	cluster := &hubv1.Cluster{}
	cluster.Name, cluster.Namespace = "edge-01", "fleet"
	cluster.Spec.Topology = hubv1.Topology{ClassRef: hubv1.ClusterClassRef{Name: "gold"}, Version: "v1.34.2"}
	noVersions := func(group, kind string) (string, error) {
		return "", fmt.Errorf("no contract reference in a change, asked for %s %s", group, kind)
	}
	for _, tt := range changeKinds {
		t.Run(tt.name, func(t *testing.T) {
			old := v1beta1ChangeObject(t, tt.change, cluster, by)
			oldWire, converted, err := conversion.ToV1Beta2(old)
			require.NoError(t, err)
			require.True(t, converted)

			fragment, err := rollout.Topology(tt.change)
			require.NoError(t, err)
			w, err := writeFor(tt.change, fragment, cluster)
			require.NoError(t, err)
			obj := changeObject(cluster, by, w)
			assert.Equal(t, jsonOf(t, oldWire), jsonOf(t, obj), "the request to a server that stores v1beta2")

			// A server that serves only v1beta1: what the client's toWire sends there.
			v1, err := conversion.ToV1Beta1(obj, noVersions)
			require.NoError(t, err)
			ann := v1.GetAnnotations()
			delete(ann, conversion.DataAnnotation)
			v1.SetAnnotations(ann)
			again, _, err := conversion.ToV1Beta2(v1)
			require.NoError(t, err)
			assert.Equal(t, jsonOf(t, oldWire), jsonOf(t, again), "the request to a v1beta1-only server means what the old one meant")
			want := slices.DeleteFunc(fieldPaths(old.Object["spec"]), func(p string) bool { return slices.Contains(tt.v1beta1Drops, p) })
			assert.ElementsMatch(t, want, fieldPaths(v1.Object["spec"]), "the fields a v1beta1-only server records as the rollout's")
			assert.Equal(t, old.GetAnnotations(), v1.GetAnnotations())
		})
	}
}

func jsonOf(t *testing.T, u *unstructured.Unstructured) string {
	b, err := json.Marshal(u.Object)
	require.NoError(t, err)
	return string(b)
}

// fieldPaths are the paths of an object's fields, entries of lists of named objects by name (as
// server-side apply keys them), values left out.
func fieldPaths(v any) []string {
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				out = append(out, prefix+"."+k)
				walk(prefix+"."+k, e)
			}
		case []any:
			for i, e := range x {
				key := fmt.Sprint(i)
				if m, ok := e.(map[string]any); ok && m["name"] != nil {
					key = fmt.Sprint(m["name"])
				}
				walk(prefix+"["+key+"]", e)
			}
		}
	}
	walk("", v)
	slices.Sort(out)
	return out
}

// TestHoldsUnchanged: whether a Cluster already holds a change (so nothing is written, and after
// the write, whether another manager changed it) reads the same on the hub as it read on
// v1beta1, for every kind of change, on a Cluster that holds none of them and on one that holds
// them all (both read on the hub as the client reads a v1beta1 one, through Cluster API's
// conversion). Where v1beta1 compared a field the write never carried, it differs: the write
// dropped it at the conversion, so the Cluster never held it and the rollout took that for a
// hand change; on the hub the fragment is what is written.
func TestHoldsUnchanged(t *testing.T) {
	neverWritten := map[string]bool{
		"holds none/a field v1beta1 does not know":              true, // the replicas it also sets are held
		"holds them all/a variable's deprecated definitionFrom": true, // v1.14's conversion drops it
	}
	clusters := map[string]string{
		"holds none": `{"class":"gold","version":"v1.34.2","controlPlane":{"replicas":1},
			"workers":{"machineDeployments":[{"name":"md-0","class":"default","replicas":2}],"machinePools":[{"name":"mp-0","class":"default"}]},
			"variables":[{"name":"imageRepository","value":"old"}]}`,
		"holds them all": `{"class":"gold-v2","classNamespace":"classes","version":"v1.35.0",
			"controlPlane":{"replicas":3,"metadata":{"labels":{"tier":"cp"},"annotations":{"owner":"team-a"}},
				"variables":{"overrides":[{"name":"a","value":1}]},"nodeDrainTimeout":"90s","nodeDeletionTimeout":"10s","nodeVolumeDetachTimeout":"1m",
				"readinessGates":[{"conditionType":"Ready"}],
				"machineHealthCheck":{"enable":true,"maxUnhealthy":"40%","nodeStartupTimeout":"10m","unhealthyConditions":[{"type":"Ready","status":"False","timeout":"5m"}]}},
			"workers":{"machineDeployments":[{"name":"md-0","class":"default","replicas":5,"metadata":{"labels":{"pool":"general"}},
				"variables":{"overrides":[{"name":"b","value":{"x":"y"}}]},"failureDomain":"fd-1","minReadySeconds":30,"nodeDrainTimeout":"2m",
				"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0,"deletePolicy":"Oldest"}},"machineHealthCheck":{"enable":false}}],
				"machinePools":[{"name":"mp-0","class":"default","metadata":{"annotations":{"a":"b"}},"variables":{"overrides":[{"name":"c","value":true}]},
				"failureDomains":["fd-1"],"nodeDeletionTimeout":"30s","minReadySeconds":10}]},
			"variables":[{"name":"imageRepository","value":"registry.example"},{"name":"sizes","value":{"cpu":4,"ratio":0.5,"zones":["a","b"],"spot":false,"none":null}},
				{"name":"region","value":"eu-1"},{"name":"tags","value":{}},{"name":"list","value":[]},{"name":"s","value":""},{"name":"a","value":1}]}`,
	}
	held := 0
	for cname, topo := range clusters {
		var v1 map[string]any
		require.NoError(t, json.Unmarshal([]byte(topo), &v1))
		hub := hubCluster(t, v1)
		for _, tt := range changeKinds {
			if tt.change.ClassRevision != "" {
				continue // the pin: TestHoldsPin
			}
			old := rollout.Holds(v1, v1beta1Fragment(t, tt.change))
			fragment, err := rollout.Topology(tt.change)
			require.NoError(t, err)
			w, err := writeFor(tt.change, fragment, hub)
			require.NoError(t, err)
			now := holds(hub, w)
			if neverWritten[cname+"/"+tt.name] {
				assert.True(t, now, "%s, %s: what is written is held", cname, tt.name)
			} else {
				assert.Equal(t, old, now, "%s, %s", cname, tt.name)
			}
			if now {
				held++
			}
		}
	}
	// The Cluster that holds them all holds each change but the pins and the unknown field's
	// replicas, which the other one holds.
	assert.Equal(t, len(changeKinds)-2, held)
}

// hubCluster is a Cluster of a v1beta1 spec.topology read on the hub.
func hubCluster(t *testing.T, topology map[string]any) *hubv1.Cluster {
	u, _, err := conversion.ToV1Beta2(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "metadata": map[string]any{"name": "c", "namespace": "fleet"},
		"spec": map[string]any{"topology": topology}}})
	require.NoError(t, err)
	c := &hubv1.Cluster{}
	require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, c))
	return c
}
