// Package validation checks ClusterClasses and Clusters the way Cluster API's webhooks do, on
// create and on update. Every problem is an apimachinery field error naming the path and value,
// so a bad manifest is rejected with all its problems listed at once.
package validation

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/pools"
	"github.com/topoflow/topoflow/model/variables"
)

// ClusterClass validates a ClusterClass on create (old == nil) or update. clusters are the
// Clusters using the class; on update, classes and variables they use cannot be removed.
func ClusterClassV1Beta1(class, old *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")

	if inf := class.Spec.Infrastructure; inf != nil {
		errs = append(errs, ref(inf.Ref, spec.Child("infrastructure", "ref"), true)...)
	}
	cp := spec.Child("controlPlane")
	errs = append(errs, ref(class.Spec.ControlPlane.Ref, cp.Child("ref"), true)...)
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		errs = append(errs, ref(mi.Ref, cp.Child("machineInfrastructure", "ref"), true)...)
	}
	if s := class.Spec.ControlPlane.NamingStrategy; s != nil && s.Template != nil {
		errs = append(errs, namingTemplate(*s.Template, cp.Child("namingStrategy", "template"), names.Input{ClusterName: "cluster"})...)
	}
	if s := class.Spec.InfrastructureNamingStrategy; s != nil && s.Template != nil {
		errs = append(errs, namingTemplate(*s.Template, spec.Child("infrastructureNamingStrategy", "template"), names.Input{ClusterName: "cluster"})...)
	}
	if class.Spec.ControlPlane.MachineHealthCheck != nil && class.Spec.ControlPlane.MachineInfrastructure == nil {
		errs = append(errs, field.Forbidden(cp.Child("machineHealthCheck"), "a control plane MachineHealthCheck needs spec.controlPlane.machineInfrastructure"))
	}
	if m := class.Spec.ControlPlane.MachineHealthCheck; m != nil {
		errs = append(errs, machineHealthCheck(m, cp.Child("machineHealthCheck"))...)
	}

	workers := spec.Child("workers")
	seen := map[string]bool{}
	for _, pc := range adapt.PoolClasses(class) {
		p := workers.Child(pools.Field(pc.MachinePool)).Index(pc.Index)
		key := pools.Kind(pc.MachinePool) + "/" + pc.Name
		if pc.Name == "" {
			errs = append(errs, field.Required(p.Child("class"), "a "+pools.Kind(pc.MachinePool)+"Class needs a name"))
		} else if seen[key] {
			errs = append(errs, field.Duplicate(p.Child("class"), pc.Name))
		}
		seen[key] = true
		errs = append(errs, ref(pc.Bootstrap, p.Child("template", "bootstrap", "ref"), true)...)
		errs = append(errs, ref(pc.Infrastructure, p.Child("template", "infrastructure", "ref"), true)...)
		if pc.NamingTemplate != nil {
			sample := "md"
			if pc.MachinePool {
				sample = "mp"
			}
			errs = append(errs, namingTemplate(*pc.NamingTemplate, p.Child("namingStrategy", "template"), pools.NamesInput(pc.MachinePool, "cluster", sample))...)
		}
		if pc.HealthCheck != nil {
			errs = append(errs, machineHealthCheck(pc.HealthCheck, p.Child("machineHealthCheck"))...)
		}
	}

	errs = append(errs, classVariables(class, spec.Child("variables"))...)
	errs = append(errs, classPatches(class, spec.Child("patches"))...)
	errs = append(errs, kubernetesVersions(class.Spec.KubernetesVersions)...)
	errs = append(errs, classTaints(class)...)
	if u := class.Spec.Upgrade; u != nil && u.External != nil {
		errs = append(errs, handlerName(u.External.GenerateUpgradePlanExtension, spec.Child("upgrade", "external", "generateUpgradePlanExtension"))...)
	}

	if old != nil {
		errs = append(errs, classUpdate(class, old, clusters)...)
	}
	return errs
}

