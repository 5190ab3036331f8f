package rollout

import (
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/validation"
)

// Validate checks what a Rollout alone decides (admission refuses it, naming the field); what
// depends on the Clusters is checked when the rollout starts (Check). A Rollout either carries
// its stages, failure budget and windows or names a RolloutStrategy for them (Resolve).
func Validate(r *rolloutv1.Rollout) field.ErrorList {
	spec := field.NewPath("spec")
	errs := selector(&r.Spec.Clusters.Selector, spec.Child("clusters", "selector"))
	errs = append(errs, change(r.Spec.Change, spec.Child("change"))...)
	if r.Spec.StrategyRef == nil {
		return append(errs, shape(r.Spec.Stages, r.Spec.FailureBudget, r.Spec.MaintenanceWindows, spec)...)
	}
	if r.Spec.StrategyRef.Name == "" {
		errs = append(errs, field.Required(spec.Child("strategyRef", "name"), "the RolloutStrategy's name"))
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"stages", len(r.Spec.Stages) > 0}, {"failureBudget", r.Spec.FailureBudget != 0}, {"maintenanceWindows", len(r.Spec.MaintenanceWindows) > 0}} {
		if f.set {
			errs = append(errs, field.Forbidden(spec.Child(f.name), "set by the RolloutStrategy "+r.Spec.StrategyRef.Name+" (spec.strategyRef); set one or the other"))
		}
	}
	return errs
}

// ValidateStrategy checks a RolloutStrategy as Validate checks a Rollout's own stages, failure
// budget and windows.
func ValidateStrategy(s *rolloutv1.RolloutStrategy) field.ErrorList {
	return shape(s.Spec.Stages, s.Spec.FailureBudget, s.Spec.MaintenanceWindows, field.NewPath("spec"))
}

// Resolved is a Rollout's spec with its RolloutStrategy's stages, failure budget and windows
// (Resolve), or why it cannot have them (Invalid: the strategy is missing or invalid).
type Resolved struct {
	Spec    rolloutv1.RolloutSpec `json:"spec"`
	Invalid string                `json:"invalid,omitempty"`
}

// Resolve is a Rollout's spec with its strategy's stages, failure budget and windows (strategy nil:
// the spec as it is).
func Resolve(spec rolloutv1.RolloutSpec, strategy *rolloutv1.RolloutStrategySpec) rolloutv1.RolloutSpec {
	if strategy != nil {
		spec.Stages, spec.FailureBudget, spec.MaintenanceWindows = strategy.Stages, strategy.FailureBudget, strategy.MaintenanceWindows
	}
	return spec
}

// shape checks the stages, failure budget and maintenance windows under spec.
func shape(stages []rolloutv1.Stage, failureBudget int32, windows []string, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(stages) == 0 {
		errs = append(errs, field.Required(spec.Child("stages"), "at least one stage (or spec.strategyRef)"))
	}
	names := map[string]bool{}
	for i, s := range stages {
		p := spec.Child("stages").Index(i)
		if names[s.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), s.Name))
		}
		names[s.Name] = true
		errs = append(errs, stage(s, p)...)
		if takesAll(s) && i < len(stages)-1 {
			errs = append(errs, field.Invalid(p, s.Name, "takes every remaining Cluster (no selector, count or percent), so the stages after it would be empty; only the last stage may"))
		}
	}
	if failureBudget < 0 {
		errs = append(errs, field.Invalid(spec.Child("failureBudget"), failureBudget, "must not be negative"))
	}
	for i, w := range windows {
		if _, err := ParseWindow(w); err != nil {
			errs = append(errs, field.Invalid(spec.Child("maintenanceWindows").Index(i), w, err.Error()))
		}
	}
	return errs
}

func selector(s *metav1.LabelSelector, p *field.Path) field.ErrorList {
	if _, err := metav1.LabelSelectorAsSelector(s); err != nil {
		return field.ErrorList{field.Invalid(p, s, err.Error())}
	}
	return nil
}

func change(c rolloutv1.Change, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.Version == "" && c.Class == "" && c.ClassRevision == "" && c.Topology == nil {
		errs = append(errs, field.Required(p, "one of version, class, classRevision or topology"))
	}
	if c.ClassRevision != "" {
		if _, err := revision.Number(c.ClassRevision); err != nil {
			errs = append(errs, field.Invalid(p.Child("classRevision"), c.ClassRevision, err.Error()))
		}
		if c.Class != "" {
			errs = append(errs, field.Forbidden(p.Child("classRevision"),
				"cannot be combined with class: a rebase onto another class and a move between revisions of the Cluster's class contradict"))
		}
	}
	if c.Version != "" {
		if _, err := validation.ParseVersion(c.Version); err != nil {
			errs = append(errs, field.Invalid(p.Child("version"), c.Version, err.Error()))
		}
	}
	if c.Topology != nil {
		var m map[string]any
		if err := json.Unmarshal(c.Topology.Raw, &m); err != nil || m == nil {
			errs = append(errs, field.Invalid(p.Child("topology"), string(c.Topology.Raw), "must be an object of spec.topology fields"))
		}
		for _, k := range []string{"version", "class"} {
			if _, ok := m[k]; ok {
				errs = append(errs, field.Forbidden(p.Child("topology", k), fmt.Sprintf("set change.%s instead", k)))
			}
		}
	}
	return errs
}

func stage(s rolloutv1.Stage, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	if s.Selector != nil {
		set++
		errs = append(errs, selector(s.Selector, p.Child("selector"))...)
	}
	if s.Count != nil {
		set++
		if *s.Count < 1 {
			errs = append(errs, field.Invalid(p.Child("count"), *s.Count, "must be at least 1"))
		}
	}
	if s.Percent != nil {
		set++
		if *s.Percent < 1 || *s.Percent > 100 {
			errs = append(errs, field.Invalid(p.Child("percent"), *s.Percent, "must be 1 to 100"))
		}
	}
	if set > 1 {
		errs = append(errs, field.Invalid(p, s.Name, "set at most one of selector, count and percent"))
	}
	if s.MaxConcurrent < 0 {
		errs = append(errs, field.Invalid(p.Child("maxConcurrent"), s.MaxConcurrent, "must be at least 1"))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"soakAfterCluster", s.SoakAfterCluster.Duration}, {"soakAfterStage", s.SoakAfterStage.Duration}} {
		if d.v < 0 {
			errs = append(errs, field.Invalid(p.Child(d.name), d.v.String(), "must not be negative"))
		}
	}
	if s.ProgressDeadline != nil && s.ProgressDeadline.Duration <= 0 {
		errs = append(errs, field.Invalid(p.Child("progressDeadline"), s.ProgressDeadline.Duration.String(), "must be positive"))
	}
	return errs
}

func takesAll(s rolloutv1.Stage) bool { return s.Selector == nil && s.Count == nil && s.Percent == nil }
