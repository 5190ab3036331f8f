package watcher

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/revision"
)

// TestClassRevisionInputChanged: a class's revisions are recorded again for what they hold (spec,
// discovered variables, the status catching up with them) and for its metadata (opt-in, history),
// not for a resync or a status write that leaves status.variables and observedGeneration alone.
func TestClassRevisionInputChanged(t *testing.T) {
	class := func(edit func(u *unstructured.Unstructured)) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "qs", "namespace": "ns", "generation": int64(2), "resourceVersion": "10",
				"annotations": map[string]any{revision.EnabledAnnotation: revision.Enabled}},
			"status": map[string]any{"observedGeneration": int64(2), "variables": []any{map[string]any{"name": "region"}}},
		}}
		if edit != nil {
			u.SetResourceVersion("11")
			edit(u)
		}
		return u
	}
	for _, tc := range []struct {
		name string
		old  *unstructured.Unstructured
		cur  *unstructured.Unstructured
		want bool
	}{
		{"added", nil, class(nil), true},
		{"a resync", class(nil), class(nil), false},
		{"the spec", class(nil), class(func(u *unstructured.Unstructured) { u.SetGeneration(3) }), true},
		{"discovered variables", class(nil), class(func(u *unstructured.Unstructured) {
			u.Object["status"] = map[string]any{"observedGeneration": int64(2), "variables": []any{}}
		}), true},
		{"the history annotation", class(nil), class(func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{revision.EnabledAnnotation: revision.Enabled, revision.HistoryAnnotation: "1"})
		}), true},
		{"the status caught up", class(nil), class(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["observedGeneration"] = int64(3)
		}), true},
		{"a label", class(nil), class(func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "b"}) }), true},
		{"a condition only", class(nil), class(func(u *unstructured.Unstructured) {
			u.Object["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "VariablesReconciled"}}
		}), false},
		{"Cluster API's conversion data", class(nil), class(func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{revision.EnabledAnnotation: revision.Enabled, conversion.DataAnnotation: "{}"})
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, classRevisionInputChanged(tc.old, tc.cur)) })
	}
}

// TestClusterRevisionClasses: a Cluster's add or delete, a move to another revision and a rebase
// reach the classes whose revision counts change; other updates reach none. The class is read from
// v1beta2's spec.topology.classRef.
func TestClusterRevisionClasses(t *testing.T) {
	cluster := func(class, classNS, pin string) *unstructured.Unstructured {
		ref := map[string]any{"name": class}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "c1", "namespace": "ns"},
			"spec":     map[string]any{"topology": map[string]any{"classRef": ref, "version": "v1.33.1"}},
		}}
		if class == "" {
			u.Object["spec"] = map[string]any{}
		}
		if classNS != "" {
			ref["namespace"] = classNS
		}
		if pin != "" {
			u.SetAnnotations(map[string]string{revision.PinAnnotation: pin})
		}
		return u
	}
	for _, tc := range []struct {
		name     string
		old, cur *unstructured.Unstructured
		want     []string
	}{
		{"added or deleted", nil, cluster("qs", "", ""), []string{"ns/qs"}},
		{"no topology", nil, cluster("", "", ""), nil},
		{"a class in another namespace", nil, cluster("qs", "shared", ""), []string{"shared/qs"}},
		{"pinned", cluster("qs", "", ""), cluster("qs", "", "qs-1"), []string{"ns/qs"}},
		{"moved", cluster("qs", "", "qs-1"), cluster("qs", "", "qs-2"), []string{"ns/qs"}},
		{"nothing of revisions", cluster("qs", "", "qs-1"), cluster("qs", "", "qs-1"), nil},
		{"rebased", cluster("qs", "", "qs-1"), cluster("other", "", "qs-1"), []string{"ns/qs", "ns/other"}},
		{"rebased to another namespace", cluster("qs", "", ""), cluster("qs", "shared", ""), []string{"ns/qs", "shared/qs"}},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, clusterRevisionClasses(tc.old, tc.cur)) })
	}
}

// TestClusterClassKeyReadsClassRef: a Cluster's class is its v1beta2 classRef; v1beta1's
// spec.topology.class and classNamespace, which a v1beta2 object does not have, name none.
func TestClusterClassKeyReadsClassRef(t *testing.T) {
	topology := func(topo map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
			"metadata": map[string]any{"name": "c1", "namespace": "ns"},
			"spec":     map[string]any{"topology": topo},
		}}
	}
	for _, tc := range []struct {
		name string
		topo map[string]any
		want string
	}{
		{"classRef only", map[string]any{"classRef": map[string]any{"name": "qs", "namespace": "shared"}}, "shared/qs"},
		{"classRef in the Cluster's namespace", map[string]any{"classRef": map[string]any{"name": "qs"}}, "ns/qs"},
		{"v1beta1 fields only", map[string]any{"class": "qs", "classNamespace": "shared"}, ""},
		{"a namespace without a name", map[string]any{"classRef": map[string]any{"namespace": "shared"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, clusterClassKey(topology(tc.topo))) })
	}
}
