package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// The entry points of the callers that still hold v1beta1 objects (issue #37): the admission
// webhooks on a server that serves only v1beta1. Each converts its input to the hub with package
// conversion (the conversion the worker's API client reads objects with, Cluster API's) and calls
// the hub function of the same name without the suffix, as Cluster API v1.14's API server
// converts a v1beta1 request before its v1beta2 webhooks see it: so errors name v1beta2 paths.
// The checks of v1beta1 input that the hub cannot make (what the conversion drops) are here, and
// only here. An object that does not convert is a field error, never a nil hub object: the
// request's own is invalid (unconverted), one read from the server an internal error (stored).
// Each function is deleted once its callers are ported.

// ClusterV1Beta1 is Cluster of v1beta1 objects, with the v1beta1-only checks (v1beta1Cluster).
// When c does not convert, the v1beta1-only errors are the answer (they name the reference the
// conversion refuses); only when they name nothing is the conversion error itself.
func ClusterV1Beta1(c, old *v1beta1.Cluster, class, oldClass *v1beta1.ClusterClass) field.ErrorList {
	only := v1beta1Cluster(c)
	hub, err := conversion.ClusterToHub(c)
	if err != nil {
		if len(only) == 0 {
			only = field.ErrorList{unconverted(field.NewPath("spec"), err)}
		}
		return only
	}
	var errs field.ErrorList
	hubOld := stored(conversion.ClusterToHub, old, field.NewPath("spec"), "the stored Cluster", &errs)
	classPath := field.NewPath("spec", "topology", "classRef")
	hubClass := stored(conversion.ClusterClassToHub, class, classPath, "the ClusterClass", &errs)
	hubOldClass := stored(conversion.ClusterClassToHub, oldClass, classPath, "the stored Cluster's ClusterClass", &errs)
	if len(errs) > 0 {
		return append(only, errs...)
	}
	return append(Cluster(hub, hubOld, hubClass, hubOldClass), only...)
}

// ClusterClassV1Beta1 is ClusterClass of v1beta1 objects, with the v1beta1-only checks
// (v1beta1ClusterClass).
func ClusterClassV1Beta1(class, old *v1beta1.ClusterClass, clusters []v1beta1.Cluster) field.ErrorList {
	only := v1beta1ClusterClass(class)
	hub, err := conversion.ClusterClassToHub(class)
	if err != nil {
		return append(field.ErrorList{unconverted(field.NewPath("spec"), err)}, only...)
	}
	var errs field.ErrorList
	hubOld := stored(conversion.ClusterClassToHub, old, field.NewPath("spec"), "the stored ClusterClass", &errs)
	var hubClusters []clusterv1.Cluster
	for i := range clusters {
		c := &clusters[i]
		if u := stored(topologyOf, c, field.NewPath("spec"), fmt.Sprintf("Cluster %s/%s, which uses the class,", c.Namespace, c.Name), &errs); u != nil {
			hubClusters = append(hubClusters, *u)
		}
	}
	if len(errs) > 0 {
		return append(errs, only...)
	}
	return append(ClusterClass(hub, hubOld, hubClusters), only...)
}

// VariablesV1Beta1 is Variables of v1beta1 definitions (a DiscoverVariables answer), and the
// definitions on the hub when they are valid.
func VariablesV1Beta1(vs []v1beta1.ClusterClassVariable, p *field.Path) ([]clusterv1.ClusterClassVariable, field.ErrorList) {
	hub, err := conversion.ClusterClassVariablesToHub(vs)
	if err != nil {
		return nil, field.ErrorList{unconverted(p, err)}
	}
	if errs := Variables(hub, p); len(errs) > 0 {
		return nil, errs
	}
	return hub, nil
}

// VersionAgainstRunningV1Beta1 is VersionAgainstRunning of v1beta1 Clusters.
func VersionAgainstRunningV1Beta1(c, old *v1beta1.Cluster, running upgrade.Input) field.ErrorList {
	hub, err := topologyOf(c)
	if err != nil {
		return field.ErrorList{unconverted(field.NewPath("spec"), err)}
	}
	var errs field.ErrorList
	hubOld := stored(topologyOf, old, field.NewPath("spec"), "the stored Cluster", &errs)
	if len(errs) > 0 {
		return errs
	}
	return VersionAgainstRunning(hub, hubOld, running)
}

// ClusterTaintsV1Beta1 is ClusterTaints of a v1beta1 Cluster.
func ClusterTaintsV1Beta1(c *v1beta1.Cluster, gates Gates) field.ErrorList {
	hub, err := topologyOf(c)
	if err != nil {
		return field.ErrorList{unconverted(field.NewPath("spec"), err)}
	}
	return ClusterTaints(hub, gates)
}

