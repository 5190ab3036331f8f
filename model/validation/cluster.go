package validation

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	blang "github.com/blang/semver/v4"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/variables"
)

// SkipVersionCheckAnnotation on a Cluster turns off the version upgrade checks (Cluster API's
// escape hatch for operators who know better).
const SkipVersionCheckAnnotation = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"

// Cluster validates a managed Cluster on create (old == nil) or update, against its class (nil
// when not known: the class-dependent checks are skipped) and, on update, the old class (for a
// rebase; nil when the class did not change).
func ClusterV1Beta1(c, old *clusterv1.Cluster, class, oldClass *clusterv1.ClusterClass) field.ErrorList {
	spec := field.NewPath("spec")
	errs := clusterBasics(c, spec)
	topo := c.Spec.Topology
	tp := spec.Child("topology")
	if topo == nil {
		if old != nil && old.Spec.Topology != nil {
			errs = append(errs, field.Forbidden(tp, "spec.topology cannot be removed from a managed Cluster"))
		}
		return errs
	}
	if old == nil {
		if c.Spec.InfrastructureRef != nil {
			errs = append(errs, field.Forbidden(spec.Child("infrastructureRef"), "must not be set when spec.topology is set: the topology creates the infrastructure cluster"))
		}
		if c.Spec.ControlPlaneRef != nil {
			errs = append(errs, field.Forbidden(spec.Child("controlPlaneRef"), "must not be set when spec.topology is set: the topology creates the control plane"))
		}
	}
	if old != nil && old.Spec.Topology == nil {
		errs = append(errs, field.Forbidden(tp, "an unmanaged Cluster cannot be given a topology"))
	}
	if topo.Class == "" {
		errs = append(errs, field.Required(tp.Child("class"), ""))
	}
	version, err := ParseVersion(topo.Version)
	switch {
	case topo.Version == "":
		// Never set (defaulting leaves an empty version empty, see DefaultCluster).
		errs = append(errs, field.Required(tp.Child("version"), "a Kubernetes version such as v1.31.2"))
	case err != nil:
		errs = append(errs, field.Invalid(tp.Child("version"), topo.Version, err.Error()))
	}
	if topo.ClassNamespace != "" && len(validation.IsDNS1123Label(topo.ClassNamespace)) > 0 {
		errs = append(errs, field.Invalid(tp.Child("classNamespace"), topo.ClassNamespace, "must be a namespace name"))
	}
	errs = append(errs, workerNames(topo, tp.Child("workers"))...)
	errs = append(errs, topologyMetadata(topo, tp)...)
	errs = append(errs, topologyTaints(topo, tp)...)
	errs = append(errs, upgradeConcurrency(c)...)
	errs = append(errs, autoscalerAndReplicas(c, class, tp)...)

	if class != nil {
		errs = append(errs, againstClass(c, class, tp)...)
		if len(class.Spec.KubernetesVersions) > 0 && !slices.Contains(class.Spec.KubernetesVersions, topo.Version) {
			// Cluster API's ValidateClusterForClusterClass: compared as written.
			errs = append(errs, field.Invalid(tp.Child("version"), topo.Version, "version must match one of the versions defined in the ClusterClass"))
		}
	}
	if old != nil && old.Spec.Topology != nil {
		if version != nil && !skipVersionCheck(c) {
			errs = append(errs, versionUpdate(old.Spec.Topology.Version, topo.Version, class, tp.Child("version"))...)
		}
		if oldClass != nil && class != nil && old.Spec.Topology.Class != topo.Class {
			errs = append(errs, rebase(oldClass, class, tp.Child("class"))...)
		}
	}
	return errs
}

