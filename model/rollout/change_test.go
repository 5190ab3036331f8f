package rollout

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/upgrade"
)

func obj(t *testing.T, s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestHolds(t *testing.T) {
	current := `{"classRef":{"name":"gold"},"version":"v1.34.0","variables":[{"name":"a","value":1},{"name":"b","value":{"x":"y"}}],
		"workers":{"machineDeployments":[{"name":"md-0","class":"default","replicas":3}]},"controlPlane":{"replicas":3}}`
	tests := []struct {
		fragment string
		want     bool
	}{
		{`{"version":"v1.34.0"}`, true},
		{`{"version":"v1.35.0"}`, false},
		{`{"classRef":{"name":"gold"},"version":"v1.34.0"}`, true},
		{`{"classRef":{"name":"silver"}}`, false},
		{`{"variables":[{"name":"b","value":{"x":"y"}}]}`, true}, // one entry by name
		{`{"variables":[{"name":"b","value":{"x":"z"}}]}`, false},
		{`{"variables":[{"name":"c","value":1}]}`, false},  // not there yet
		{`{"variables":[{"name":"a","value":1.0}]}`, true}, // numbers by value
		{`{"workers":{"machineDeployments":[{"name":"md-0","replicas":3}]}}`, true},
		{`{"workers":{"machineDeployments":[{"name":"md-0","replicas":4}]}}`, false},
		{`{"controlPlane":{"replicas":3}}`, true},
		{`{"controlPlane":{"replicas":3,"metadata":{"labels":{"x":"y"}}}}`, false},
	}
	for _, tt := range tests {
		if got := Holds(obj(t, current), obj(t, tt.fragment)); got != tt.want {
			t.Errorf("%s: holds = %v, want %v", tt.fragment, got, tt.want)
		}
	}
}

func TestTopologyFragment(t *testing.T) {
	tests := []struct {
		name   string
		change rolloutv1.Change
		want   string
	}{
		{"version, class and a variable", rolloutv1.Change{Version: "v1.35.0", Class: "silver",
			Topology: &apiextensionsv1.JSON{Raw: []byte(`{"variables":[{"name":"a","value":2}]}`)}},
			`{"classRef":{"name":"silver"},"variables":[{"name":"a","value":2}],"version":"v1.35.0"}`},
		{"the class beside a class namespace written in v1beta1", rolloutv1.Change{Class: "silver",
			Topology: &apiextensionsv1.JSON{Raw: []byte(`{"classNamespace":"classes"}`)}},
			`{"classRef":{"name":"silver","namespace":"classes"}}`},
		{"v1beta1 fields in their v1beta2 places", rolloutv1.Change{Topology: &apiextensionsv1.JSON{Raw: []byte(
			`{"workers":{"machineDeployments":[{"name":"md-0","class":"default","nodeDrainTimeout":"90s"}]}}`)}},
			`{"workers":{"machineDeployments":[{"class":"default","deletion":{"nodeDrainTimeoutSeconds":90},"name":"md-0"}]}}`},
		{"a revision move writes no topology", rolloutv1.Change{ClassRevision: "2"}, `{}`},
		{"a null topology", rolloutv1.Change{Version: "v1.35.0", Topology: &apiextensionsv1.JSON{Raw: []byte(`null`)}}, `{"version":"v1.35.0"}`},
	}
	for _, tt := range tests {
		got, err := Topology(tt.change)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if b, _ := json.Marshal(got); string(b) != tt.want {
			t.Errorf("%s: fragment %s, want %s", tt.name, b, tt.want)
		}
	}
	if _, err := Topology(rolloutv1.Change{Topology: &apiextensionsv1.JSON{Raw: []byte(`[1]`)}}); err == nil || !strings.Contains(err.Error(), "spec.change.topology") {
		t.Errorf("a topology that is no object: %v, want an error naming spec.change.topology", err)
	}
}

func TestValidate(t *testing.T) {
	good := func() *rolloutv1.Rollout {
		return &rolloutv1.Rollout{Spec: rolloutv1.RolloutSpec{Change: version("v1.35.0"),
			Stages: []rolloutv1.Stage{{Name: "canary", Count: ptr[int32](1)}, {Name: "rest"}}, MaintenanceWindows: []string{"Sat 02:00-06:00 UTC"}}}
	}
	if errs := Validate(good()); len(errs) > 0 {
		t.Fatalf("a good Rollout refused: %v", errs)
	}
	tests := []struct {
		name  string
		edit  func(r *rolloutv1.Rollout)
		field string
	}{
		{"no change", func(r *rolloutv1.Rollout) { r.Spec.Change = rolloutv1.Change{} }, "spec.change"},
		{"bad version", func(r *rolloutv1.Rollout) { r.Spec.Change.Version = "1.35" }, "spec.change.version"},
		{"version inside topology", func(r *rolloutv1.Rollout) {
			r.Spec.Change.Topology = &apiextensionsv1.JSON{Raw: []byte(`{"version":"v1.35.0"}`)}
		}, "spec.change.topology.version"},
		{"topology not an object", func(r *rolloutv1.Rollout) { r.Spec.Change.Topology = &apiextensionsv1.JSON{Raw: []byte(`[1]`)} }, "spec.change.topology"},
		{"no stages", func(r *rolloutv1.Rollout) { r.Spec.Stages = nil }, "spec.stages"},
		{"duplicate stage", func(r *rolloutv1.Rollout) { r.Spec.Stages[1].Name = "canary" }, "spec.stages[1].name"},
		{"take-all stage before another", func(r *rolloutv1.Rollout) { r.Spec.Stages[0].Count = nil }, "spec.stages[0]"},
		{"count and percent", func(r *rolloutv1.Rollout) { r.Spec.Stages[0].Percent = ptr[int32](10) }, "spec.stages[0]"},
		{"percent over 100", func(r *rolloutv1.Rollout) {
			r.Spec.Stages[0] = rolloutv1.Stage{Name: "canary", Percent: ptr[int32](150)}
		}, "spec.stages[0].percent"},
		{"bad stage selector", func(r *rolloutv1.Rollout) {
			r.Spec.Stages[0] = rolloutv1.Stage{Name: "canary", Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Nearly"}}}}
		}, "spec.stages[0].selector"},
		{"negative soak", func(r *rolloutv1.Rollout) { r.Spec.Stages[1].SoakAfterStage = metav1.Duration{Duration: -1} }, "spec.stages[1].soakAfterStage"},
		{"zero deadline", func(r *rolloutv1.Rollout) { r.Spec.Stages[1].ProgressDeadline = &metav1.Duration{} }, "spec.stages[1].progressDeadline"},
		{"impossible window", func(r *rolloutv1.Rollout) { r.Spec.MaintenanceWindows = []string{"Sat 02:00-06:00 Mars/Olympus"} }, "spec.maintenanceWindows[0]"},
		{"negative budget", func(r *rolloutv1.Rollout) { r.Spec.FailureBudget = -1 }, "spec.failureBudget"},
		{"stages beside a strategy", func(r *rolloutv1.Rollout) {
			r.Spec.StrategyRef, r.Spec.MaintenanceWindows = &rolloutv1.StrategyReference{Name: "standard"}, nil
		}, "spec.stages"},
		{"windows beside a strategy", func(r *rolloutv1.Rollout) {
			r.Spec.StrategyRef, r.Spec.Stages = &rolloutv1.StrategyReference{Name: "standard"}, nil
		},
			"spec.maintenanceWindows"},
		{"a strategy without a name", func(r *rolloutv1.Rollout) {
			r.Spec.StrategyRef, r.Spec.Stages, r.Spec.MaintenanceWindows = &rolloutv1.StrategyReference{}, nil, nil
		}, "spec.strategyRef.name"},
		{"classRevision with class", func(r *rolloutv1.Rollout) {
			r.Spec.Change = rolloutv1.Change{ClassRevision: "2", Class: "gold"}
		}, "spec.change.classRevision"},
		{"classRevision not a number", func(r *rolloutv1.Rollout) { r.Spec.Change = rolloutv1.Change{ClassRevision: "02"} }, "spec.change.classRevision"},
		{"classRevision zero", func(r *rolloutv1.Rollout) { r.Spec.Change = rolloutv1.Change{ClassRevision: "0"} }, "spec.change.classRevision"},
	}
	for _, c := range []rolloutv1.Change{{ClassRevision: "latest"}, {ClassRevision: "3", Version: "v1.35.0"}} {
		r := good()
		r.Spec.Change = c
		if errs := Validate(r); len(errs) > 0 {
			t.Errorf("change %+v refused: %v", c, errs)
		}
	}
	for _, tt := range tests {
		r := good()
		tt.edit(r)
		errs := Validate(r)
		found := false
		for _, e := range errs {
			found = found || e.Field == tt.field
		}
		if !found {
			t.Errorf("%s: errors %v, want one naming %s", tt.name, errs, tt.field)
		}
	}
}

// TestStrategy: a Rollout naming a RolloutStrategy carries no stages of its own; the strategy is
// checked like a Rollout's own, and Resolve gives the Rollout its stages, budget and windows.
func TestStrategy(t *testing.T) {
	r := &rolloutv1.Rollout{Spec: rolloutv1.RolloutSpec{Change: version("v1.35.0"), StrategyRef: &rolloutv1.StrategyReference{Name: "standard"}}}
	if errs := Validate(r); len(errs) > 0 {
		t.Fatalf("a Rollout naming a strategy refused: %v", errs)
	}
	st := &rolloutv1.RolloutStrategy{Spec: rolloutv1.RolloutStrategySpec{Stages: []rolloutv1.Stage{{Name: "canary", Count: ptr[int32](1)}, {Name: "rest"}},
		FailureBudget: 2, MaintenanceWindows: []string{"Sat 02:00-06:00 UTC"}}}
	if errs := ValidateStrategy(st); len(errs) > 0 {
		t.Fatalf("a good strategy refused: %v", errs)
	}
	got := Resolve(r.Spec, &st.Spec)
	if len(got.Stages) != 2 || got.FailureBudget != 2 || len(got.MaintenanceWindows) != 1 || got.Change.Version != "v1.35.0" || got.StrategyRef.Name != "standard" {
		t.Errorf("resolved %+v", got)
	}
	st.Spec.Stages[0].Name, st.Spec.MaintenanceWindows = "rest", []string{"Sat"}
	errs := ValidateStrategy(st)
	if len(errs) != 2 || errs[0].Field != "spec.stages[1].name" || errs[1].Field != "spec.maintenanceWindows[0]" {
		t.Errorf("a strategy with a duplicate stage and a bad window: %v", errs)
	}
}

func TestSettled(t *testing.T) {
	stable := upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, StatusVersion: "v1.35.0", Stable: true},
		Pools: []upgrade.Pool{{Name: "md-0", Exists: true, Version: "v1.35.0"}, {Name: "mp-0", MachinePool: true, Exists: true, Version: "v1.35.0"}}}
	edit := func(f func(in *upgrade.Input)) upgrade.Input {
		in := stable
		in.Pools = append([]upgrade.Pool(nil), stable.Pools...)
		f(&in)
		return in
	}
	tests := []struct {
		name   string
		p      Progress
		change rolloutv1.Change
		why    string // "" when done
	}{
		{"done", Progress{ReconciledFor: 3, Running: stable}, version("v1.35.0"), ""},
		{"older generation reconciled", Progress{ReconciledFor: 2, Running: stable}, version("v1.35.0"), "generation 3"},
		{"condition not true", Progress{Why: "TopologyReconciled is False (ClusterUpgrading: x)", Running: stable}, version("v1.35.0"), "ClusterUpgrading"},
		{"control plane behind", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.ControlPlane.StatusVersion = "v1.34.0" })}, version("v1.35.0"), "control plane"},
		{"control plane rolling", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.ControlPlane.Stable = false })}, rolloutv1.Change{Class: "b"}, "control plane rolling out"},
		{"pool behind", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.Pools[1].Version = "v1.34.0" })}, version("v1.35.0"), "mp-0"},
		{"pool rolling out", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.Pools[0].RollingOut = true })}, version("v1.35.0"), "md-0 rolling out"},
		{"pool's Machines at the version, its replicas not yet settled", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.Pools[0].Converging = true })}, version("v1.35.0"), "md-0 rolling out"},
		{"class change ignores versions", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.Pools[0].Version = "v1.30.0" })}, rolloutv1.Change{Class: "b"}, ""},
		{"revision applied", Progress{ReconciledFor: 3, Running: stable, Pin: "gold-2", Applied: "gold-2"}, rolloutv1.Change{ClassRevision: "2"}, ""},
		{"revision pinned, not applied yet", Progress{ReconciledFor: 3, Running: stable, Pin: "gold-2", Applied: "gold-1"}, rolloutv1.Change{ClassRevision: "2"}, "ClusterClassRevision gold-2"},
		{"revision never applied", Progress{ReconciledFor: 3, Running: stable, Pin: "gold-2"}, rolloutv1.Change{ClassRevision: "2"}, "gold-2"},
		{"no pin at all", Progress{ReconciledFor: 3, Running: stable}, rolloutv1.Change{ClassRevision: "2"}, "applied from"},
		{"revision applied, its pools rolling out", Progress{ReconciledFor: 3, Running: edit(func(in *upgrade.Input) { in.Pools[0].RollingOut = true }), Pin: "gold-2", Applied: "gold-2"},
			rolloutv1.Change{ClassRevision: "2"}, "md-0 rolling out"},
		{"other changes ignore the annotations", Progress{ReconciledFor: 3, Running: stable, Pin: "gold-2", Applied: "gold-1"}, version("v1.35.0"), ""},
	}
	for _, tt := range tests {
		done, why := Settled(tt.p, tt.change, 3)
		if done != (tt.why == "") || !strings.Contains(why, tt.why) {
			t.Errorf("%s: done %v (%q), want %q", tt.name, done, why, tt.why)
		}
	}
}

