// Package validation checks ClusterClasses and Clusters the way Cluster API's webhooks do, on
// create and on update. Every problem is an apimachinery field error naming the path and value,
// so a bad manifest is rejected with all its problems listed at once.
//
// The rules compute on the v1beta2 hub (model/api/v1beta2) and name v1beta2 paths: Cluster API
// v1.14's webhooks serve v1beta2 only and the API server converts a v1beta1 request before they
// see it. The ...V1Beta1 functions (v1beta1.go) are the v1beta1 callers' adapters, with the few
// checks of v1beta1 input the hub cannot make.
package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/pools"
	"github.com/topoflow/topoflow/model/variables"
)

// ClusterClass validates a ClusterClass on create (old == nil) or update. clusters are the
// Clusters using the class; on update, classes and variables they use cannot be removed. A pool
// class is named by its index where Cluster API's CRD schema or check package reports it so, by
// its class name where its ClusterClass webhook keys it (naming, health checks, taints).
func ClusterClass(class, old *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	s := &class.Spec

	// The infrastructure cluster and control plane machines are optional in topoflow (a class
	// without them generates none); the control plane template is not.
	if r := s.Infrastructure.TemplateRef; r.IsDefined() {
		errs = append(errs, templateRef(r, spec.Child("infrastructure", "templateRef"))...)
	}
	cp := spec.Child("controlPlane")
	errs = append(errs, templateRef(s.ControlPlane.TemplateRef, cp.Child("templateRef"))...)
	if r := s.ControlPlane.MachineInfrastructure.TemplateRef; r.IsDefined() {
		errs = append(errs, templateRef(r, cp.Child("machineInfrastructure", "templateRef"))...)
	}
	if t := s.ControlPlane.Naming.Template; t != "" {
		errs = append(errs, namingTemplate(t, cp.Child("naming", "template"), names.Input{ClusterName: "cluster"})...)
	}
	if t := s.Infrastructure.Naming.Template; t != "" {
		errs = append(errs, namingTemplate(t, spec.Child("infrastructure", "naming", "template"), names.Input{ClusterName: "cluster"})...)
	}
	hc := &s.ControlPlane.HealthCheck
	if healthCheckDefined(hc.Checks, hc.Remediation) && !s.ControlPlane.MachineInfrastructure.TemplateRef.IsDefined() {
		errs = append(errs, field.Forbidden(cp.Child("healthCheck"), "a control plane MachineHealthCheck needs spec.controlPlane.machineInfrastructure"))
	}
	errs = append(errs, healthCheck(hc.Checks, hc.Remediation.TriggerIf, cp.Child("healthCheck"), cp.Child("healthCheck"))...)

	workers := spec.Child("workers")
	seen := map[string]bool{}
	for _, pc := range pools.Classes(class) {
		list := workers.Child(pools.Field(pc.MachinePool))
		p, keyed := list.Index(pc.Index), list.Key(pc.Name)
		key := pools.Kind(pc.MachinePool) + "/" + pc.Name
		if pc.Name == "" {
			errs = append(errs, field.Required(p.Child("class"), "a "+pools.Kind(pc.MachinePool)+"Class needs a name"))
		} else if seen[key] {
			errs = append(errs, field.Duplicate(p.Child("class"), pc.Name))
		}
		seen[key] = true
		errs = append(errs, templateRef(pc.Bootstrap, p.Child("bootstrap", "templateRef"))...)
		errs = append(errs, templateRef(pc.Infrastructure, p.Child("infrastructure", "templateRef"))...)
		if pc.NamingTemplate != "" {
			sample := "md"
			if pc.MachinePool {
				sample = "mp"
			}
			errs = append(errs, namingTemplate(pc.NamingTemplate, keyed.Child("naming", "template"), pools.NamesInput(pc.MachinePool, "cluster", sample))...)
		}
		if h := pc.HealthCheck; h != nil {
			errs = append(errs, healthCheck(h.Checks, h.Remediation.TriggerIf, p.Child("healthCheck"), keyed.Child("healthCheck"))...)
		}
	}

	errs = append(errs, classVariables(class, spec.Child("variables"))...)
	errs = append(errs, classPatches(class, spec.Child("patches"))...)
	errs = append(errs, kubernetesVersions(s.KubernetesVersions)...)
	errs = append(errs, classTaints(class)...)
	if n := s.Upgrade.External.GenerateUpgradePlanExtension; n != "" {
		errs = append(errs, handlerName(n, spec.Child("upgrade", "external", "generateUpgradePlanExtension"))...)
	}

	if old != nil {
		errs = append(errs, classUpdate(class, old, clusters)...)
	}
	return errs
}