// clusterBasics are the rules of Cluster API's Cluster webhook (webhooks.Cluster.validate) for
// every Cluster, managed or not: the name is a label value, the references stay in the Cluster's
// namespace, and the network's CIDR blocks parse.
func clusterBasics(c *clusterv1.Cluster, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(c.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, "must be a valid label value: "+msg))
	}
	for _, r := range []struct {
		ref  *corev1.ObjectReference
		name string
	}{{c.Spec.InfrastructureRef, "infrastructureRef"}, {c.Spec.ControlPlaneRef, "controlPlaneRef"}} {
		if r.ref != nil && r.ref.Namespace != "" && r.ref.Namespace != c.Namespace {
			errs = append(errs, field.Invalid(spec.Child(r.name, "namespace"), r.ref.Namespace, "must match metadata.namespace"))
		}
	}
	if n := c.Spec.ClusterNetwork; n != nil {
		for _, r := range []struct {
			ranges *clusterv1.NetworkRanges
			name   string
		}{{n.Pods, "pods"}, {n.Services, "services"}} {
			if r.ranges == nil {
				continue
			}
			for i, cidr := range r.ranges.CIDRBlocks {
				if _, _, err := net.ParseCIDR(cidr); err != nil {
					errs = append(errs, field.Invalid(spec.Child("clusterNetwork", r.name, "cidrBlocks").Index(i), cidr, err.Error()))
				}
			}
		}
	}
	return errs
}

// topologyMetadata: the labels and annotations the topology gives the control plane and the pools
// are valid Kubernetes metadata (Cluster API's validateTopologyMetadata).
func topologyMetadata(topo *clusterv1.Topology, tp *field.Path) field.ErrorList {
	check := func(m clusterv1.ObjectMeta, p *field.Path) field.ErrorList {
		errs := metavalidation.ValidateLabels(m.Labels, p.Child("labels"))
		return append(errs, apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))...)
	}
	errs := check(topo.ControlPlane.Metadata, tp.Child("controlPlane", "metadata"))
	if w := topo.Workers; w != nil {
		for i, md := range w.MachineDeployments {
			errs = append(errs, check(md.Metadata, tp.Child("workers", "machineDeployments").Index(i).Child("metadata"))...)
		}
		for i, mp := range w.MachinePools {
			errs = append(errs, check(mp.Metadata, tp.Child("workers", "machinePools").Index(i).Child("metadata"))...)
		}
	}
	return errs
}

// upgradeConcurrency: the upgrade-concurrency annotation is a whole number of at least 1.
func upgradeConcurrency(c *clusterv1.Cluster) field.ErrorList {
	v, ok := c.Annotations[labels.UpgradeConcurrency]
	if !ok {
		return nil
	}
	p := field.NewPath("metadata", "annotations").Key(labels.UpgradeConcurrency)
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, v, "must be a whole number of at least 1")}
	case n < 1:
		return field.ErrorList{field.Invalid(p, v, "value cannot be less than 1")}
	}
	return nil
}

// autoscalerAndReplicas: a MachineDeployment whose size the cluster autoscaler manages (min/max
// size annotations in its topology or its class) must not set replicas (Cluster API's
// validateAutoscalerAnnotationsForCluster).
func autoscalerAndReplicas(c *clusterv1.Cluster, class *clusterv1.ClusterClass, tp *field.Path) field.ErrorList {
	w := c.Spec.Topology.Workers
	if w == nil {
		return nil
	}
	scaled := func(a map[string]string) bool {
		_, min := a[labels.AutoscalerMinSize]
		_, max := a[labels.AutoscalerMaxSize]
		return min || max
	}
	var errs field.ErrorList
	for i, md := range w.MachineDeployments {
		if md.Replicas == nil {
			continue
		}
		p := tp.Child("workers", "machineDeployments").Index(i).Child("replicas")
		if scaled(md.Metadata.Annotations) {
			errs = append(errs, field.Invalid(p, *md.Replicas, "must not be set when the MachineDeployment's topology metadata has the cluster autoscaler's min/max size annotations"))
		}
		if class != nil {
			if mdc := class.MachineDeploymentClass(md.Class); mdc != nil && scaled(mdc.Template.Metadata.Annotations) {
				errs = append(errs, field.Invalid(p, *md.Replicas, fmt.Sprintf("must not be set when MachineDeploymentClass %q has the cluster autoscaler's min/max size annotations", md.Class)))
			}
		}
	}
	return errs
}