// ref checks a template reference: apiVersion, kind and name set. Its namespace is not checked:
// Cluster API v1.14 reads a class's templates from the class's own namespace and drops a v1beta1
// ref.namespace when it converts the class, so any value is accepted and ignored.
func ref(r *corev1.ObjectReference, p *field.Path, required bool) field.ErrorList {
	if r == nil {
		if required {
			return field.ErrorList{field.Required(p, "a template reference is required")}
		}
		return nil
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

func machineHealthCheck(m *clusterv1.MachineHealthCheckClass, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if m.MaxUnhealthy != nil && m.UnhealthyRange != nil {
		errs = append(errs, field.Forbidden(p.Child("unhealthyRange"), "maxUnhealthy and unhealthyRange are mutually exclusive"))
	}
	if m.UnhealthyRange != nil && !unhealthyRange.MatchString(*m.UnhealthyRange) {
		errs = append(errs, field.Invalid(p.Child("unhealthyRange"), *m.UnhealthyRange, `want "[min-max]"`))
	}
	if m.NodeStartupTimeout != nil && m.NodeStartupTimeout.Seconds() != 0 && m.NodeStartupTimeout.Seconds() < 30 {
		errs = append(errs, field.Invalid(p.Child("nodeStartupTimeout"), m.NodeStartupTimeout.String(), "must be at least 30s (or 0 to disable)"))
	}
	for i, c := range m.UnhealthyConditions {
		if c.Timeout.Duration < 0 {
			errs = append(errs, field.Invalid(p.Child("unhealthyConditions").Index(i).Child("timeout"), c.Timeout.String(), "must not be negative"))
		}
	}
	for i, c := range m.UnhealthyMachineConditions {
		// Cluster API's CRD rule (a CEL validation there; topoflow's CRDs carry no list bounds
		// that would keep its cost within the API server's budget, so the webhook checks it).
		if slices.Contains(reservedMachineConditions, c.Type) {
			errs = append(errs, field.Invalid(p.Child("unhealthyMachineConditions").Index(i).Child("type"), c.Type,
				"type must not be one of: "+strings.Join(reservedMachineConditions, ", ")))
		}
	}
	return errs
}

// reservedMachineConditions are the Machine conditions a health check must not watch: Cluster
// API sets them from the check's own outcome.
var reservedMachineConditions = []string{"Ready", "Available", "HealthCheckSucceeded", "OwnerRemediated", "ExternallyRemediated"}

func classVariables(class *clusterv1.ClusterClass, p *field.Path) field.ErrorList {
	if errs := VariablesV1Beta1(class.Spec.Variables, p); len(errs) > 0 {
		return errs
	}
	if _, err := variables.Definitions(adapt.ClusterClassToHub(class)); err != nil {
		return field.ErrorList{field.Invalid(p, class.Name, err.Error())}
	}
	return nil
}

// Variables validates variable definitions, written in a ClusterClass or answered by a
// DiscoverVariables handler: names, schemas (each must compile) and defaults (each must satisfy
// its schema). p is where the list is written.
func VariablesV1Beta1(vs []clusterv1.ClusterClassVariable, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	defs := map[string]variables.Definition{}
	for i, v := range vs {
		vp := p.Index(i)
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(vp.Child("name"), ""))
		case strings.HasPrefix(v.Name, "builtin"):
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, `names starting with "builtin" are reserved`))
		case strings.Contains(v.Name, "."):
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, `must not contain "."`))
		case seen[v.Name]:
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		seen[v.Name] = true
		defs[v.Name] = variables.Definition{Name: v.Name, Required: v.Required, Schema: adapt.JSONSchemaPropsToHub(&v.Schema.OpenAPIV3Schema)}
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
			for _, e := range cache.Validate(adapt.ClusterVariablesToHub([]clusterv1.ClusterVariable{{Name: v.Name, Value: *d}}), field.NewPath("x"), false) {
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
		if patch.EnabledIf != nil {
			if _, err := template.New("enabledIf").Funcs(sprig.HermeticTxtFuncMap()).Parse(*patch.EnabledIf); err != nil {
				errs = append(errs, field.Invalid(pp.Child("enabledIf"), *patch.EnabledIf, err.Error()))
			}
		}
		if ext := patch.External; ext != nil {
			if ext.GenerateExtension == nil && ext.ValidateExtension == nil {
				errs = append(errs, field.Invalid(pp.Child("external"), "", "one of generateExtension or validateExtension must be set"))
			}
			for _, h := range []struct {
				field string
				name  *string
			}{{"generateExtension", ext.GenerateExtension}, {"validateExtension", ext.ValidateExtension}, {"discoverVariablesExtension", ext.DiscoverVariablesExtension}} {
				if h.name != nil {
					errs = append(errs, handlerName(*h.name, pp.Child("external", h.field))...)
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
	var out []classTemplate
	gvk := func(r *corev1.ObjectReference) schema.GroupVersionKind {
		if r == nil {
			return schema.GroupVersionKind{}
		}
		return schema.FromAPIVersionAndKind(r.APIVersion, r.Kind)
	}
	if inf := class.Spec.Infrastructure; inf != nil {
		out = append(out, classTemplate{gvk: gvk(inf.Ref), infra: true})
	}
	out = append(out, classTemplate{gvk: gvk(class.Spec.ControlPlane.Ref), cp: true})
	if mi := class.Spec.ControlPlane.MachineInfrastructure; mi != nil {
		out = append(out, classTemplate{gvk: gvk(mi.Ref), cp: true})
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		out = append(out, classTemplate{gvk: gvk(md.Template.Bootstrap.Ref), mdClass: md.Class}, classTemplate{gvk: gvk(md.Template.Infrastructure.Ref), mdClass: md.Class})
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		out = append(out, classTemplate{gvk: gvk(mp.Template.Bootstrap.Ref), mpClass: mp.Class}, classTemplate{gvk: gvk(mp.Template.Infrastructure.Ref), mpClass: mp.Class})
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
	if !m.ControlPlane && !m.InfrastructureCluster && m.MachineDeploymentClass == nil && m.MachinePoolClass == nil {
		errs = append(errs, field.Required(p.Child("matchResources"), "select at least one of infrastructureCluster, controlPlane, machineDeploymentClass, machinePoolClass"))
		return errs
	}
	if m.InfrastructureCluster && class.Spec.Infrastructure == nil {
		errs = append(errs, field.Invalid(p.Child("matchResources", "infrastructureCluster"), true, "the ClusterClass has no infrastructure template"))
	}
	if mdc := m.MachineDeploymentClass; mdc != nil {
		for i, n := range mdc.Names {
			if !strings.Contains(n, "*") && class.MachineDeploymentClass(n) == nil {
				errs = append(errs, field.Invalid(p.Child("matchResources", "machineDeploymentClass", "names").Index(i), n, "no MachineDeploymentClass has this name"))
			}
		}
	}
	if mpc := m.MachinePoolClass; mpc != nil {
		for i, n := range mpc.Names {
			if !strings.Contains(n, "*") && class.MachinePoolClass(n) == nil {
				errs = append(errs, field.Invalid(p.Child("matchResources", "machinePoolClass", "names").Index(i), n, "no MachinePoolClass has this name"))
			}
		}
	}
	want := schema.FromAPIVersionAndKind(s.APIVersion, s.Kind)
	for _, t := range templates {
		if t.gvk == want && (t.infra && m.InfrastructureCluster || t.cp && m.ControlPlane ||
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
		case (vf.Variable == nil) == (vf.Template == nil):
			errs = append(errs, field.Invalid(p.Child("valueFrom"), "", "exactly one of variable and template must be set"))
		case vf.Variable != nil:
			name := *vf.Variable
			root := strings.SplitN(strings.SplitN(name, ".", 2)[0], "[", 2)[0]
			if strings.HasPrefix(name, "builtin.") {
				if !builtinVariables[name] {
					errs = append(errs, field.Invalid(p.Child("valueFrom", "variable"), name, "not a defined builtin variable"))
				}
			} else if !defined[root] {
				errs = append(errs, field.Invalid(p.Child("valueFrom", "variable"), name, fmt.Sprintf("variable %q is not defined in the ClusterClass", root)))
			}
		case vf.Template != nil:
			if _, err := template.New("value").Funcs(sprig.HermeticTxtFuncMap()).Parse(*vf.Template); err != nil {
				errs = append(errs, field.Invalid(p.Child("valueFrom", "template"), *vf.Template, err.Error()))
			}
		}
	}
	return errs
}

// classUpdate checks what a ClusterClass update may not do: change the kind or group of a
// referenced template (bootstrap templates excepted), remove a worker class or a variable that
// Clusters use, or leave out of kubernetesVersions a version a Cluster runs.
func classUpdate(class, old *clusterv1.ClusterClass, clusters []clusterv1.Cluster) field.ErrorList {
	spec := field.NewPath("spec")
	errs := versionsOfClusters(class, clusters)
	if old.Spec.Infrastructure != nil && class.Spec.Infrastructure != nil {
		errs = append(errs, sameGroupKind(old.Spec.Infrastructure.Ref, class.Spec.Infrastructure.Ref, spec.Child("infrastructure", "ref"))...)
	}
	errs = append(errs, sameGroupKind(old.Spec.ControlPlane.Ref, class.Spec.ControlPlane.Ref, spec.Child("controlPlane", "ref"))...)
	if old.Spec.ControlPlane.MachineInfrastructure != nil && class.Spec.ControlPlane.MachineInfrastructure != nil {
		errs = append(errs, sameGroupKind(old.Spec.ControlPlane.MachineInfrastructure.Ref, class.Spec.ControlPlane.MachineInfrastructure.Ref,
			spec.Child("controlPlane", "machineInfrastructure", "ref"))...)
	}
	for i, md := range class.Spec.Workers.MachineDeployments {
		if o := old.MachineDeploymentClass(md.Class); o != nil {
			errs = append(errs, sameGroupKind(o.Template.Infrastructure.Ref, md.Template.Infrastructure.Ref,
				spec.Child("workers", "machineDeployments").Index(i).Child("template", "infrastructure", "ref"))...)
		}
	}
	for i, mp := range class.Spec.Workers.MachinePools {
		if o := old.MachinePoolClass(mp.Class); o != nil {
			errs = append(errs, sameGroupKind(o.Template.Infrastructure.Ref, mp.Template.Infrastructure.Ref,
				spec.Child("workers", "machinePools").Index(i).Child("template", "infrastructure", "ref"))...)
		}
	}

	inUseMD, inUseMP, inUseVar := map[string][]string{}, map[string][]string{}, map[string][]string{}
	for _, c := range clusters {
		t := c.Spec.Topology
		if t == nil {
			continue
		}
		id := c.Namespace + "/" + c.Name
		if w := t.Workers; w != nil {
			for _, md := range w.MachineDeployments {
				inUseMD[md.Class] = append(inUseMD[md.Class], id)
				if md.Variables != nil {
					for _, v := range md.Variables.Overrides {
						inUseVar[v.Name] = append(inUseVar[v.Name], id)
					}
				}
			}
			for _, mp := range w.MachinePools {
				inUseMP[mp.Class] = append(inUseMP[mp.Class], id)
			}
		}
		for _, v := range t.Variables {
			inUseVar[v.Name] = append(inUseVar[v.Name], id)
		}
	}
	for _, md := range old.Spec.Workers.MachineDeployments {
		if class.MachineDeploymentClass(md.Class) == nil && len(inUseMD[md.Class]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("workers", "machineDeployments"),
				fmt.Sprintf("MachineDeploymentClass %q cannot be removed: used by ClusterV1Beta1(s) %s", md.Class, strings.Join(unique(inUseMD[md.Class]), ", "))))
		}
	}
	for _, mp := range old.Spec.Workers.MachinePools {
		if class.MachinePoolClass(mp.Class) == nil && len(inUseMP[mp.Class]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("workers", "machinePools"),
				fmt.Sprintf("MachinePoolClass %q cannot be removed: used by ClusterV1Beta1(s) %s", mp.Class, strings.Join(unique(inUseMP[mp.Class]), ", "))))
		}
	}
	still := map[string]bool{}
	for _, v := range class.Spec.Variables {
		still[v.Name] = true
	}
	for _, v := range old.Spec.Variables {
		if !still[v.Name] && len(inUseVar[v.Name]) > 0 {
			errs = append(errs, field.Forbidden(spec.Child("variables"),
				fmt.Sprintf("variable %q cannot be removed: used by ClusterV1Beta1(s) %s", v.Name, strings.Join(unique(inUseVar[v.Name]), ", "))))
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
		if c.Spec.Topology != nil && !slices.Contains(class.Spec.KubernetesVersions, c.Spec.Topology.Version) {
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

func sameGroupKind(old, cur *corev1.ObjectReference, p *field.Path) field.ErrorList {
	if old == nil || cur == nil {
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