// templateRef checks a template reference: apiVersion, kind and name set, the apiVersion a group
// version (the CRD schema's rules, which refuse these before Cluster API's webhook sees them, so
// the paths are the schema's). Its namespace is the class's: v1beta2 has none.
func templateRef(r clusterv1.ClusterClassTemplateReference, p *field.Path) field.ErrorList {
	if !r.IsDefined() {
		return field.ErrorList{field.Required(p, "a template reference is required")}
	}
	var errs field.ErrorList
	if r.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	} else if _, err := schema.ParseGroupVersion(r.APIVersion); err != nil {
		errs = append(errs, field.Invalid(p.Child("apiVersion"), r.APIVersion, err.Error()))
	}
	if r.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	if r.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	return errs
}

func namingTemplate(tmpl string, p *field.Path, in names.Input) field.ErrorList {
	if _, err := names.FromTemplate(tmpl, "", in, names.NewRandom(1)); err != nil {
		return field.ErrorList{field.Invalid(p, tmpl, err.Error())}
	}
	return nil
}

var unhealthyRange = regexp.MustCompile(`^\[[0-9]+-[0-9]+\]$`)

// healthCheck checks a class's health check. The CRD schema's rules (the range's pattern, a
// timeout's minimum, the reserved Machine conditions) name schemaPath, indexed as the API server
// reports them; the webhook's (validateMachineHealthCheckClasses: the startup timeout) and
// topoflow's (a trigger is a limit or a range, not both) name webhookPath, where Cluster API's
// webhook keys a MachineDeploymentClass by its name.
func healthCheck(checks clusterv1.HealthCheckChecks, trigger clusterv1.RemediationTriggerIf, schemaPath, webhookPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if trigger.UnhealthyLessThanOrEqualTo != nil && trigger.UnhealthyInRange != "" {
		errs = append(errs, field.Forbidden(webhookPath.Child("remediation", "triggerIf", "unhealthyInRange"),
			"unhealthyLessThanOrEqualTo and unhealthyInRange are mutually exclusive"))
	}
	if r := trigger.UnhealthyInRange; r != "" && !unhealthyRange.MatchString(r) {
		errs = append(errs, field.Invalid(schemaPath.Child("remediation", "triggerIf", "unhealthyInRange"), r, `want "[min-max]"`))
	}
	if t := checks.NodeStartupTimeoutSeconds; t != nil && *t != 0 && *t < 30 {
		errs = append(errs, field.Invalid(webhookPath.Child("checks", "nodeStartupTimeoutSeconds"), *t, "must be at least 30s (or 0 to disable)"))
	}
	for i, c := range checks.UnhealthyNodeConditions {
		if c.TimeoutSeconds != nil && *c.TimeoutSeconds < 0 {
			errs = append(errs, field.Invalid(schemaPath.Child("checks", "unhealthyNodeConditions").Index(i).Child("timeoutSeconds"), *c.TimeoutSeconds, "must not be negative"))
		}
	}
	for i, c := range checks.UnhealthyMachineConditions {
		// Cluster API's CRD rule (a CEL validation there; topoflow's CRDs carry no list bounds
		// that would keep its cost within the API server's budget, so the webhook checks it).
		if slices.Contains(reservedMachineConditions, c.Type) {
			errs = append(errs, field.Invalid(schemaPath.Child("checks", "unhealthyMachineConditions").Index(i).Child("type"), c.Type,
				"type must not be one of: "+strings.Join(reservedMachineConditions, ", ")))
		}
	}
	return errs
}

// reservedMachineConditions are the Machine conditions a health check must not watch: Cluster
// API sets them from the check's own outcome.
var reservedMachineConditions = []string{"Ready", "Available", "HealthCheckSucceeded", "OwnerRemediated", "ExternallyRemediated"}

func classVariables(class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	if errs := Variables(class.Spec.Variables, p); len(errs) > 0 {
		return errs
	}
	if _, err := variables.Definitions(class); err != nil {
		return field.ErrorList{field.Invalid(p, class.Name, err.Error())}
	}
	return nil
}