// ParseVersion reads a Kubernetes version as Cluster API writes it: "v" and a strict semantic version.
func ParseVersion(v string) (*semver.Version, error) {
	if !strings.HasPrefix(v, "v") {
		return nil, fmt.Errorf(`must be a semantic version with a "v" prefix, such as v1.31.2`)
	}
	sv, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	if err != nil {
		return nil, fmt.Errorf("must be a semantic version such as v1.31.2: %v", err)
	}
	return sv, nil
}

// workerNames: pool names are unique within their kind and usable as label values.
func workerNames(topo *clusterv1.Topology, p *field.Path) field.ErrorList {
	if topo.Workers == nil {
		return nil
	}
	var errs field.ErrorList
	check := func(kind string, i int, name string, seen map[string]bool) {
		np := p.Child(kind).Index(i).Child("name")
		switch {
		case name == "":
			errs = append(errs, field.Required(np, ""))
		case seen[name]:
			errs = append(errs, field.Duplicate(np, name))
		default:
			if msgs := validation.IsValidLabelValue(name); len(msgs) > 0 {
				errs = append(errs, field.Invalid(np, name, strings.Join(msgs, "; ")))
			}
		}
		seen[name] = true
	}
	seen := map[string]bool{}
	for i, md := range topo.Workers.MachineDeployments {
		check("machineDeployments", i, md.Name, seen)
	}
	seen = map[string]bool{}
	for i, mp := range topo.Workers.MachinePools {
		check("machinePools", i, mp.Name, seen)
	}
	return errs
}

// againstClass: worker classes exist, health checks that are enabled are defined, and variables
// (after defaulting) match the class's definitions.
func againstClass(c *clusterv1.Cluster, class *clusterv1.ClusterClass, tp *field.Path) field.ErrorList {
	var errs field.ErrorList
	topo := c.Spec.Topology
	// A health check enabled explicitly must be defined by the topology or the class, "defined" as
	// Cluster API v1.14 sees the v1beta2 form (validateMachineHealthChecks with
	// HealthCheck.IsDefined): a MachineDeployment's strategy.remediation.maxInFlight alone counts.
	enabled := func(m *clusterv1.MachineHealthCheckTopology) bool { return m != nil && m.Enable != nil && *m.Enable }
	if cp := topo.ControlPlane.MachineHealthCheck; enabled(cp) && !class.Spec.ControlPlane.MachineHealthCheck.Defined() && !cp.MachineHealthCheckClass.Defined() {
		errs = append(errs, field.Forbidden(tp.Child("controlPlane", "machineHealthCheck", "enable"), "neither the topology nor the ClusterClass defines a MachineHealthCheck"))
	}
	if w := topo.Workers; w != nil {
		for i, md := range w.MachineDeployments {
			p := tp.Child("workers", "machineDeployments").Index(i)
			mdc := class.MachineDeploymentClass(md.Class)
			if mdc == nil {
				errs = append(errs, field.Invalid(p.Child("class"), md.Class, fmt.Sprintf("MachineDeploymentClass is not defined in ClusterClass %s/%s", class.Namespace, class.Name)))
				continue
			}
			if enabled(md.MachineHealthCheck) && !mdc.HealthCheckDefined() && !md.HealthCheckDefined() {
				errs = append(errs, field.Forbidden(p.Child("machineHealthCheck", "enable"), "neither the topology nor the MachineDeploymentClass defines a MachineHealthCheck"))
			}
		}
		for i, mp := range w.MachinePools {
			if class.MachinePoolClass(mp.Class) == nil {
				errs = append(errs, field.Invalid(tp.Child("workers", "machinePools").Index(i).Child("class"), mp.Class,
					fmt.Sprintf("MachinePoolClass is not defined in ClusterClass %s/%s", class.Namespace, class.Name)))
			}
		}
	}
	defs, err := variables.Definitions(adapt.ClusterClassToHub(class))
	if err != nil {
		return append(errs, field.Invalid(tp.Child("class"), topo.Class, err.Error()))
	}
	cache := variables.NewCache(defs)
	vp := tp.Child("variables")
	values, derrs := cache.Default(adapt.ClusterVariablesToHub(topo.Variables), vp)
	errs = append(errs, derrs...)
	errs = append(errs, adapt.DeprecatedDefinitionFrom(topo.Variables, vp)...)
	errs = append(errs, cache.Validate(values, vp, true)...)
	overrides := func(o []clusterv1.ClusterVariable, p *field.Path) {
		hub, derrs := cache.DefaultOverrides(adapt.ClusterVariablesToHub(o), p)
		errs = append(errs, derrs...)
		errs = append(errs, adapt.DeprecatedDefinitionFrom(o, p)...)
		errs = append(errs, cache.Validate(hub, p, false)...)
	}
	if v := topo.ControlPlane.Variables; v != nil {
		overrides(v.Overrides, tp.Child("controlPlane", "variables", "overrides"))
	}
	if w := topo.Workers; w != nil {
		for i, md := range w.MachineDeployments {
			if md.Variables != nil {
				overrides(md.Variables.Overrides, tp.Child("workers", "machineDeployments").Index(i).Child("variables", "overrides"))
			}
		}
		for i, mp := range w.MachinePools {
			if mp.Variables != nil {
				overrides(mp.Variables.Overrides, tp.Child("workers", "machinePools").Index(i).Child("variables", "overrides"))
			}
		}
	}
	return errs
}