// TestReconciled: the v1beta2 condition (status.conditions) with its own observedGeneration
// first, else the v1beta1 one (status.deprecated.v1beta1.conditions) with status.observedGeneration.
func TestReconciled(t *testing.T) {
	tests := []struct {
		name string
		c    *clusterv1.Cluster
		gen  int64
		why  string
	}{
		{"v1beta2 condition True", withV1Beta2(cluster(4, 2, "False"), "True", 3), 3, ""},
		{"v1beta2 condition False", withV1Beta2(cluster(4, 4, "True"), "False", 4), 0, "TopologyReconciled is False (ClusterUpgrading: upgrading)"},
		{"v1beta1 condition True", cluster(4, 3, "True"), 3, ""},
		{"v1beta1 condition False", cluster(4, 4, "False"), 0, "TopologyReconciled is False"},
		{"v1beta2 conditions without TopologyReconciled", withOther(cluster(4, 3, "True")), 3, ""},
		{"no condition", cluster(4, 4, ""), 0, "no TopologyReconciled condition yet"},
	}
	for _, tt := range tests {
		gen, why := Reconciled(tt.c)
		if gen != tt.gen || !strings.Contains(why, tt.why) || (tt.why == "") != (why == "") {
			t.Errorf("%s: %d %q, want %d %q", tt.name, gen, why, tt.gen, tt.why)
		}
	}
}

