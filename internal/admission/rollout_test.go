package admission

import (
	"testing"

	"github.com/stretchr/testify/assert"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// TestValidateRollout: a Rollout is refused at admission naming the field when the object alone
// is wrong, when it rebases onto a class that does not exist, or when it selects no Cluster; an
// update that leaves the spec alone (the finalizer, an approval annotation) is not checked again.
func TestValidateRollout(t *testing.T) {
	rollout := func(change map[string]any, stages ...map[string]any) map[string]any {
		if len(stages) == 0 {
			stages = []map[string]any{{"name": "all"}}
		}
		return map[string]any{"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
			"metadata": map[string]any{"name": "r", "namespace": "fleet"},
			"spec":     map[string]any{"clusters": map[string]any{"selector": map[string]any{}}, "change": change, "stages": stages}}
	}
	byStrategy := func(name string) map[string]any {
		r := rollout(map[string]any{"version": "v1.35.0"})
		spec := r["spec"].(map[string]any)
		delete(spec, "stages")
		spec["strategyRef"] = map[string]any{"name": name}
		return r
	}
	standard := &rolloutv1.RolloutStrategy{ObjectMeta: metav1.ObjectMeta{Name: "standard", Namespace: "fleet"},
		Spec: rolloutv1.RolloutStrategySpec{Stages: []rolloutv1.Stage{{Name: "all"}}}}
	some := []clusterv1.Cluster{{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "fleet"}}}
	gold := &clusterv1.ClusterClass{ObjectMeta: metav1.ObjectMeta{Name: "gold"}}
	for _, tc := range []struct {
		name     string
		reads    *fakeReads
		obj, old map[string]any
		field    string // "" allowed
	}{
		{"good", &fakeReads{clusters: some}, rollout(map[string]any{"version": "v1.35.0"}), nil, ""},
		{"bad version", &fakeReads{clusters: some}, rollout(map[string]any{"version": "1.35"}), nil, "spec.change.version"},
		{"no change", &fakeReads{clusters: some}, rollout(map[string]any{}), nil, "spec.change"},
		{"two ways to pick a stage", &fakeReads{clusters: some}, rollout(map[string]any{"version": "v1.35.0"},
			map[string]any{"name": "a", "count": 1, "percent": 5}), nil, "spec.stages[0]"},
		{"impossible window", &fakeReads{clusters: some}, func() map[string]any {
			r := rollout(map[string]any{"version": "v1.35.0"})
			r["spec"].(map[string]any)["maintenanceWindows"] = []any{"Sat 02:00-06:00 Nowhere/City"}
			return r
		}(), nil, "spec.maintenanceWindows[0]"},
		{"unknown class", &fakeReads{clusters: some, class: gold}, rollout(map[string]any{"class": "silver"}), nil, "spec.change.class"},
		{"known class", &fakeReads{clusters: some, class: gold}, rollout(map[string]any{"class": "gold"}), nil, ""},
		{"selects nothing", &fakeReads{}, rollout(map[string]any{"version": "v1.35.0"}), nil, "spec.clusters.selector"},
		{"spec unchanged on update", &fakeReads{}, rollout(map[string]any{"version": "v1.35.0"}), rollout(map[string]any{"version": "v1.35.0"}), ""},
		{"a strategy", &fakeReads{clusters: some, strategy: standard}, byStrategy("standard"), nil, ""},
		{"an unknown strategy", &fakeReads{clusters: some, strategy: standard}, byStrategy("fast"), nil, "spec.strategyRef.name"},
		{"stages beside a strategy", &fakeReads{clusters: some, strategy: standard}, func() map[string]any {
			r := byStrategy("standard")
			r["spec"].(map[string]any)["stages"] = []any{map[string]any{"name": "all"}}
			return r
		}(), nil, "spec.stages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			op := admissionv1.Create
			var old any
			if tc.old != nil {
				op, old = admissionv1.Update, tc.old
			}
			resp := call(t, &Server{Reads: tc.reads}, PathValidateRollout, op, tc.obj, old)
			if tc.field == "" {
				assert.True(t, resp.Allowed, "%v", resp.Result)
				return
			}
			assert.False(t, resp.Allowed)
			assert.Contains(t, resp.Result.Message, tc.field)
		})
	}
}

// TestValidateRolloutStrategy: a RolloutStrategy is checked as a Rollout's own stages and windows.
func TestValidateRolloutStrategy(t *testing.T) {
	strategy := func(stages []any, windows ...any) map[string]any {
		return map[string]any{"apiVersion": "topoflow.dev/v1alpha1", "kind": "RolloutStrategy",
			"metadata": map[string]any{"name": "s", "namespace": "fleet"},
			"spec":     map[string]any{"stages": stages, "maintenanceWindows": windows}}
	}
	ok := call(t, &Server{}, PathValidateRolloutStrategy, admissionv1.Create, strategy([]any{map[string]any{"name": "canary", "count": 1}, map[string]any{"name": "rest"}}, "Sat 02:00-06:00 UTC"), nil)
	assert.True(t, ok.Allowed, "%v", ok.Result)
	for field, obj := range map[string]map[string]any{
		"spec.stages":                strategy(nil),
		"spec.stages[0]":             strategy([]any{map[string]any{"name": "all"}, map[string]any{"name": "rest"}}),
		"spec.maintenanceWindows[0]": strategy([]any{map[string]any{"name": "all"}}, "Sat"),
	} {
		resp := call(t, &Server{}, PathValidateRolloutStrategy, admissionv1.Update, obj, obj)
		assert.False(t, resp.Allowed, field)
		assert.Contains(t, resp.Result.Message, field)
	}
}