// Variables validates variable definitions, written in a ClusterClass or answered by a
// DiscoverVariables handler: names, schemas (each must compile) and defaults (each must satisfy
// its schema). p is where the list is written; a definition is named by its name, as Cluster
// API's ValidateClusterClassVariables names it (by its index while it has none).
func Variables(vs []clusterv1.ClusterClassVariable, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	defs := map[string]variables.Definition{}
	for i, v := range vs {
		np := p.Key(v.Name).Child("name")
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(p.Index(i).Child("name"), ""))
		case strings.HasPrefix(v.Name, "builtin"):
			errs = append(errs, field.Invalid(np, v.Name, `names starting with "builtin" are reserved`))
		case strings.Contains(v.Name, "."):
			errs = append(errs, field.Invalid(np, v.Name, `must not contain "."`))
		case seen[v.Name]:
			errs = append(errs, field.Duplicate(np, v.Name))
		}
		seen[v.Name] = true
		defs[v.Name] = variables.Definition{Name: v.Name, Required: v.Required != nil && *v.Required, Schema: v.Schema.OpenAPIV3Schema}
	}
	if len(errs) > 0 {
		return errs
	}
	cache := variables.NewCacheAt(defs, p)
	if errs := cache.CompileAll(); len(errs) > 0 {
		return errs
	}
	for _, v := range vs {
		if d := v.Schema.OpenAPIV3Schema.Default; d != nil {
			for _, e := range cache.Validate([]clusterv1.ClusterVariable{{Name: v.Name, Value: *d}}, field.NewPath("x"), false) {
				errs = append(errs, field.Invalid(p.Key(v.Name).Child("schema", "openAPIV3Schema", "default"), string(d.Raw), "default does not match the schema: "+e.Detail))
			}
		}
	}
	return errs
}

// builtinVariables are the builtin variable paths a patch's valueFrom.variable may name: the
// builtin objects themselves and their leaves, but not a metadata object as a whole (Cluster API
// v1.14's patch validation, builtinVariables in core/webhooks/admission/patch_validation.go).
var builtinVariables = map[string]bool{
	"builtin": true, "builtin.cluster": true, "builtin.cluster.name": true, "builtin.cluster.namespace": true,
	"builtin.cluster.uid": true, "builtin.cluster.metadata.labels": true, "builtin.cluster.metadata.annotations": true,
	"builtin.cluster.topology": true, "builtin.cluster.topology.classRef.name": true, "builtin.cluster.topology.classRef.namespace": true,
	"builtin.cluster.topology.class": true, "builtin.cluster.topology.classNamespace": true, "builtin.cluster.topology.version": true,
	"builtin.cluster.network": true, "builtin.cluster.network.serviceDomain": true, "builtin.cluster.network.services": true,
	"builtin.cluster.network.pods": true,
	"builtin.controlPlane":         true, "builtin.controlPlane.name": true, "builtin.controlPlane.replicas": true, "builtin.controlPlane.version": true,
	"builtin.controlPlane.metadata.labels": true, "builtin.controlPlane.metadata.annotations": true,
	"builtin.controlPlane.machineTemplate.infrastructureRef.name": true,
}

var poolBuiltins = []string{"", ".class", ".name", ".replicas", ".topologyName", ".version", ".metadata.labels", ".metadata.annotations",
	".bootstrap.configRef.name", ".infrastructureRef.name"}

func init() {
	for _, f := range poolBuiltins {
		builtinVariables["builtin.machineDeployment"+f] = true
		builtinVariables["builtin.machinePool"+f] = true
	}
}

func classPatches(class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	defined := map[string]bool{}
	for _, v := range class.Spec.Variables {
		defined[v.Name] = true
	}
	for _, v := range class.Status.Variables {
		defined[v.Name] = true
	}
	templates := classTemplates(class)
	for i, patch := range class.Spec.Patches {
		pp := p.Index(i)
		if patch.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		} else if seen[patch.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), patch.Name))
		}
		seen[patch.Name] = true
		if patch.Name == variables.InlineDefinitionFrom {
			errs = append(errs, field.Invalid(pp.Child("name"), patch.Name, `"inline" is reserved: it names the definitions written in spec.variables`))
		}
		if (len(patch.Definitions) > 0) == (patch.External != nil) {
			errs = append(errs, field.Invalid(pp, patch.Name, "exactly one of definitions and external must be set"))
		}
		if patch.EnabledIf != "" {
			if _, err := template.New("enabledIf").Funcs(sprig.HermeticTxtFuncMap()).Parse(patch.EnabledIf); err != nil {
				errs = append(errs, field.Invalid(pp.Child("enabledIf"), patch.EnabledIf, err.Error()))
			}
		}
		if ext := patch.External; ext != nil {
			if ext.GeneratePatchesExtension == "" && ext.ValidateTopologyExtension == "" {
				errs = append(errs, field.Invalid(pp.Child("external"), "", "one of generatePatchesExtension or validateTopologyExtension must be set"))
			}
			for _, h := range []struct{ field, name string }{
				{"generatePatchesExtension", ext.GeneratePatchesExtension},
				{"validateTopologyExtension", ext.ValidateTopologyExtension},
				{"discoverVariablesExtension", ext.DiscoverVariablesExtension},
			} {
				if h.name != "" {
					errs = append(errs, handlerName(h.name, pp.Child("external", h.field))...)
				}
			}
		}
		for di, d := range patch.Definitions {
			dp := pp.Child("definitions").Index(di)
			errs = append(errs, selector(d.Selector, templates, class, dp.Child("selector"))...)
			for ji, jp := range d.JSONPatches {
				errs = append(errs, jsonPatch(jp, defined, dp.Child("jsonPatches").Index(ji))...)
			}
		}
	}
	return errs
}