// cluster is a Cluster at generation gen with a v1beta1 TopologyReconciled condition of status
// (none when "") and status.observedGeneration observed.
func cluster(gen, observed int64, status string) *clusterv1.Cluster {
	c := &clusterv1.Cluster{}
	c.Generation = gen
	c.Status.ObservedGeneration = observed
	if status != "" {
		c.Status.Deprecated = &clusterv1.ClusterDeprecatedStatus{V1Beta1: &clusterv1.ClusterV1Beta1DeprecatedStatus{
			Conditions: clusterv1.V1Beta1Conditions{{Type: "TopologyReconciled", Status: corev1.ConditionStatus(status)}}}}
	}
	return c
}

// withV1Beta2 adds the v1beta2 TopologyReconciled condition, of status for generation observed.
func withV1Beta2(c *clusterv1.Cluster, status string, observed int64) *clusterv1.Cluster {
	c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: "TopologyReconciled", Status: metav1.ConditionStatus(status),
		ObservedGeneration: observed, Reason: "ClusterUpgrading", Message: "upgrading"})
	return c
}

// withOther adds a v1beta2 condition other than TopologyReconciled.
func withOther(c *clusterv1.Cluster) *clusterv1.Cluster {
	c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, ObservedGeneration: 1})
	return c
}

