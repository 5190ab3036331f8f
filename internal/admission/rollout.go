package admission

import (
	"context"
	"fmt"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
)

var rolloutKind = schema.GroupKind{Group: rolloutv1.GroupVersion.Group, Kind: "Rollout"}

// validateRollout checks a Rollout on create and on a spec change (not on the finalizer's or
// an annotation's update): what the object alone decides (rollout.Validate), plus a class to
// rebase onto that exists in every namespace selected and a selection that is not empty.
func (s *Server) validateRollout(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	r, err := decodeObject[rolloutv1.Rollout](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the Rollout: %v", err)
	}
	if req.Operation == admissionv1.Update {
		old, err := decodeObject[rolloutv1.Rollout](req.OldObject.Raw)
		if err != nil {
			return badRequest("decoding the old Rollout: %v", err)
		}
		if reflect.DeepEqual(old.Spec, r.Spec) {
			return allowed()
		}
	}
	if req.Namespace != "" {
		r.Namespace = req.Namespace
	}
	errs := rollout.Validate(r)
	if len(errs) == 0 && r.Spec.StrategyRef != nil {
		res, err := s.Reads.ResolveStrategy(ctx, r.Namespace, r.Spec)
		switch {
		case err != nil:
			errs = field.ErrorList{field.InternalError(field.NewPath("spec", "strategyRef"), err)}
		case res.Invalid != "":
			errs = field.ErrorList{field.Invalid(field.NewPath("spec", "strategyRef", "name"), r.Spec.StrategyRef.Name, res.Invalid)}
		}
	}
	if len(errs) == 0 {
		errs = s.rolloutAgainstClusters(ctx, r)
	}
	if len(errs) > 0 {
		return invalid(rolloutKind, r.Name, errs)
	}
	return allowed()
}

func (s *Server) rolloutAgainstClusters(ctx context.Context, r *rolloutv1.Rollout) field.ErrorList {
	namespaces := r.Spec.Clusters.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{r.Namespace}
	}
	var errs field.ErrorList
	if class := r.Spec.Change.Class; class != "" {
		p := field.NewPath("spec", "change", "class")
		for _, ns := range namespaces {
			ok, err := s.Reads.ClassExists(ctx, ns, class)
			if err != nil {
				return field.ErrorList{field.InternalError(p, err)}
			}
			if !ok {
				errs = append(errs, field.Invalid(p, class, fmt.Sprintf("ClusterClass %s/%s not found", ns, class)))
			}
		}
	}
	p := field.NewPath("spec", "clusters", "selector")
	clusters, err := s.Reads.ClustersMatching(ctx, namespaces, &r.Spec.Clusters.Selector)
	switch {
	case err != nil:
		errs = append(errs, field.InternalError(p, err))
	case len(clusters) == 0:
		errs = append(errs, field.Invalid(p, r.Spec.Clusters.Selector.String(), fmt.Sprintf("selects no Cluster in %v", namespaces)))
	}
	return errs
}

var rolloutStrategyKind = schema.GroupKind{Group: rolloutv1.GroupVersion.Group, Kind: "RolloutStrategy"}

// validateRolloutStrategy checks a RolloutStrategy as a Rollout's own stages, failure budget and
// windows are checked. Rollouts already started keep the strategy they read.
func validateRolloutStrategy(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	st, err := decodeObject[rolloutv1.RolloutStrategy](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the RolloutStrategy: %v", err)
	}
	if errs := rollout.ValidateStrategy(st); len(errs) > 0 {
		return invalid(rolloutStrategyKind, st.Name, errs)
	}
	return allowed()
}
