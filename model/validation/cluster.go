package validation

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/Masterminds/semver/v3"
	blang "github.com/blang/semver/v4"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/variables"
)

// SkipVersionCheckAnnotation on a Cluster turns off the version upgrade checks (Cluster API's
// escape hatch for operators who know better).
const SkipVersionCheckAnnotation = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"

// Cluster validates a managed Cluster on create (old == nil) or update, against its class (nil
// when not known: the class-dependent checks are skipped) and, on update, the old class (for a
// rebase; nil when the class did not change). Paths are the v1beta2 ones Cluster API v1.14's
// Cluster webhook reports (webhooks admission Cluster.validate): a MachineDeployment or
// MachinePool of the topology is named by its name where the webhook keys it so, by its index
// where the webhook (or the CRD schema, which refuses first) indexes it.
func Cluster(c, old *clusterv1.Cluster, class, oldClass *clusterv1.ClusterClass) field.ErrorList {
	spec := field.NewPath("spec")
	errs := clusterBasics(c, spec)
	topo := &c.Spec.Topology
	tp := spec.Child("topology")
	if !topo.IsDefined() {
		if old != nil && old.Spec.Topology.IsDefined() {
			errs = append(errs, field.Forbidden(tp, "spec.topology cannot be removed from a managed Cluster"))
		}
		return errs
	}
	if old == nil {
		if c.Spec.InfrastructureRef.IsDefined() {
			errs = append(errs, field.Forbidden(spec.Child("infrastructureRef"), "must not be set when spec.topology is set: the topology creates the infrastructure cluster"))
		}
		if c.Spec.ControlPlaneRef.IsDefined() {
			errs = append(errs, field.Forbidden(spec.Child("controlPlaneRef"), "must not be set when spec.topology is set: the topology creates the control plane"))
		}
	}
	if old != nil && !old.Spec.Topology.IsDefined() {
		errs = append(errs, field.Forbidden(tp, "an unmanaged Cluster cannot be given a topology"))
	}
	classRef := tp.Child("classRef")
	if topo.ClassRef.Name == "" {
		// The path of Cluster API's defaulting webhook, which refuses it before validation runs.
		errs = append(errs, field.Required(classRef.Child("name"), ""))
	}
	version, err := ParseVersion(topo.Version)
	switch {
	case topo.Version == "":
		// Never set (defaulting leaves an empty version empty, see DefaultCluster).
		errs = append(errs, field.Required(tp.Child("version"), "a Kubernetes version such as v1.31.2"))
	case err != nil:
		errs = append(errs, field.Invalid(tp.Child("version"), topo.Version, err.Error()))
	}
	if ns := topo.ClassRef.Namespace; ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		errs = append(errs, field.Invalid(classRef.Child("namespace"), ns, "must be a namespace name"))
	}
	errs = append(errs, workerNames(topo, tp.Child("workers"))...)
	errs = append(errs, topologyMetadata(topo, tp)...)
	errs = append(errs, topologyTaints(topo, tp)...)
	errs = append(errs, upgradeConcurrency(c)...)
	errs = append(errs, autoscalerAndReplicas(topo, class, tp)...)

	if class != nil {
		errs = append(errs, againstClass(topo, class, tp)...)
		if len(class.Spec.KubernetesVersions) > 0 && !slices.Contains(class.Spec.KubernetesVersions, topo.Version) {
			// Cluster API's ValidateClusterForClusterClass: compared as written.
			errs = append(errs, field.Invalid(tp.Child("version"), topo.Version, "version must match one of the versions defined in the ClusterClass"))
		}
	}
	if old != nil && old.Spec.Topology.IsDefined() {
		if version != nil && !skipVersionCheck(c) {
			errs = append(errs, versionUpdate(old.Spec.Topology.Version, topo.Version, class, tp.Child("version"))...)
		}
		if oldClass != nil && class != nil && old.Spec.Topology.ClassRef.Name != topo.ClassRef.Name {
			errs = append(errs, rebase(oldClass, class, classRef.Child("name"))...)
		}
	}
	return errs
}