// classTemplate is a template the class references, with the roles selectors can match it by.
type classTemplate struct {
	gvk              schema.GroupVersionKind
	infra, cp        bool
	mdClass, mpClass string
}

func classTemplates(class *clusterv1.ClusterClass) []classTemplate {
	gvk := func(r clusterv1.ClusterClassTemplateReference) schema.GroupVersionKind {
		return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	}
	s := &class.Spec
	var out []classTemplate
	if r := s.Infrastructure.TemplateRef; r.IsDefined() {
		out = append(out, classTemplate{gvk: gvk(r), infra: true})
	}
	out = append(out, classTemplate{gvk: gvk(s.ControlPlane.TemplateRef), cp: true})
	if r := s.ControlPlane.MachineInfrastructure.TemplateRef; r.IsDefined() {
		out = append(out, classTemplate{gvk: gvk(r), cp: true})
	}
	for _, md := range s.Workers.MachineDeployments {
		out = append(out, classTemplate{gvk: gvk(md.Bootstrap.TemplateRef), mdClass: md.Class}, classTemplate{gvk: gvk(md.Infrastructure.TemplateRef), mdClass: md.Class})
	}
	for _, mp := range s.Workers.MachinePools {
		out = append(out, classTemplate{gvk: gvk(mp.Bootstrap.TemplateRef), mpClass: mp.Class}, classTemplate{gvk: gvk(mp.Infrastructure.TemplateRef), mpClass: mp.Class})
	}
	return out
}

func selector(s clusterv1.PatchSelector, templates []classTemplate, class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.APIVersion == "" {
		errs = append(errs, field.Required(p.Child("apiVersion"), ""))
	}
	if s.Kind == "" {
		errs = append(errs, field.Required(p.Child("kind"), ""))
	}
	m := s.MatchResources
	isSet := func(b *bool) bool { return b != nil && *b }
	infra, cp := isSet(m.InfrastructureCluster), isSet(m.ControlPlane)
	if !cp && !infra && m.MachineDeploymentClass == nil && m.MachinePoolClass == nil {
		errs = append(errs, field.Required(p.Child("matchResources"), "select at least one of infrastructureCluster, controlPlane, machineDeploymentClass, machinePoolClass"))
		return errs
	}
	if infra && !class.Spec.Infrastructure.TemplateRef.IsDefined() {
		errs = append(errs, field.Invalid(p.Child("matchResources", "infrastructureCluster"), true, "the ClusterClass has no infrastructure template"))
	}
	if mdc := m.MachineDeploymentClass; mdc != nil {
		for i, n := range mdc.Names {
			if !strings.Contains(n, "*") && machineDeploymentClass(class, n) == nil {
				errs = append(errs, field.Invalid(p.Child("matchResources", "machineDeploymentClass", "names").Index(i), n, "no MachineDeploymentClass has this name"))
			}
		}
	}
	if mpc := m.MachinePoolClass; mpc != nil {
		for i, n := range mpc.Names {
			if !strings.Contains(n, "*") && machinePoolClass(class, n) == nil {
				errs = append(errs, field.Invalid(p.Child("matchResources", "machinePoolClass", "names").Index(i), n, "no MachinePoolClass has this name"))
			}
		}
	}
	want := schema.FromAPIVersionAndKind(s.APIVersion, s.Kind)
	for _, t := range templates {
		if t.gvk == want && (t.infra && infra || t.cp && cp ||
			t.mdClass != "" && m.MachineDeploymentClass != nil || t.mpClass != "" && m.MachinePoolClass != nil) {
			return errs
		}
	}
	return append(errs, field.Invalid(p, fmt.Sprintf("%s %s", s.APIVersion, s.Kind), "selects no template of this ClusterClass"))
}