// versionUpdate follows Cluster API's validateTopologyVersionUpdate up to its checks of what runs
// (those are VersionAgainstRunning's): a version that reads the same is no change; a version may
// not go down (pre-releases aside); and unless the class chains upgrades (kubernetesVersions, whose
// gaps the ClusterClass rules refuse, or a GenerateUpgradePlan extension) it may go up by at most
// one minor. Versions are read leniently, as Cluster API reads them here.
func versionUpdate(oldV, newV string, class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	prev, errP := tolerantVersion(oldV)
	next, errN := tolerantVersion(newV)
	if errP != nil || errN != nil || prev.String() == next.String() {
		return nil // an unreadable version is reported where it is set
	}
	if withoutPre(next).LT(withoutPre(prev)) {
		return field.ErrorList{field.Invalid(p, newV, fmt.Sprintf("version cannot be decreased from %s", oldV))}
	}
	chained := class != nil && (len(class.Spec.KubernetesVersions) > 0 || class.Spec.UpgradePlanExtension() != "")
	ceiling := blang.Version{Major: prev.Major, Minor: prev.Minor + 2}
	if !chained && withoutPre(next).GTE(ceiling) {
		return field.ErrorList{field.Invalid(p, newV, fmt.Sprintf("version can be increased by at most one minor (from %s); list the intermediate versions in the ClusterClass's spec.kubernetesVersions (or name a spec.upgrade.external.generateUpgradePlanExtension) to chain an upgrade", oldV))}
	}
	return nil
}

// skipVersionCheck: the escape hatch counts when the annotation is present, whatever its value,
// as in Cluster API.
func skipVersionCheck(c *clusterv1.Cluster) bool {
	_, ok := c.Annotations[SkipVersionCheckAnnotation]
	return ok
}

// rebase: moving to another class keeps the kind and group of every template (bootstrap
// templates excepted), and whether the class has an infrastructure cluster and control plane
// machines.
func rebase(oldClass, class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	incompatible := func(why string) *field.Error {
		return field.Invalid(p, class.Name, fmt.Sprintf("ClusterClass %s is not compatible with %s: %s", class.Name, oldClass.Name, why))
	}
	for _, e := range classUpdate(class, oldClass, nil) {
		errs = append(errs, incompatible(e.Error()))
	}
	if (oldClass.Spec.Infrastructure == nil) != (class.Spec.Infrastructure == nil) {
		errs = append(errs, incompatible("one has an infrastructure template and the other not"))
	}
	if (oldClass.Spec.ControlPlane.MachineInfrastructure == nil) != (class.Spec.ControlPlane.MachineInfrastructure == nil) {
		errs = append(errs, incompatible("one has control plane machines and the other not"))
	}
	return errs
}