// clusterBasics are the rules of Cluster API's Cluster webhook (webhooks.Cluster.validate) for
// every Cluster, managed or not: the name is a label value and the network's CIDR blocks parse.
func clusterBasics(c *clusterv1.Cluster, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsValidLabelValue(c.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name, "must be a valid label value: "+msg))
	}
	n := &c.Spec.ClusterNetwork
	for _, r := range []struct {
		cidrs []string
		name  string
	}{{n.Pods.CIDRBlocks, "pods"}, {n.Services.CIDRBlocks, "services"}} {
		for i, cidr := range r.cidrs {
			if _, _, err := net.ParseCIDR(cidr); err != nil {
				errs = append(errs, field.Invalid(spec.Child("clusterNetwork", r.name, "cidrBlocks").Index(i), cidr, err.Error()))
			}
		}
	}
	return errs
}

// poolPath is where Cluster API's webhooks name a pool of the topology: by its name (Key), as
// validateTopologyMetadata, validateAutoscalerAnnotationsForCluster, validateMachineHealthChecks
// and DefaultAndValidateVariables do.
func poolPath(tp *field.Path, machinePool bool, name string) *field.Path {
	list := "machineDeployments"
	if machinePool {
		list = "machinePools"
	}
	return tp.Child("workers", list).Key(name)
}

// topologyMetadata: the labels and annotations the topology gives the control plane and the pools
// are valid Kubernetes metadata (Cluster API's validateTopologyMetadata).
func topologyMetadata(topo *clusterv1.Topology, tp *field.Path) field.ErrorList {
	check := func(m clusterv1.ObjectMeta, p *field.Path) field.ErrorList {
		errs := metavalidation.ValidateLabels(m.Labels, p.Child("labels"))
		return append(errs, apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))...)
	}
	errs := check(topo.ControlPlane.Metadata, tp.Child("controlPlane", "metadata"))
	for _, md := range topo.Workers.MachineDeployments {
		errs = append(errs, check(md.Metadata, poolPath(tp, false, md.Name).Child("metadata"))...)
	}
	for _, mp := range topo.Workers.MachinePools {
		errs = append(errs, check(mp.Metadata, poolPath(tp, true, mp.Name).Child("metadata"))...)
	}
	return errs
}

// upgradeConcurrency: the upgrade-concurrency annotation is a whole number of at least 1. The path
// keys the annotation (Cluster API's webhook joins its name to the path with dots, which names no
// field).
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
func autoscalerAndReplicas(topo *clusterv1.Topology, class *clusterv1.ClusterClass, tp *field.Path) field.ErrorList {
	scaled := func(a map[string]string) bool {
		_, min := a[labels.AutoscalerMinSize]
		_, max := a[labels.AutoscalerMaxSize]
		return min || max
	}
	var errs field.ErrorList
	for _, md := range topo.Workers.MachineDeployments {
		if md.Replicas == nil {
			continue
		}
		p := poolPath(tp, false, md.Name).Child("replicas")
		if scaled(md.Metadata.Annotations) {
			errs = append(errs, field.Invalid(p, *md.Replicas, "must not be set when the MachineDeployment's topology metadata has the cluster autoscaler's min/max size annotations"))
		}
		if class != nil {
			if mdc := machineDeploymentClass(class, md.Class); mdc != nil && scaled(mdc.Metadata.Annotations) {
				errs = append(errs, field.Invalid(p, *md.Replicas, fmt.Sprintf("must not be set when MachineDeploymentClass %q has the cluster autoscaler's min/max size annotations", md.Class)))
			}
		}
	}
	return errs
}

// machineDeploymentClass and machinePoolClass find a pool class by name (nil when the class has
// none).
func machineDeploymentClass(class *clusterv1.ClusterClass, name string) *clusterv1.MachineDeploymentClass {
	for i := range class.Spec.Workers.MachineDeployments {
		if class.Spec.Workers.MachineDeployments[i].Class == name {
			return &class.Spec.Workers.MachineDeployments[i]
		}
	}
	return nil
}