func jsonPatch(jp clusterv1.JSONPatch, defined map[string]bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch jp.Op {
	case "add", "replace", "remove":
	default:
		errs = append(errs, field.NotSupported(p.Child("op"), jp.Op, []string{"add", "replace", "remove"}))
	}
	if !strings.HasPrefix(jp.Path, "/spec/") {
		errs = append(errs, field.Invalid(p.Child("path"), jp.Path, `must start with "/spec/"`))
	}
	segs := strings.Split(jp.Path, "/")
	for i, seg := range segs {
		if _, err := strconv.Atoi(seg); err != nil {
			continue
		}
		switch {
		case jp.Op == "add" && i == len(segs)-1 && seg != "0":
			errs = append(errs, field.Invalid(p.Child("path"), jp.Path, `an add may only insert at list index "0" or "-"`))
		case i != len(segs)-1:
			errs = append(errs, field.Invalid(p.Child("path"), jp.Path, "list indexes are only allowed as the last path element"))
		}
	}
	if jp.Op == "remove" {
		if jp.Value != nil || jp.ValueFrom != nil {
			errs = append(errs, field.Forbidden(p.Child("value"), "remove takes no value"))
		}
		return errs
	}
	switch {
	case jp.Value != nil && jp.ValueFrom != nil:
		errs = append(errs, field.Invalid(p, jp.Path, "value and valueFrom are mutually exclusive"))
	case jp.Value == nil && jp.ValueFrom == nil:
		errs = append(errs, field.Required(p.Child("value"), "one of value or valueFrom is required"))
	case jp.ValueFrom != nil:
		vf := jp.ValueFrom
		switch {
		case (vf.Variable == "") == (vf.Template == ""):
			errs = append(errs, field.Invalid(p.Child("valueFrom"), "", "exactly one of variable and template must be set"))
		case vf.Variable != "":
			name := vf.Variable
			root := strings.SplitN(strings.SplitN(name, ".", 2)[0], "[", 2)[0]
			if strings.HasPrefix(name, "builtin.") {
				if !builtinVariables[name] {
					errs = append(errs, field.Invalid(p.Child("valueFrom", "variable"), name, "not a defined builtin variable"))
				}
			} else if !defined[root] {
				errs = append(errs, field.Invalid(p.Child("valueFrom", "variable"), name, fmt.Sprintf("variable %q is not defined in the ClusterClass", root)))
			}
		default:
			if _, err := template.New("value").Funcs(sprig.HermeticTxtFuncMap()).Parse(vf.Template); err != nil {
				errs = append(errs, field.Invalid(p.Child("valueFrom", "template"), vf.Template, err.Error()))
			}
		}
	}
	return errs
}