// ClassTaintsV1Beta1 is ClassTaints of a v1beta1 ClusterClass.
func ClassTaintsV1Beta1(class *v1beta1.ClusterClass, gates Gates) field.ErrorList {
	hub, err := conversion.ClusterClassToHub(class)
	if err != nil {
		return field.ErrorList{unconverted(field.NewPath("spec"), err)}
	}
	return ClassTaints(hub, gates)
}

// topologyOf is the hub form of a Cluster's metadata and topology: all that ClusterClass reads of
// the Clusters using it, and VersionAgainstRunning and ClusterTaints of theirs (nil is nil). It
// converts the Cluster without its references and status, so a reference that does not parse
// cannot fail it (that is Cluster's to report); what still can is the conversion data in its
// annotations, or a variable value that is not JSON.
func topologyOf(c *v1beta1.Cluster) (*clusterv1.Cluster, error) {
	if c == nil {
		return nil, nil
	}
	return conversion.ClusterToHub(&v1beta1.Cluster{ObjectMeta: c.ObjectMeta, Spec: v1beta1.ClusterSpec{Topology: c.Spec.Topology}})
}

// unconverted is the error of a request's object that does not convert to v1beta2, at p: Cluster
// API's API server refuses such a request before its webhooks run.
func unconverted(p *field.Path, err error) *field.Error {
	return field.Invalid(p, field.OmitValueType{}, fmt.Sprintf("does not convert to v1beta2: %v", err))
}

// stored converts in, an object the webhook read from the server (what names it), to the hub
// with toHub (nil is nil). One that does not convert is the server's error, not the request's:
// an internal error at p, added to errs.
func stored[T, H any](toHub func(*T) (*H, error), in *T, p *field.Path, what string, errs *field.ErrorList) *H {
	out, err := toHub(in)
	if err != nil {
		*errs = append(*errs, field.InternalError(p, fmt.Errorf("%s: %w", what, err)))
		return nil
	}
	return out
}

// v1beta1Cluster holds the rules of a v1beta1 Cluster on what the conversion to v1beta2 drops:
//   - a reference's namespace, which must be the Cluster's (Cluster API's v1beta1 webhook rule;
//     v1beta2 references have none);
//   - a reference's apiVersion, which must be a group version (v1beta2 keeps its group only,
//     and the conversion fails without one).
//
// A variable value's deprecated definitionFrom is not refused: Cluster API v1.11+'s conversion
// drops it (Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable) before its v1beta2
// webhooks run, as the worker's hub read drops it.
func v1beta1Cluster(c *v1beta1.Cluster) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for _, r := range []struct {
		ref  *corev1.ObjectReference
		name string
	}{{c.Spec.InfrastructureRef, "infrastructureRef"}, {c.Spec.ControlPlaneRef, "controlPlaneRef"}} {
		if r.ref == nil {
			continue
		}
		if r.ref.Namespace != "" && r.ref.Namespace != c.Namespace {
			errs = append(errs, field.Invalid(spec.Child(r.name, "namespace"), r.ref.Namespace, "must match metadata.namespace"))
		}
		if r.ref.APIVersion != "" {
			if _, err := schema.ParseGroupVersion(r.ref.APIVersion); err != nil {
				errs = append(errs, field.Invalid(spec.Child(r.name, "apiVersion"), r.ref.APIVersion, err.Error()))
			}
		}
	}
	return errs
}

// v1beta1ClusterClass holds the rule of a v1beta1 ClusterClass on what the conversion to v1beta2
// drops: a Runtime Extension handler set to "" (spec.upgrade.external without its
// generateUpgradePlanExtension, an external patch's handler written empty), which v1beta2 reads as
// not set and v1beta1's schema refuses (MinLength, MinProperties). Paths are v1beta1's.
func v1beta1ClusterClass(class *v1beta1.ClusterClass) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if u := class.Spec.Upgrade; u != nil && u.External != nil && u.External.GenerateUpgradePlanExtension == "" {
		errs = append(errs, handlerName("", spec.Child("upgrade", "external", "generateUpgradePlanExtension"))...)
	}
	for i, p := range class.Spec.Patches {
		ext := p.External
		if ext == nil {
			continue
		}
		for _, h := range []struct {
			field string
			name  *string
		}{{"generateExtension", ext.GenerateExtension}, {"validateExtension", ext.ValidateExtension}, {"discoverVariablesExtension", ext.DiscoverVariablesExtension}} {
			if h.name != nil && *h.name == "" {
				errs = append(errs, handlerName("", spec.Child("patches").Index(i).Child("external", h.field))...)
			}
		}
	}
	return errs
}