func TestNewlyReconciled(t *testing.T) {
	tests := []struct {
		name     string
		old, cur *clusterv1.Cluster
		want     bool
	}{
		{"upgrade finished", cluster(4, 4, "False"), cluster(4, 4, "True"), true},
		{"reconciled for the older generation only", cluster(3, 3, "True"), cluster(4, 3, "True"), false},
		{"written, then reconciled at once", cluster(3, 3, "True"), cluster(4, 4, "True"), true},
		{"already reported", cluster(4, 4, "True"), cluster(4, 4, "True"), false},
		{"not reconciled", cluster(4, 3, "True"), cluster(4, 4, "False"), false},
		{"no condition yet", nil, cluster(1, 0, ""), false},
		{"first seen reconciled", nil, cluster(2, 2, "True"), true},
		{"v1beta2 condition reconciled for the generation", withV1Beta2(cluster(4, 4, ""), "True", 3), withV1Beta2(cluster(4, 4, ""), "True", 4), true},
		{"v1beta2 condition for an older generation", withV1Beta2(cluster(4, 4, ""), "False", 4), withV1Beta2(cluster(4, 4, "True"), "True", 3), false},
		{"revision move applied", pinned(cluster(4, 4, "True"), "gold-2", "gold-1"), pinned(cluster(4, 4, "True"), "gold-2", "gold-2"), true},
		{"revision pinned, not applied yet", pinned(cluster(4, 4, "True"), "gold-1", "gold-1"), pinned(cluster(4, 4, "True"), "gold-2", "gold-1"), false},
		{"revision applied before", pinned(cluster(4, 4, "True"), "gold-2", "gold-2"), pinned(cluster(4, 4, "True"), "gold-2", "gold-2"), false},
		{"revision applied, not reconciled", pinned(cluster(4, 4, "True"), "gold-2", "gold-1"), pinned(cluster(4, 4, "False"), "gold-2", "gold-2"), false},
	}
	for _, tt := range tests {
		if got := NewlyReconciled(tt.old, tt.cur); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// pinned sets a Cluster's revision annotations: pin and applied.
func pinned(c *clusterv1.Cluster, pin, applied string) *clusterv1.Cluster {
	c.Annotations = map[string]string{revision.PinAnnotation: pin, revision.AppliedAnnotation: applied}
	return c
}

func TestWrite(t *testing.T) {
	topo := `{"classRef":{"name":"gold"},"version":"v1.34.0"}`
	tests := []struct {
		name        string
		change      rolloutv1.Change
		annotations map[string]string
		pin         string
		holds       bool
	}{
		{"no revision", version("v1.34.0"), nil, "", true},
		{"pinned to it", rolloutv1.Change{ClassRevision: "2"}, map[string]string{revision.PinAnnotation: "gold-2"}, "gold-2", true},
		{"pinned to another", rolloutv1.Change{ClassRevision: "2"}, map[string]string{revision.PinAnnotation: "gold-1"}, "gold-2", false},
		{"never pinned", rolloutv1.Change{ClassRevision: "1"}, nil, "gold-1", false},
		{"pinned, the topology not held", rolloutv1.Change{ClassRevision: "2", Version: "v1.35.0"}, map[string]string{revision.PinAnnotation: "gold-2"}, "gold-2", false},
	}
	for _, tt := range tests {
		fragment, err := Topology(tt.change)
		if err != nil {
			t.Fatal(err)
		}
		w, err := WriteFor(tt.change, fragment, "gold")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if w.Pin != tt.pin {
			t.Errorf("%s: pin %q, want %q", tt.name, w.Pin, tt.pin)
		}
		if got := w.HeldBy(obj(t, topo), tt.annotations); got != tt.holds {
			t.Errorf("%s: held %v, want %v", tt.name, got, tt.holds)
		}
		ann := w.Annotations("ns/r")
		if ann[ClaimAnnotation] != "ns/r" || (tt.pin != "") != (ann[revision.PinAnnotation] == tt.pin) {
			t.Errorf("%s: annotations %v", tt.name, ann)
		}
	}
	if _, err := WriteFor(rolloutv1.Change{ClassRevision: "latest"}, nil, "gold"); err == nil || !strings.Contains(err.Error(), "resolved") {
		t.Errorf("an unresolved latest: %v, want an error", err)
	}
}