// classUpdate checks what a ClusterClass update may not do: change the kind or group of a
// referenced template (bootstrap templates excepted), remove a worker class or a variable that
// Clusters use, or leave out of kubernetesVersions a version a Cluster runs. Template paths are
// those of Cluster API's check.ClusterClassesAreCompatible.
func classUpdate(class, old *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	spec := field.NewPath("spec")
	s, o := &class.Spec, &old.Spec
	errs := versionsOfClusters(class, clusters)
	errs = append(errs, sameGroupKind(o.Infrastructure.TemplateRef, s.Infrastructure.TemplateRef, spec.Child("infrastructure", "templateRef"))...)
	errs = append(errs, sameGroupKind(o.ControlPlane.TemplateRef, s.ControlPlane.TemplateRef, spec.Child("controlPlane", "templateRef"))...)
	errs = append(errs, sameGroupKind(o.ControlPlane.MachineInfrastructure.TemplateRef, s.ControlPlane.MachineInfrastructure.TemplateRef,
		spec.Child("controlPlane", "machineInfrastructure", "templateRef"))...)
	for i, md := range s.Workers.MachineDeployments {
		if om := machineDeploymentClass(old, md.Class); om != nil {
			errs = append(errs, sameGroupKind(om.Infrastructure.TemplateRef, md.Infrastructure.TemplateRef,
				spec.Child("workers", "machineDeployments").Index(i).Child("infrastructure", "templateRef"))...)
		}
	}
	for i, mp := range s.Workers.MachinePools {
		if om := machinePoolClass(old, mp.Class); om != nil {
			errs = append(errs, sameGroupKind(om.Infrastructure.TemplateRef, mp.Infrastructure.TemplateRef,
				spec.Child("workers", "machinePools").Index(i).Child("infrastructure", "templateRef"))...)
		}
	}

	inUseMD, inUseMP, inUseVar := map[string][]string{}, map[string][]string{}, map[string][]string{}
	for _, c := range clusters {
		t := &c.Spec.Topology
		if !t.IsDefined() {
			continue
		}
		id := c.Namespace + "/" + c.Name
		for _, md := range t.Workers.MachineDeployments {
			inUseMD[md.Class] = append(inUseMD[md.Class], id)
			for _, v := range md.Variables.Overrides {
				inUseVar[v.Name] = append(inUseVar[v.Name], id)
			}
		}
		for _, mp := range t.Workers.MachinePools {
			inUseMP[mp.Class] = append(inUseMP[mp.Class], id)
		}
		for _, v := range t.Variables {
			inUseVar[v.Name] = append(inUseVar[v.Name], id)
		}
	}
	for _, md := range o.Workers.MachineDeployments {
		if machineDeploymentClass(class, md.Class) == nil && len(inUseMD[md.Class]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("workers", "machineDeployments"),
				fmt.Sprintf("MachineDeploymentClass %q cannot be removed: used by Cluster(s) %s", md.Class, strings.Join(unique(inUseMD[md.Class]), ", "))))
		}
	}
	for _, mp := range o.Workers.MachinePools {
		if machinePoolClass(class, mp.Class) == nil && len(inUseMP[mp.Class]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("workers", "machinePools"),
				fmt.Sprintf("MachinePoolClass %q cannot be removed: used by Cluster(s) %s", mp.Class, strings.Join(unique(inUseMP[mp.Class]), ", "))))
		}
	}
	still := map[string]bool{}
	for _, v := range s.Variables {
		still[v.Name] = true
	}
	for _, v := range o.Variables {
		if !still[v.Name] && len(inUseVar[v.Name]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("variables"),
				fmt.Sprintf("variable %q cannot be removed: used by Cluster(s) %s", v.Name, strings.Join(unique(inUseVar[v.Name]), ", "))))
		}
	}
	return errs
}

// versionsOfClusters: once a class lists kubernetesVersions, every Cluster using it must run one
// of them, or its next upgrade would have no chain to follow (Cluster API's ClusterClass webhook
// validateKubernetesVersionsOfClusters; the version is compared as written).
func versionsOfClusters(class *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	if len(class.Spec.KubernetesVersions) == 0 {
		return nil
	}
	var errs field.ErrorList
	for _, c := range clusters {
		if c.Spec.Topology.IsDefined() && !slices.Contains(class.Spec.KubernetesVersions, c.Spec.Topology.Version) {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "kubernetesVersions"),
				fmt.Sprintf("Kubernetes Version %s is used by Cluster %q but not set in ClusterClass", c.Spec.Topology.Version, c.Name)))
		}
	}
	return errs
}

func unique(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// sameGroupKind: a template that both versions of the class reference keeps its group and kind.
func sameGroupKind(old, cur clusterv1.ClusterClassTemplateReference, p *field.Path) field.ErrorList {
	if !old.IsDefined() || !cur.IsDefined() {
		return nil
	}
	og := schema.FromAPIVersionAndKind(old.APIVersion, old.Kind).GroupKind()
	ng := schema.FromAPIVersionAndKind(cur.APIVersion, cur.Kind).GroupKind()
	if og != ng {
		return field.ErrorList{field.Invalid(p, ng.String(), fmt.Sprintf("the template's kind and group cannot change (was %s)", og.String()))}
	}
	return nil
}

// handlerName checks a Runtime Extension handler reference ("<handler>.<extensionconfig>", as
// discovery names handlers).
func handlerName(name string, p *field.Path) field.ErrorList {
	_, _, ok := runtimev1.SplitHandlerName(name)
	switch {
	case name == "":
		return field.ErrorList{field.Required(p, "name the handler as <handler>.<extensionconfig>")}
	case len(name) > 512:
		return field.ErrorList{field.TooLong(p, name, 512)}
	case !ok:
		return field.ErrorList{field.Invalid(p, name, "must have the form <handler>.<extensionconfig>")}
	}
	return nil
}
