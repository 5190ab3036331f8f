package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// The entry points of the callers that still hold v1beta1 objects (issue #37). Each converts its
// input with adapt and calls the hub function of the same name without the suffix, as Cluster API
// v1.14's API server converts a v1beta1 request before its v1beta2 webhooks see it: so errors
// name v1beta2 paths. The checks of v1beta1 input that the hub cannot make (what the conversion
// drops) are here, and only here. Each function is deleted once its callers are ported.

// ClusterV1Beta1 is Cluster of v1beta1 objects, with the v1beta1-only checks (v1beta1Cluster).
func ClusterV1Beta1(c, old *v1beta1.Cluster, class, oldClass *v1beta1.ClusterClass) field.ErrorList {
	only := v1beta1Cluster(c)
	hub, err := adapt.ClusterToHub(c)
	if err != nil {
		return only // a reference that does not convert, which v1beta1Cluster names
	}
	hubOld, err := adapt.ClusterToHub(old)
	if err != nil {
		return append(only, field.InternalError(field.NewPath("spec"), fmt.Errorf("the stored Cluster: %w", err)))
	}
	return append(Cluster(hub, hubOld, adapt.ClusterClassToHub(class), adapt.ClusterClassToHub(oldClass)), only...)
}

// ClusterClassV1Beta1 is ClusterClass of v1beta1 objects, with the v1beta1-only checks
// (v1beta1ClusterClass).
func ClusterClassV1Beta1(class, old *v1beta1.ClusterClass, clusters []v1beta1.Cluster) field.ErrorList {
	var hubClusters []clusterv1.Cluster
	for i := range clusters {
		hubClusters = append(hubClusters, *topologyOf(&clusters[i]))
	}
	errs := ClusterClass(adapt.ClusterClassToHub(class), adapt.ClusterClassToHub(old), hubClusters)
	return append(errs, v1beta1ClusterClass(class)...)
}

// VariablesV1Beta1 is Variables of v1beta1 definitions.
func VariablesV1Beta1(vs []v1beta1.ClusterClassVariable, p *field.Path) field.ErrorList {
	return Variables(adapt.ClusterClassVariablesToHub(vs), p)
}

// VersionAgainstRunningV1Beta1 is VersionAgainstRunning of v1beta1 Clusters.
func VersionAgainstRunningV1Beta1(c, old *v1beta1.Cluster, running upgrade.Input) field.ErrorList {
	var hubOld *clusterv1.Cluster
	if old != nil {
		hubOld = topologyOf(old)
	}
	return VersionAgainstRunning(topologyOf(c), hubOld, running)
}

// ClusterTaintsV1Beta1 is ClusterTaints of a v1beta1 Cluster.
func ClusterTaintsV1Beta1(c *v1beta1.Cluster, gates Gates) field.ErrorList {
	return ClusterTaints(topologyOf(c), gates)
}

// ClassTaintsV1Beta1 is ClassTaints of a v1beta1 ClusterClass.
func ClassTaintsV1Beta1(class *v1beta1.ClusterClass, gates Gates) field.ErrorList {
	return ClassTaints(adapt.ClusterClassToHub(class), gates)
}

// topologyOf is the hub form of a Cluster's metadata and topology: all that ClusterClass reads of
// the Clusters using it, and VersionAgainstRunning and ClusterTaints of theirs. Unlike the whole
// Cluster it always converts (a reference that does not parse is Cluster's to report).
func topologyOf(c *v1beta1.Cluster) *clusterv1.Cluster {
	return &clusterv1.Cluster{ObjectMeta: c.ObjectMeta, Spec: clusterv1.ClusterSpec{Topology: adapt.TopologyToHub(c.Spec.Topology)}}
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