func machinePoolClass(class *clusterv1.ClusterClass, name string) *clusterv1.MachinePoolClass {
	for i := range class.Spec.Workers.MachinePools {
		if class.Spec.Workers.MachinePools[i].Class == name {
			return &class.Spec.Workers.MachinePools[i]
		}
	}
	return nil
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

// workerNames: pool names are set, unique within their kind and usable as label values (Cluster
// API's check.MachineDeploymentTopologiesAreValidAndDefinedInClusterClass, by index).
func workerNames(topo *clusterv1.Topology, p *field.Path) field.ErrorList {
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

// healthCheckDefined is Cluster API v1.14's IsDefined of a health check (of a class or a
// topology): its checks or its remediation set.
func healthCheckDefined(checks, remediation any) bool {
	return !reflect.ValueOf(checks).IsZero() || !reflect.ValueOf(remediation).IsZero()
}

// againstClass: worker classes exist, health checks that are enabled are defined, and variables
// (after defaulting) match the class's definitions.
func againstClass(topo *clusterv1.Topology, class *clusterv1.ClusterClass, tp *field.Path) field.ErrorList {
	var errs field.ErrorList
	// A health check enabled explicitly must be defined by the topology or the class (Cluster
	// API's validateMachineHealthChecks). Its path names the field, enabled (the webhook says
	// "enable").
	enabled := func(e *bool) bool { return e != nil && *e }
	cp := &topo.ControlPlane.HealthCheck
	if enabled(cp.Enabled) && !healthCheckDefined(cp.Checks, cp.Remediation) &&
		!healthCheckDefined(class.Spec.ControlPlane.HealthCheck.Checks, class.Spec.ControlPlane.HealthCheck.Remediation) {
		errs = append(errs, field.Forbidden(tp.Child("controlPlane", "healthCheck", "enabled"), "neither the topology nor the ClusterClass defines a MachineHealthCheck"))
	}
	for i, md := range topo.Workers.MachineDeployments {
		mdc := machineDeploymentClass(class, md.Class)
		if mdc == nil {
			errs = append(errs, field.Invalid(tp.Child("workers", "machineDeployments").Index(i).Child("class"), md.Class,
				fmt.Sprintf("MachineDeploymentClass is not defined in ClusterClass %s/%s", class.Namespace, class.Name)))
			continue
		}
		if enabled(md.HealthCheck.Enabled) && !healthCheckDefined(md.HealthCheck.Checks, md.HealthCheck.Remediation) &&
			!healthCheckDefined(mdc.HealthCheck.Checks, mdc.HealthCheck.Remediation) {
			errs = append(errs, field.Forbidden(poolPath(tp, false, md.Name).Child("healthCheck", "enabled"),
				"neither the topology nor the MachineDeploymentClass defines a MachineHealthCheck"))
		}
	}
	for i, mp := range topo.Workers.MachinePools {
		if machinePoolClass(class, mp.Class) == nil {
			errs = append(errs, field.Invalid(tp.Child("workers", "machinePools").Index(i).Child("class"), mp.Class,
				fmt.Sprintf("MachinePoolClass is not defined in ClusterClass %s/%s", class.Namespace, class.Name)))
		}
	}
	defs, err := variables.Definitions(class)
	if err != nil {
		return append(errs, field.Invalid(tp.Child("classRef", "name"), topo.ClassRef.Name, err.Error()))
	}
	cache := variables.NewCache(defs)
	vp := tp.Child("variables")
	values, derrs := cache.Default(topo.Variables, vp)
	errs = append(errs, derrs...)
	errs = append(errs, cache.Validate(values, vp, true)...)
	overrides := func(o []clusterv1.ClusterVariable, p *field.Path) {
		defaulted, derrs := cache.DefaultOverrides(o, p)
		errs = append(errs, derrs...)
		errs = append(errs, cache.Validate(defaulted, p, false)...)
	}
	overrides(topo.ControlPlane.Variables.Overrides, tp.Child("controlPlane", "variables", "overrides"))
	for _, md := range topo.Workers.MachineDeployments {
		overrides(md.Variables.Overrides, poolPath(tp, false, md.Name).Child("variables", "overrides"))
	}
	for _, mp := range topo.Workers.MachinePools {
		overrides(mp.Variables.Overrides, poolPath(tp, true, mp.Name).Child("variables", "overrides"))
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
	chained := class != nil && (len(class.Spec.KubernetesVersions) > 0 || class.Spec.Upgrade.External.GenerateUpgradePlanExtension != "")
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
	if oldClass.Spec.Infrastructure.TemplateRef.IsDefined() != class.Spec.Infrastructure.TemplateRef.IsDefined() {
		errs = append(errs, incompatible("one has an infrastructure template and the other not"))
	}
	if oldClass.Spec.ControlPlane.MachineInfrastructure.TemplateRef.IsDefined() != class.Spec.ControlPlane.MachineInfrastructure.TemplateRef.IsDefined() {
		errs = append(errs, incompatible("one has control plane machines and the other not"))
	}
	return errs
}
