// Package desired computes the objects a managed Cluster should have, from its topology, its
// ClusterClass and the class's templates, the way Cluster API's topology controller does. It is
// pure: the caller reads everything (templates and the current objects, whose names are kept)
// and applies the result.
//
// The computation runs in Cluster API's order: default and validate variables; name every object
// (existing objects keep their names); compute the builtin variables of each template; apply the
// class's inline patches to per-object copies of its templates; build the objects from the
// patched templates.
package desired

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/patches"
	"github.com/topoflow/topoflow/model/pools"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/model/variables"
)

// v1beta1 is the API version of the Cluster intent and of owner references to the Cluster by
// default (Input.ClusterAPIVersion empty): topoflow's own CRDs serve cluster.x-k8s.io/v1beta1.
const v1beta1 = "cluster.x-k8s.io/v1beta1"

// Input is everything the computation reads: the hub's (v1beta2) Cluster, class and current
// pools, as Cluster API v1.14's topology controller reads them.
type Input struct {
	Cluster *clusterv1.Cluster
	Class   *clusterv1.ClusterClass
	// Templates holds every template the class references, keyed by RefKey.
	Templates map[string]*unstructured.Unstructured
	// Current holds the topology objects that exist now; their names are kept.
	Current Current
	// Names seeds the random suffixes of new objects' names; see names.Source.
	Names names.Source
	// Versions are the Kubernetes versions the parts should run now. Empty fields mean
	// spec.topology.version; an upgrade in progress sets them step by step.
	Versions Versions
	// Extensions serves the class's external patches; nil where no Runtime Extension can be
	// called (a class with external patches then fails, naming the patch).
	Extensions patches.Extensions `json:"-"`
	// ClusterAPIVersion is the apiVersion owner references to the Cluster carry: the version the
	// API server serves Clusters in, as Cluster API writes its own (cluster.x-k8s.io/v1beta2
	// since v1.11). Empty means topoflow's v1beta1.
	ClusterAPIVersion string `json:",omitempty"`
	// WorkloadAPIVersion is the apiVersion MachineDeployments, MachinePools and MachineHealthChecks
	// are written in: the version the API server serves MachineDeployments in (v1beta2 beside
	// Cluster API v1.11+, see InServedVersion). Empty means topoflow's v1beta1.
	WorkloadAPIVersion string `json:",omitempty"`
	// ControlPlaneContract is the contract the control plane's API version follows (its CRD's
	// label, contract.VersionOf): contract.V1Beta2 writes the machine template's fields as that
	// contract has them; anything else writes the v1beta1 contract's.
	ControlPlaneContract string `json:",omitempty"`
}

// Versions are per-part Kubernetes versions.
type Versions struct {
	ControlPlane string
	// MachineDeployments and MachinePools map topology names to versions.
	MachineDeployments map[string]string
	MachinePools       map[string]string
}

// Current is the part of the current state the computation needs.
type Current struct {
	// InfrastructureCluster and ControlPlane are the existing objects (nil before creation).
	InfrastructureCluster *unstructured.Unstructured
	ControlPlane          *unstructured.Unstructured
	// MachineDeployments and MachinePools map topology names to existing objects.
	MachineDeployments map[string]*clusterv1.MachineDeployment
	MachinePools       map[string]*clusterv1.MachinePool
	// Templates holds the Cluster's current cloned templates (control plane machine template,
	// MachineDeployment bootstrap and infrastructure templates), keyed by RefKey. A template whose
	// spec would change is rotated: it gets a new name and its parent's reference moves.
	Templates map[string]*unstructured.Unstructured
	// MachineHealthChecks are the Cluster's topology-owned health checks.
	MachineHealthChecks []*clusterv1.MachineHealthCheck
	// PoolTemplates are the Cluster's MachineDeployment templates found by their labels
	// (cluster-name and deployment-name), so that one an earlier pass kept is found again;
	// MachineSets are the Cluster's MachineSets, whose machines may still need a template.
	PoolTemplates []*unstructured.Unstructured
	MachineSets   []*unstructured.Unstructured
	// MachineVersions are the versions the Machines of each MachineDeployment run, by the
	// MachineDeployment's name (each Machine's spec.version and its Node's kubelet version); nil
	// where Machines are not served (see upgrade.MachineVersions).
	MachineVersions upgrade.MachineVersions `json:",omitempty"`
	// NodeVersions are the kubelet versions of each MachinePool's Nodes, by the MachinePool's
	// name; nil where not read (see upgrade.NodeVersions).
	NodeVersions upgrade.NodeVersions `json:",omitempty"`
	// RefVersions are the API versions of the Cluster's references (pool kind "Cluster") and the
	// current pools' template references as read in v1beta1 (the hub's contract references have
	// none; the caller reads them as v1beta1 first): the Cluster's intent and a pool's v1beta1
	// intent keep them where group and kind agree (State.InServedVersion), and a removed
	// MachinePool's objects are deleted at them (RefVersions.Ref).
	RefVersions RefVersions `json:",omitempty"`
}

// State is the desired topology of one Cluster.
type State struct {
	// Cluster is the topology controller's intent for the Cluster itself: its name, the labels
	// cluster-name and topology-owned, and spec.infrastructureRef and spec.controlPlaneRef, nothing
	// else (Cluster API's computeCluster, filtered by allowedPathsCluster).
	Cluster *unstructured.Unstructured
	// InfrastructureRef and ControlPlaneRef are what the Cluster's spec should point at.
	InfrastructureRef *corev1.ObjectReference
	ControlPlaneRef   *corev1.ObjectReference
	// ShimNeeded is true while the infrastructure cluster or the control plane is still to be
	// created: both then get the temporary "<cluster>-shim" Secret as owner (see AddShimOwner),
	// as Cluster API's reconcileClusterShim does, so they are collected if the Cluster never
	// comes to point at them.
	ShimNeeded bool
	// InfrastructureCluster is nil when the class has no infrastructure template (seed 003).
	InfrastructureCluster *unstructured.Unstructured
	ControlPlane          *unstructured.Unstructured
	// ControlPlaneInfrastructureTemplate is nil when the control plane has no machines.
	ControlPlaneInfrastructureTemplate *unstructured.Unstructured
	// ControlPlaneMachineHealthCheck is nil unless the class or topology enables one.
	ControlPlaneMachineHealthCheck *clusterv1.MachineHealthCheck
	// MachineDeployments and MachinePools are in topology order.
	MachineDeployments []MachineDeployment
	MachinePools       []MachinePool
	// Variables are the Cluster's variables after defaulting.
	Variables []clusterv1.ClusterVariable

	// ControlPlanePending: the control plane waits for its version (see model/topology); it and
	// its machine template are not written in this pass, its health check is.
	ControlPlanePending bool
	// Kept are the RefKeys of current templates that parts not written in this pass still use:
	// they must not be deleted as rotated away.
	Kept []string

	// refVersions is Input.Current.RefVersions (see InServedVersion).
	refVersions RefVersions
	// versions are the objects' API versions by group and kind (objectVersions), made once: the
	// apply writes a state's pools concurrently, each through InServedVersion.
	versions struct {
		once sync.Once
		m    map[string]string
		err  error
	}
}

// MachineDeployment is one desired MachineDeployment with the objects that belong to it. Object,
// like MachinePool.Object and the health checks, is a hub (v1beta2) object: its intent is
// cluster.x-k8s.io/v1beta2, and InServedVersion writes it in the version the server serves.
type MachineDeployment struct {
	TopologyName       string
	Object             *clusterv1.MachineDeployment
	BootstrapTemplate  *unstructured.Unstructured
	InfraTemplate      *unstructured.Unstructured
	MachineHealthCheck *clusterv1.MachineHealthCheck
	// Pending: the pool waits for its version; it and its templates are not written in this
	// pass, its health check is. PendingCreate: a new pool not created yet, health check included.
	Pending, PendingCreate bool
}

// MachinePool is one desired MachinePool with its bootstrap config and infrastructure pool.
type MachinePool struct {
	TopologyName     string
	Object           *clusterv1.MachinePool
	BootstrapConfig  *unstructured.Unstructured
	InfraMachinePool *unstructured.Unstructured
	// Pending and PendingCreate: as for MachineDeployments (nothing of the pool is written).
	Pending, PendingCreate bool
}

// RefKey is the key of a template in Input.Templates.
func RefKey(ref *corev1.ObjectReference) string {
	return ref.Kind + "/" + ref.Namespace + "/" + ref.Name
}

// RefKeyIn is the key of a reference whose empty namespace means ns.
func RefKeyIn(ref *corev1.ObjectReference, ns string) string {
	if ref.Namespace != "" {
		ns = ref.Namespace
	}
	return ref.Kind + "/" + ns + "/" + ref.Name
}

// TemplateRef is one template a class references and where.
type TemplateRef struct {
	Ref *corev1.ObjectReference
	// Field is the ClusterClass field holding the reference, for error messages.
	Field string
}

// TemplateRefs lists the templates a class references, each in the class's namespace: a
// reference's own namespace is ignored, not refused, because Cluster API v1.14 converts a v1beta1
// class to v1beta2, whose template references have no namespace, and reads every template from the
// class's namespace (ClusterClassTemplateReference.ToObjectReference).
func TemplateRefs(class *clusterv1.ClusterClass) []TemplateRef {
	var out []TemplateRef
	add := func(ref clusterv1.ClusterClassTemplateReference, field string) {
		if !ref.IsDefined() {
			return
		}
		out = append(out, TemplateRef{Ref: inClassNamespace(ref, class), Field: field})
	}
	add(class.Spec.Infrastructure.TemplateRef, "spec.infrastructure.ref")
	add(class.Spec.ControlPlane.TemplateRef, "spec.controlPlane.ref")
	add(class.Spec.ControlPlane.MachineInfrastructure.TemplateRef, "spec.controlPlane.machineInfrastructure.ref")
	for _, pc := range pools.Classes(class) {
		add(pc.Bootstrap, classField(pc)+".template.bootstrap.ref")
		add(pc.Infrastructure, classField(pc)+".template.infrastructure.ref")
	}
	return out
}

// inClassNamespace is a class's template reference as an object reference in the class's
// namespace (ClusterClassTemplateReference.ToObjectReference).
func inClassNamespace(ref clusterv1.ClusterClassTemplateReference, class *clusterv1.ClusterClass) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, Namespace: class.Namespace}
}

// classField is the field path of a pool class, for errors.
func classField(pc pools.Class) string {
	return fmt.Sprintf("spec.workers.%s[class=%s]", pools.Field(pc.MachinePool), pc.Name)
}

// MissingTemplateError says a template the class references was not found.
type MissingTemplateError struct {
	Class string
	Field string
	Ref   *corev1.ObjectReference
}

func (e *MissingTemplateError) Error() string {
	return fmt.Sprintf("ClusterClass %s: %s references %s %s/%s, which does not exist", e.Class, e.Field, e.Ref.Kind, e.Ref.Namespace, e.Ref.Name)
}

// InvalidError lists field errors in the Cluster's topology (variables, classes, overrides).
type InvalidError struct {
	Object string
	Errs   field.ErrorList
}

func (e *InvalidError) Error() string {
	msgs := make([]string, 0, len(e.Errs))
	for _, fe := range e.Errs {
		msgs = append(msgs, fe.Error())
	}
	return e.Object + ": " + strings.Join(msgs, "; ")
}

// Compute returns the desired state. Errors name the field or object at fault.
func Compute(in Input) (*State, error) {
	if !in.Cluster.Spec.Topology.IsDefined() {
		return nil, fmt.Errorf("Cluster %s/%s has no spec.topology", in.Cluster.Namespace, in.Cluster.Name)
	}
	c := &computer{in: in, cluster: in.Cluster, class: in.Class, topo: &in.Cluster.Spec.Topology}
	if err := c.resolveVariables(); err != nil {
		return nil, err
	}
	if err := c.plan(); err != nil {
		return nil, err
	}
	ext := &patches.External{
		Extensions: in.Extensions, Variables: c.clusterVs, ClusterBuiltin: c.cb,
		DefinedBy: patches.DefinedBy(c.class.Status.Variables),
	}
	c.syncMetadata()
	if err := patches.Apply(c.class.Spec.Patches, c.targets, ext); err != nil {
		var pe *patches.Error
		var ce *patches.CallError
		switch {
		case errors.As(err, &ce):
			// An extension's error, shown as Cluster API v1.14 shows it (#13813).
			return nil, fmt.Errorf("error computing the desired state of the Cluster topology: failed to apply patches: %w", err)
		case errors.As(err, &pe):
			return nil, fmt.Errorf("ClusterClass %s/%s: %w", c.class.Namespace, c.class.Name, err)
		}
		return nil, err
	}
	return c.build()
}

// computer carries one computation.
type computer struct {
	in      Input
	cluster *clusterv1.Cluster
	class   *clusterv1.ClusterClass
	topo    *clusterv1.Topology

	vars      *variables.Cache
	clusterVs []clusterv1.ClusterVariable
	values    map[string]any // Cluster-level values
	cb        map[string]any // builtin.cluster

	// slots, filled by plan and patched in place
	infra, cp, cpInfra *slot
	// cpMachineMeta is the control plane template's spec.machineTemplate.metadata, unpatched.
	cpMachineMeta map[string]any
	mds           []*mdSlots
	mps           []*mpSlots
	targets       []*patches.Target
}

// slot is one object to build: its name and its (patched) template. For an object made from a
// template, meta is the object's labels and annotations computed before patching (what the
// builtin variables carry); patches may then change them (patchmeta.go).
type slot struct {
	name     string
	template *unstructured.Unstructured
	meta     clusterv1.ObjectMeta
}

type mdSlots struct {
	topo             *clusterv1.MachineDeploymentTopology
	class            *clusterv1.MachineDeploymentClass
	name, version    string
	bootstrap, infra *slot
	current          *clusterv1.MachineDeployment
}

type mpSlots struct {
	topo             *clusterv1.MachinePoolTopology
	class            *clusterv1.MachinePoolClass
	name, version    string
	bootstrap, infra *slot
	current          *clusterv1.MachinePool
}

func (c *computer) classID() string { return c.class.Namespace + "/" + c.class.Name }

func (c *computer) resolveVariables() error {
	defs, err := variables.Definitions(c.class)
	if err != nil {
		return err
	}
	c.vars = variables.NewCache(defs)
	topoPath := field.NewPath("spec", "topology")
	vp := topoPath.Child("variables")
	var errs field.ErrorList
	clusterVs, derrs := c.vars.Default(c.topo.Variables, vp)
	c.clusterVs = clusterVs
	errs = append(errs, derrs...)
	errs = append(errs, c.vars.Validate(clusterVs, vp, true)...)
	// An overrides list that is set (even empty) is checked, as v1beta1's variables were when set.
	overrides := func(ov []clusterv1.ClusterVariable, p *field.Path) {
		if ov != nil {
			o, derrs := c.vars.DefaultOverrides(ov, p)
			errs = append(errs, derrs...)
			errs = append(errs, c.vars.Validate(o, p, false)...)
		}
	}
	overrides(c.topo.ControlPlane.Variables.Overrides, topoPath.Child("controlPlane", "variables", "overrides"))
	for i, md := range c.topo.Workers.MachineDeployments {
		overrides(md.Variables.Overrides, topoPath.Child("workers", "machineDeployments").Index(i).Child("variables", "overrides"))
	}
	for i, mp := range c.topo.Workers.MachinePools {
		overrides(mp.Variables.Overrides, topoPath.Child("workers", "machinePools").Index(i).Child("variables", "overrides"))
	}
	if len(errs) > 0 {
		return &InvalidError{Object: "Cluster " + c.cluster.Namespace + "/" + c.cluster.Name, Errs: errs}
	}
	c.values, err = variables.Values(clusterVs, nil)
	return err
}

// valuesWith returns the Cluster-level values merged with the (defaulted) overrides and the
// builtins, and the defaulted overrides.
func (c *computer) valuesWith(overrides []clusterv1.ClusterVariable, builtin map[string]any) (map[string]any, []clusterv1.ClusterVariable, error) {
	o := overrides
	if len(o) > 0 {
		defaulted, errs := c.vars.DefaultOverrides(o, field.NewPath("overrides"))
		if len(errs) > 0 {
			return nil, nil, errs.ToAggregate()
		}
		o = defaulted
	}
	v, err := variables.Values(c.clusterVs, o)
	if err != nil {
		return nil, nil, err
	}
	v["builtin"] = builtin
	return v, o, nil
}

// template is a copy of the class's template ref points at, read from the class's namespace
// whatever namespace ref names (see TemplateRefs).
func (c *computer) template(ref clusterv1.ClusterClassTemplateReference, field string) (*unstructured.Unstructured, error) {
	r := inClassNamespace(ref, c.class)
	t, ok := c.in.Templates[RefKey(r)]
	if !ok || t == nil {
		return nil, &MissingTemplateError{Class: c.classID(), Field: field, Ref: r}
	}
	return t.DeepCopy(), nil
}

func (c *computer) version(override string) string {
	if override != "" {
		return override
	}
	return c.topo.Version
}

// plan names every object, computes builtins and registers the templates to patch.
func (c *computer) plan() error {
	c.cb = c.clusterBuiltins()
	if err := c.planInfrastructure(); err != nil {
		return err
	}
	if err := c.planControlPlane(); err != nil {
		return err
	}
	w := &c.topo.Workers
	for i := range w.MachineDeployments {
		if err := c.planMachineDeployment(&w.MachineDeployments[i], i, c.cb); err != nil {
			return err
		}
	}
	for i := range w.MachinePools {
		if err := c.planMachinePool(&w.MachinePools[i], i, c.cb); err != nil {
			return err
		}
	}
	return nil
}

// planInfrastructure names the infrastructure cluster (the one the Cluster points at, else from
// the class's naming strategy) and registers its template; a class without one has none.
func (c *computer) planInfrastructure() error {
	inf := c.class.Spec.Infrastructure
	if !inf.TemplateRef.IsDefined() {
		return nil
	}
	var err error
	c.infra = &slot{}
	if c.infra.template, err = c.template(inf.TemplateRef, "spec.infrastructure.ref"); err != nil {
		return err
	}
	if ref := c.cluster.Spec.InfrastructureRef; ref.IsDefined() {
		c.infra.name = ref.Name
	} else if c.infra.name, err = names.FromTemplate(inf.Naming.Template, names.DefaultInfraClusterTemplate,
		names.Input{ClusterName: c.cluster.Name}, c.in.Names.For("infrastructureCluster")); err != nil {
		return fmt.Errorf("ClusterClass %s: spec.infrastructureNamingStrategy.template: %w", c.classID(), err)
	}
	c.infra.meta = objectMeta(c.infra.template, c.baseLabels(), nil)
	return c.addTarget(patches.InfrastructureCluster, "", c.infra, c.clusterHolder("spec.infrastructureRef"), nil, map[string]any{"cluster": c.cb})
}

// planControlPlane names the control plane and its machine template and registers both templates
// with the control plane's builtins.
func (c *computer) planControlPlane() error {
	cpClass := c.class.Spec.ControlPlane
	if !cpClass.TemplateRef.IsDefined() {
		return fmt.Errorf("ClusterClass %s: spec.controlPlane.ref is required", c.classID())
	}
	var err error
	c.cp = &slot{}
	if c.cp.template, err = c.template(cpClass.TemplateRef, "spec.controlPlane.ref"); err != nil {
		return err
	}
	if ref := c.cluster.Spec.ControlPlaneRef; ref.IsDefined() {
		c.cp.name = ref.Name
	} else {
		if c.cp.name, err = names.FromTemplate(cpClass.Naming.Template, names.DefaultControlPlaneTemplate, names.Input{ClusterName: c.cluster.Name}, c.in.Names.For("controlPlane")); err != nil {
			return fmt.Errorf("ClusterClass %s: spec.controlPlane.namingStrategy.template: %w", c.classID(), err)
		}
	}
	if err := c.planControlPlaneInfrastructure(); err != nil {
		return err
	}
	cpMeta := c.controlPlaneMeta()
	c.cp.meta = objectMeta(c.cp.template, cpMeta.Labels, cpMeta.Annotations)
	if c.cpInfra != nil {
		// Taken before patching: Cluster API keeps spec.machineTemplate.metadata as computed from
		// the unpatched template (computeControlPlane; the patch engine preserves the field).
		c.cpMachineMeta, _, _ = unstructured.NestedMap(c.cp.template.Object, append(append(contract.Path{}, contract.TemplateSpec...), "machineTemplate", "metadata")...)
	}
	// builtin.controlPlane.metadata is the desired control plane's own metadata (Cluster API's
	// variables.ControlPlane reads it from the desired object).
	cpBuiltin := map[string]any{"version": c.version(c.in.Versions.ControlPlane), "name": c.cp.name, "metadata": builtinMeta(c.cp.meta)}
	if r := c.topo.ControlPlane.Replicas; r != nil {
		cpBuiltin["replicas"] = int64(*r)
	}
	if c.cpInfra != nil {
		cpBuiltin["machineTemplate"] = map[string]any{"infrastructureRef": map[string]any{"name": c.cpInfra.name}}
	}
	cpOverrides := c.topo.ControlPlane.Variables.Overrides
	builtins := map[string]any{"cluster": c.cb, "controlPlane": cpBuiltin}
	if err := c.addTarget(patches.ControlPlane, "", c.cp, c.clusterHolder("spec.controlPlaneRef"), cpOverrides, builtins); err != nil {
		return err
	}
	if c.cpInfra == nil {
		return nil
	}
	// The field holding the reference, by the control plane's contract (getControlPlaneHolderFieldPath).
	fieldPath := contract.ControlPlaneInfrastructureRef
	if c.in.ControlPlaneContract == contract.V1Beta2 {
		fieldPath = contract.ControlPlaneInfrastructureRefV1Beta2
	}
	holder := hooksv1.HolderReference{APIVersion: c.cp.template.GetAPIVersion(), Kind: strings.TrimSuffix(c.cp.template.GetKind(), "Template"),
		Name: c.cp.name, FieldPath: strings.Join(fieldPath, ".")}
	return c.addTarget(patches.ControlPlaneInfrastructure, "", c.cpInfra, holder, cpOverrides, builtins)
}

// planControlPlaneInfrastructure names the control plane's machine template: the current one's
// name, else a new one (a class without machine infrastructure has none).
func (c *computer) planControlPlaneInfrastructure() error {
	mi := c.class.Spec.ControlPlane.MachineInfrastructure
	if !mi.TemplateRef.IsDefined() {
		return nil
	}
	var err error
	c.cpInfra = &slot{}
	if c.cpInfra.template, err = c.template(mi.TemplateRef, "spec.controlPlane.machineInfrastructure.ref"); err != nil {
		return err
	}
	if cur := c.in.Current.ControlPlane; cur != nil {
		ref, err := contract.ControlPlaneMachineInfrastructureRef(cur)
		if err != nil {
			return err
		}
		if ref != nil {
			c.cpInfra.name = ref.Name
		}
	}
	if c.cpInfra.name == "" {
		// Cluster API's names package (v1.5 on) prefixes the control plane machine template with
		// "<cluster>-"; older releases used "<cluster>-control-plane-".
		c.cpInfra.name = names.WithRandomSuffix(c.cluster.Name+"-", c.in.Names.For("controlPlane/infrastructure"))
	}
	return nil
}

// addTarget registers a template for patching. holder names the object that will reference the
// template's clone, and at which field (what external patches are told).
func (c *computer) addTarget(role patches.Role, class string, s *slot, holder hooksv1.HolderReference, overrides []clusterv1.ClusterVariable, builtin map[string]any) error {
	vals, defaulted, err := c.valuesWith(overrides, builtin)
	if err != nil {
		return err
	}
	own := map[string]any{}
	for k, v := range builtin {
		if k != "cluster" {
			own[k] = v
		}
	}
	holder.Namespace = c.cluster.Namespace
	c.targets = append(c.targets, &patches.Target{Role: role, Class: class, Template: s.template, Variables: vals,
		Holder: holder, Overrides: defaulted, Builtin: own})
	return nil
}

// clusterHolder is the holder of the templates the Cluster itself references.
func (c *computer) clusterHolder(fieldPath string) hooksv1.HolderReference {
	return hooksv1.HolderReference{APIVersion: v1beta1, Kind: "Cluster", Name: c.cluster.Name, FieldPath: fieldPath}
}

// pool describes, for planPool, one worker pool of either kind.
type pool struct {
	kind           string // "machineDeployment" or "machinePool": builtin key and name seed key
	holderKind     string // "MachineDeployment" or "MachinePool"
	topologyName   string
	class          string
	classField     string // the class's field path, for errors
	bootstrapRef   clusterv1.ClusterClassTemplateReference
	infraRef       clusterv1.ClusterClassTemplateReference
	namingTemplate string
	defaultName    string
	namesInput     names.Input
	metadata       clusterv1.ObjectMeta // the pool object's labels and annotations
	replicas       *int32
	variables      []clusterv1.ClusterVariable
	roles          [2]patches.Role // bootstrap, infrastructure
	// current names (empty for a new pool)
	currentName, currentBootstrap, currentInfra string
}

// planPool names a pool and its templates (existing names kept), computes its builtins and
// registers its two templates for patching.
func (c *computer) planPool(p pool, version string, cb map[string]any) (name string, bootstrap, infra *slot, err error) {
	bootstrap, infra = &slot{name: p.currentBootstrap}, &slot{name: p.currentInfra}
	if bootstrap.template, err = c.template(p.bootstrapRef, p.classField+".template.bootstrap.ref"); err != nil {
		return "", nil, nil, err
	}
	if infra.template, err = c.template(p.infraRef, p.classField+".template.infrastructure.ref"); err != nil {
		return "", nil, nil, err
	}
	// Cluster API's names package: "<cluster>-<pool>-" for both templates of a pool.
	prefix := fmt.Sprintf("%s-%s-", c.cluster.Name, p.topologyName)
	key := p.kind + "/" + p.topologyName
	if bootstrap.name == "" {
		bootstrap.name = names.WithRandomSuffix(prefix, c.in.Names.For(key+"/bootstrap"))
	}
	if infra.name == "" {
		infra.name = names.WithRandomSuffix(prefix, c.in.Names.For(key+"/infrastructure"))
	}
	name = p.currentName
	if name == "" {
		if name, err = names.FromTemplate(p.namingTemplate, p.defaultName, p.namesInput, c.in.Names.For(key)); err != nil {
			return "", nil, nil, fmt.Errorf("ClusterClass %s: %s.namingStrategy.template: %w", c.classID(), p.classField, err)
		}
	}
	b := map[string]any{
		"version": version, "class": p.class, "name": name, "topologyName": p.topologyName,
		"bootstrap":         map[string]any{"configRef": map[string]any{"name": bootstrap.name}},
		"infrastructureRef": map[string]any{"name": infra.name},
	}
	// builtin.machineDeployment/machinePool.metadata is the desired pool's own metadata (Cluster
	// API's variables.MachineDeployment and variables.MachinePool read it from the desired object).
	b["metadata"] = builtinMeta(p.metadata)
	if p.replicas != nil {
		b["replicas"] = int64(*p.replicas)
	}
	builtins := map[string]any{"cluster": cb, p.kind: b}
	holder := hooksv1.HolderReference{APIVersion: v1beta1, Kind: p.holderKind, Name: name, FieldPath: "spec.template.spec.bootstrap.configRef"}
	if err := c.addTarget(p.roles[0], p.class, bootstrap, holder, p.variables, builtins); err != nil {
		return "", nil, nil, err
	}
	holder.FieldPath = "spec.template.spec.infrastructureRef"
	if err := c.addTarget(p.roles[1], p.class, infra, holder, p.variables, builtins); err != nil {
		return "", nil, nil, err
	}
	return name, bootstrap, infra, nil
}

// poolOf is what planPool needs of a pool of either kind: the same rules for both.
func (c *computer) poolOf(t pools.Topology) (pool, error) {
	pc := t.ClassIn(c.class)
	if pc == nil {
		kind := pools.Kind(t.MachinePool)
		return pool{}, fmt.Errorf("Cluster %s/%s: spec.topology.workers.%s[%d].class: %sClass %q is not defined in ClusterClass %s",
			c.cluster.Namespace, c.cluster.Name, pools.Field(t.MachinePool), t.Index, kind, t.Class, c.classID())
	}
	p := pool{
		holderKind: pools.Kind(t.MachinePool), topologyName: t.Name, class: t.Class, classField: classField(*pc),
		bootstrapRef: pc.Bootstrap, infraRef: pc.Infrastructure, namingTemplate: pc.NamingTemplate,
		namesInput: pools.NamesInput(t.MachinePool, c.cluster.Name, t.Name),
		metadata:   c.poolObjectMeta(pc.Metadata, t.Metadata, pools.NameLabel(t.MachinePool), t.Name), replicas: t.Replicas,
		variables: t.Overrides,
	}
	if t.MachinePool {
		p.kind, p.defaultName = "machinePool", names.DefaultMachinePoolTemplate
		p.roles = [2]patches.Role{patches.MachinePoolBootstrap, patches.MachinePoolInfrastructure}
	} else {
		p.kind, p.defaultName = "machineDeployment", names.DefaultMachineDeploymentTemplate
		p.roles = [2]patches.Role{patches.MachineDeploymentBootstrap, patches.MachineDeploymentInfrastructure}
	}
	return p, nil
}

// withCurrent keeps the names of the pool's current object and templates.
func (p *pool) withCurrent(name string, spec *clusterv1.MachineSpec) {
	p.currentName, p.currentInfra, p.currentBootstrap = name, spec.InfrastructureRef.Name, spec.Bootstrap.ConfigRef.Name
}

func (c *computer) planMachineDeployment(topo *clusterv1.MachineDeploymentTopology, index int, cb map[string]any) error {
	p, err := c.poolOf(pools.Topologies(c.topo)[index])
	if err != nil {
		return err
	}
	s := &mdSlots{topo: topo, current: c.in.Current.MachineDeployments[topo.Name]}
	for i := range c.class.Spec.Workers.MachineDeployments {
		if mc := &c.class.Spec.Workers.MachineDeployments[i]; mc.Class == topo.Class {
			s.class = mc
			break
		}
	}
	s.version = c.version(c.in.Versions.MachineDeployments[topo.Name])
	if cur := s.current; cur != nil {
		p.withCurrent(cur.Name, &cur.Spec.Template.Spec)
	}
	if s.name, s.bootstrap, s.infra, err = c.planPool(p, s.version, cb); err != nil {
		return err
	}
	c.mds = append(c.mds, s)
	return nil
}

func (c *computer) planMachinePool(topo *clusterv1.MachinePoolTopology, index int, cb map[string]any) error {
	p, err := c.poolOf(pools.Topologies(c.topo)[len(c.topo.Workers.MachineDeployments)+index])
	if err != nil {
		return err
	}
	s := &mpSlots{topo: topo, current: c.in.Current.MachinePools[topo.Name]}
	for i := range c.class.Spec.Workers.MachinePools {
		if mc := &c.class.Spec.Workers.MachinePools[i]; mc.Class == topo.Class {
			s.class = mc
			break
		}
	}
	s.version = c.version(c.in.Versions.MachinePools[topo.Name])
	if cur := s.current; cur != nil {
		p.withCurrent(cur.Name, &cur.Spec.Template.Spec)
	}
	if s.name, s.bootstrap, s.infra, err = c.planPool(p, s.version, cb); err != nil {
		return err
	}
	// A MachinePool's bootstrap config and infrastructure pool are objects of their own, labelled
	// with the pool (a MachineDeployment's are templates, labelled when its objects are built).
	mpLabels := mergeMaps(c.baseLabels(), map[string]string{labels.MachinePoolName: topo.Name})
	s.bootstrap.meta = objectMeta(s.bootstrap.template, mpLabels, nil)
	s.infra.meta = objectMeta(s.infra.template, mpLabels, nil)
	c.mps = append(c.mps, s)
	return nil
}

// clusterBuiltins are builtin.cluster.*, as Cluster API v1.14's variables.Global writes them.
// The deprecated topology.class and topology.classNamespace stay beside topology.classRef.
func (c *computer) clusterBuiltins() map[string]any {
	b := map[string]any{
		"name":      c.cluster.Name,
		"namespace": c.cluster.Namespace,
		"uid":       string(c.cluster.UID),
		"topology": map[string]any{
			"version":        c.topo.Version,
			"class":          c.topo.ClassRef.Name,
			"classNamespace": c.cluster.ClassNamespace(),
			"classRef":       map[string]any{"name": c.topo.ClassRef.Name, "namespace": c.cluster.ClassNamespace()},
		},
		"metadata": builtinMeta(c.clusterMetadata()),
	}
	if network := networkBuiltins(&c.cluster.Spec.ClusterNetwork); network != nil {
		b["network"] = network
	}
	return b
}

// clusterMetadata is builtin.cluster.metadata: Cluster API v1.14's variables.Global reads it from
// the desired Cluster (computeCluster), so it has the Cluster's labels plus cluster-name and
// topology-owned, and the Cluster's annotations with the upgrade-step annotation set while an
// upgrade runs (removed otherwise).
func (c *computer) clusterMetadata() clusterv1.ObjectMeta {
	ann := mergeMaps(c.cluster.Annotations)
	delete(ann, labels.UpgradeStep)
	if step := c.upgradeStep(versionOnly(c.version(c.in.Versions.ControlPlane))); step != "" {
		ann = mergeMaps(ann, map[string]string{labels.UpgradeStep: step})
	}
	return clusterv1.ObjectMeta{Labels: mergeMaps(c.cluster.Labels, c.baseLabels()), Annotations: ann}
}

// builtinMeta is the metadata of a builtin variable: labels and annotations less kubectl's
// last-applied configuration and the conversion data, which Cluster API v1.14's variables package
// leaves out of every builtin (cleanupAnnotations).
func builtinMeta(m clusterv1.ObjectMeta) map[string]any {
	ann := mergeMaps(m.Annotations)
	delete(ann, corev1.LastAppliedConfigAnnotation)
	delete(ann, conversion.DataAnnotation)
	return metaToMap(clusterv1.ObjectMeta{Labels: m.Labels, Annotations: ann})
}

// versionOnly stands for the desired control plane where only its version is read: the version
// is set before patching and patches cannot change it.
func versionOnly(version string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	_ = contract.Set(u, contract.ControlPlaneVersion, version)
	return u
}

// networkBuiltins is builtin.cluster.network: the service domain and the CIDR lists that are set,
// nil when none is. There is no ipFamily: Cluster API v1.14 dropped it (a template reading it
// renders "<no value>").
func networkBuiltins(n *clusterv1.ClusterNetwork) map[string]any {
	network := map[string]any{}
	if n.ServiceDomain != "" {
		network["serviceDomain"] = n.ServiceDomain
	}
	if len(n.Services.CIDRBlocks) > 0 {
		network["services"] = stringsToAny(n.Services.CIDRBlocks)
	}
	if len(n.Pods.CIDRBlocks) > 0 {
		network["pods"] = stringsToAny(n.Pods.CIDRBlocks)
	}
	if len(network) == 0 {
		return nil
	}
	return network
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// build turns the patched templates into objects.
func (c *computer) build() (*State, error) {
	s := &State{Variables: c.clusterVs, refVersions: c.in.Current.RefVersions}
	var err error
	if c.infra != nil {
		// No owner but the shim: the Cluster controller makes the Cluster the owner once the
		// Cluster points at the object (Cluster API's computeInfrastructureCluster).
		if s.InfrastructureCluster, err = c.objectFromTemplate(c.infra, shimOwnerOf(c.in.Current.InfrastructureCluster, c.cluster.Name)); err != nil {
			return nil, err
		}
		dropEmptyEndpoint(s.InfrastructureCluster)
		s.InfrastructureRef = c.clusterRef(refTo(s.InfrastructureCluster))
	}
	if c.cpInfra != nil {
		s.ControlPlaneInfrastructureTemplate = c.rotate(c.cloneTemplate(c.cpInfra.template, c.cpInfra.name, c.baseLabels()),
			c.cluster.Name+"-", "controlPlane/infrastructure")
	}
	if s.ControlPlane, err = c.controlPlane(s.ControlPlaneInfrastructureTemplate); err != nil {
		return nil, err
	}
	s.ControlPlaneRef = c.clusterRef(refTo(s.ControlPlane))
	s.Cluster = c.clusterIntent(s.InfrastructureRef, s.ControlPlaneRef, c.upgradeStep(s.ControlPlane))
	s.ShimNeeded = c.shimNeeded()
	if c.cpInfra != nil {
		// Cluster API's selectors.ForControlPlaneMHC.
		mhc, err := c.machineHealthCheck(controlPlaneHealthCheck(&c.class.Spec.ControlPlane.HealthCheck, &c.topo.ControlPlane.HealthCheck),
			"spec.topology.controlPlane.machineHealthCheck", s.ControlPlane.GetName(),
			metav1.LabelSelector{MatchLabels: map[string]string{labels.TopologyOwned: "", labels.ControlPlane: ""}})
		if err != nil {
			return nil, err
		}
		s.ControlPlaneMachineHealthCheck = mhc
	}
	for i, md := range c.mds {
		out, err := c.machineDeployment(md, i)
		if err != nil {
			return nil, err
		}
		s.MachineDeployments = append(s.MachineDeployments, *out)
	}
	for _, mp := range c.mps {
		out, err := c.machinePool(mp)
		if err != nil {
			return nil, err
		}
		s.MachinePools = append(s.MachinePools, *out)
	}
	return s, nil
}

// shimNeeded says the infrastructure cluster or the control plane is still to be created, as
// Cluster API v1.14's reconcileClusterShim decides it: an object the Cluster does not reference yet.
// It reads the Cluster's references, not Current: Cluster API reads the objects the Cluster
// references and fails when one is missing, so "not created" is "not referenced", and an existing
// object must not get the shim as a new owner even where the caller did not pass it as current
// (computeInfrastructureCluster and computeControlPlane carry only a shim reference the object has).
func (c *computer) shimNeeded() bool {
	return (c.infra != nil && !c.cluster.Spec.InfrastructureRef.IsDefined()) || !c.cluster.Spec.ControlPlaneRef.IsDefined()
}

// ClusterOwner is the owner reference to cluster, in apiVersion (empty: v1beta1).
func ClusterOwner(cluster *clusterv1.Cluster, apiVersion string) metav1.OwnerReference {
	if apiVersion == "" {
		apiVersion = v1beta1
	}
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
}

func (c *computer) clusterOwner() metav1.OwnerReference {
	return ClusterOwner(c.cluster, c.in.ClusterAPIVersion)
}

func (c *computer) baseLabels() map[string]string {
	return map[string]string{labels.ClusterName: c.cluster.Name, labels.TopologyOwned: ""}
}

// upgradeStep is the value of the Cluster's upgrade-step annotation: the desired control plane
// version while an upgrade runs, else none (Cluster API v1.14's computeCluster). An upgrade runs
// while AfterClusterUpgrade is pending (the RuntimeSDK gate's rule) or while the upgrade plans are
// not empty (the rule with the gate off: upgrade.Input.Planned, from the current objects).
func (c *computer) upgradeStep(controlPlane *unstructured.Unstructured) string {
	if controlPlane == nil {
		return ""
	}
	running := upgrade.Pending(c.cluster, hooksv1.AfterClusterUpgrade)
	if !running {
		cur := c.in.Current
		in, err := upgrade.InputFrom(c.cluster, c.class, cur.ControlPlane, cur.MachineDeployments, cur.MachinePools, nil, nil)
		running = err == nil && in.Planned()
	}
	if !running {
		return ""
	}
	v, _, _ := contract.String(controlPlane, contract.ControlPlaneVersion)
	return v
}

// clusterIntent is what the topology controller applies to the Cluster (Cluster API's
// computeCluster, filtered to allowedPathsCluster): the two topology labels, the references and,
// while an upgrade runs, the upgrade step annotation.
func (c *computer) clusterIntent(infra, cp *corev1.ObjectReference, upgradeStep string) *unstructured.Unstructured {
	spec := map[string]any{}
	if infra != nil {
		spec["infrastructureRef"] = refToMap(infra)
	}
	if cp != nil {
		spec["controlPlaneRef"] = refToMap(cp)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetAPIVersion(v1beta1)
	u.SetKind("Cluster")
	u.SetName(c.cluster.Name)
	u.SetNamespace(c.cluster.Namespace)
	u.SetLabels(c.baseLabels())
	if upgradeStep != "" {
		u.SetAnnotations(map[string]string{labels.UpgradeStep: upgradeStep})
	}
	return u
}

func refToMap(r *corev1.ObjectReference) map[string]any {
	m := map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name}
	if r.Namespace != "" {
		m["namespace"] = r.Namespace
	}
	return m
}

// clusterRef is a reference of the Cluster's to want, at the version the Cluster's current
// reference of the same group and kind carries as read in v1beta1 (Current.RefVersions, pool kind
// "Cluster"): another controller may have moved it to a newer version of the same kind (Cluster
// API's calculateRefDesiredAPIVersion; the hub's contract references have no version).
func (c *computer) clusterRef(want *corev1.ObjectReference) *corev1.ObjectReference {
	gv, err := schema.ParseGroupVersion(want.APIVersion)
	if err != nil {
		return want
	}
	if v, ok := c.in.Current.RefVersions[refVersionKey("Cluster", c.cluster.Name, gv.Group, want.Kind)]; ok {
		want.APIVersion = v
	}
	return want
}

// keepRefVersion is the reference to want, keeping the current reference's apiVersion when group
// and kind agree: another controller may have moved it to a newer version of the same kind
// (Cluster API's calculateRefDesiredAPIVersion).
func keepRefVersion(current, want *corev1.ObjectReference) *corev1.ObjectReference {
	if current == nil {
		return want
	}
	cur, err := schema.ParseGroupVersion(current.APIVersion)
	if err != nil {
		return want
	}
	w, _ := schema.ParseGroupVersion(want.APIVersion)
	out := want.DeepCopy()
	if cur.Group == w.Group && current.Kind == want.Kind {
		out.APIVersion = current.APIVersion
	}
	return out
}

// dropEmptyEndpoint leaves spec.controlPlaneEndpoint's host out when empty and its port when 0,
// so the topology controller does not co-own the endpoint the provider sets (Cluster API's
// InfrastructureClusterContract.IgnorePaths); an endpoint left empty goes too.
func dropEmptyEndpoint(u *unstructured.Unstructured) {
	ep, ok, _ := unstructured.NestedMap(u.Object, contract.InfraClusterEndpoint...)
	if !ok {
		return
	}
	if h, isString := ep["host"].(string); isString && h == "" {
		delete(ep, "host")
	}
	switch p := ep["port"].(type) {
	case int64:
		if p == 0 {
			delete(ep, "port")
		}
	case float64:
		if p == 0 {
			delete(ep, "port")
		}
	}
	if len(ep) == 0 {
		unstructured.RemoveNestedField(u.Object, contract.InfraClusterEndpoint...)
		return
	}
	_ = unstructured.SetNestedMap(u.Object, ep, contract.InfraClusterEndpoint...)
}

// controlPlaneMeta is the control plane's labels and annotations: the topology's over the
// class's, plus cluster-name and topology-owned (Cluster API's computeControlPlane).
func (c *computer) controlPlaneMeta() clusterv1.ObjectMeta {
	meta := mergeMeta(c.class.Spec.ControlPlane.Metadata, c.topo.ControlPlane.Metadata)
	meta.Labels = mergeMaps(meta.Labels, c.baseLabels())
	return meta
}

func (c *computer) controlPlane(infraTemplate *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	topo := c.topo.ControlPlane
	// No owner but the shim, as for the infrastructure cluster.
	obj, err := c.objectFromTemplate(c.cp, shimOwnerOf(c.in.Current.ControlPlane, c.cluster.Name))
	if err != nil {
		return nil, err
	}
	if err := contract.Set(obj, contract.ControlPlaneVersion, c.version(c.in.Versions.ControlPlane)); err != nil {
		return nil, err
	}
	if topo.Replicas != nil {
		if err := contract.Set(obj, contract.ControlPlaneReplicas, int64(*topo.Replicas)); err != nil {
			return nil, err
		}
	}
	v1beta2 := c.in.ControlPlaneContract == contract.V1Beta2
	if infraTemplate != nil {
		if err := c.setControlPlaneInfrastructureRef(obj, infraTemplate, v1beta2); err != nil {
			return nil, err
		}
		// The control plane's labels and annotations go to its machines too, over the template's
		// own machineTemplate.metadata (keys only in the template stay).
		cpMeta := c.controlPlaneMeta()
		tmplMeta := clusterv1.ObjectMeta{}
		if l, ok := c.cpMachineMeta["labels"].(map[string]any); ok {
			tmplMeta.Labels = anyToStringMap(l)
		}
		if a, ok := c.cpMachineMeta["annotations"].(map[string]any); ok {
			tmplMeta.Annotations = anyToStringMap(a)
		}
		if err := contract.Set(obj, contract.ControlPlaneMachineMetadata, metaToMap(mergeMeta(tmplMeta, cpMeta))); err != nil {
			return nil, err
		}
	}
	if err := c.setControlPlaneMachineFields(obj, v1beta2); err != nil {
		return nil, err
	}
	return obj, nil
}

// setControlPlaneMachineFields sets the control plane's readiness gates, taints, rollout.after and
// node timeouts (class value, topology override), by the control plane's contract. They are set
// with or without machine infrastructure: the control plane provider decides what they mean.
func (c *computer) setControlPlaneMachineFields(obj *unstructured.Unstructured, v1beta2 bool) error {
	cpClass, topo := c.class.Spec.ControlPlane, c.topo.ControlPlane
	gates, taints := contract.ControlPlaneReadinessGates, contract.ControlPlaneMachineTaints
	if v1beta2 {
		gates, taints = contract.ControlPlaneReadinessGatesV1Beta2, contract.ControlPlaneMachineTaintsV1Beta2
	}
	if err := setList(obj, gates, firstGates(topo.ReadinessGates, cpClass.ReadinessGates)); err != nil {
		return err
	}
	if err := setList(obj, taints, firstTaints(topo.Taints, cpClass.Taints)); err != nil {
		return err
	}
	if after := topo.Rollout.After; !after.IsZero() {
		if err := contract.Set(obj, contract.ControlPlaneRolloutAfter, after.UTC().Format(time.RFC3339)); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		field       string
		class, topo *int32
	}{
		{"nodeDrainTimeout", cpClass.Deletion.NodeDrainTimeoutSeconds, topo.Deletion.NodeDrainTimeoutSeconds},
		{"nodeVolumeDetachTimeout", cpClass.Deletion.NodeVolumeDetachTimeoutSeconds, topo.Deletion.NodeVolumeDetachTimeoutSeconds},
		{"nodeDeletionTimeout", cpClass.Deletion.NodeDeletionTimeoutSeconds, topo.Deletion.NodeDeletionTimeoutSeconds},
	} {
		d := firstInt32(t.topo, t.class)
		var err error
		switch {
		case d == nil:
		case v1beta2:
			// The v1beta2 contract's field: whole seconds under deletion.
			err = contract.Set(obj, append(append(contract.Path{}, contract.ControlPlaneDeletionV1Beta2...), t.field+"Seconds"), int64(*d))
		default:
			// The v1beta1 contract's field: a duration (whole seconds, as the hub holds it).
			err = contract.Set(obj, append(append(contract.Path{}, contract.ControlPlaneMachineTemplate...), t.field), (time.Duration(*d) * time.Second).String())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setControlPlaneInfrastructureRef points the control plane at its machine template (Cluster
// API's computeControlPlane): by the v1beta2 contract a contract reference (API group, kind,
// name); by the v1beta1 one an object reference whose version is kept from the current one of
// the same group and kind (calculateRefDesiredAPIVersion).
func (c *computer) setControlPlaneInfrastructureRef(obj, infraTemplate *unstructured.Unstructured, v1beta2 bool) error {
	if v1beta2 {
		return contract.Set(obj, contract.ControlPlaneInfrastructureRefV1Beta2, map[string]any{
			"apiGroup": infraTemplate.GroupVersionKind().Group, "kind": infraTemplate.GetKind(), "name": infraTemplate.GetName()})
	}
	var current *corev1.ObjectReference
	if cur := c.in.Current.ControlPlane; cur != nil {
		current, _ = contract.ObjectRef(cur, contract.ControlPlaneInfrastructureRef)
	}
	return contract.SetRef(obj, contract.ControlPlaneInfrastructureRef, keepRefVersion(current, refTo(infraTemplate)))
}

func anyToStringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// poolObjectMeta is a pool's labels and annotations: the topology's over the class's, plus
// cluster-name, topology-owned and the pool's name label; the upgrade annotations
// (defer-upgrade, hold-upgrade-sequence) steer topoflow and are never copied (Cluster API's
// computeMachineDeployment and computeMachinePool).
func (c *computer) poolObjectMeta(class, topo clusterv1.ObjectMeta, nameLabel, topologyName string) clusterv1.ObjectMeta {
	m := mergeMeta(class, topo)
	delete(m.Annotations, labels.DeferUpgrade)
	delete(m.Annotations, labels.HoldUpgradeSequence)
	if len(m.Annotations) == 0 {
		m.Annotations = nil
	}
	m.Labels = mergeMaps(m.Labels, c.baseLabels(), map[string]string{nameLabel: topologyName})
	return m
}

func (c *computer) machineDeployment(s *mdSlots, index int) (*MachineDeployment, error) {
	topo, mdClass := s.topo, s.class
	mdLabels := mergeMaps(c.baseLabels(), map[string]string{labels.MachineDeploymentName: topo.Name})
	meta := c.poolObjectMeta(mdClass.Metadata, topo.Metadata, labels.MachineDeploymentName, topo.Name)
	// Cluster API's names package: "<cluster>-<pool>-" for both templates of a pool.
	prefix := fmt.Sprintf("%s-%s-", c.cluster.Name, topo.Name)
	bootstrap := c.rotate(c.cloneTemplate(s.bootstrap.template, s.bootstrap.name, mdLabels), prefix, "machineDeployment/"+topo.Name+"/bootstrap")
	infra := c.rotate(c.cloneTemplate(s.infra.template, s.infra.name, mdLabels), prefix, "machineDeployment/"+topo.Name+"/infrastructure")
	// No owner references: Cluster API's MachineDeployment controller adds the Cluster
	// (computeMachineDeployment, whose rules for each field follow: the topology's value when set,
	// else the class's).
	md := &clusterv1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.name,
			Namespace:   c.cluster.Namespace,
			Labels:      copyMap(meta.Labels),
			Annotations: copyMap(meta.Annotations),
		},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName: c.cluster.Name,
			Replicas:    topo.Replicas,
			Rollout:     machineDeploymentRollout(topo, mdClass),
			Deletion:    clusterv1.DeletionOrderSpec{Order: firstNonEmpty(topo.Deletion.Order, mdClass.Deletion.Order)},
			Remediation: clusterv1.MachineDeploymentRemediationSpec{
				MaxInFlight: firstIntOrString(topo.HealthCheck.Remediation.MaxInFlight, mdClass.HealthCheck.Remediation.MaxInFlight),
			},
			Selector: metav1.LabelSelector{MatchLabels: copyMap(mdLabels)},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: copyMap(meta.Labels), Annotations: copyMap(meta.Annotations)},
				Spec: clusterv1.MachineSpec{
					ClusterName:       c.cluster.Name,
					Version:           s.version,
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: contractRef(bootstrap)},
					InfrastructureRef: contractRef(infra),
					FailureDomain:     firstNonEmpty(topo.FailureDomain, mdClass.FailureDomain),
					MinReadySeconds:   firstInt32(topo.MinReadySeconds, mdClass.MinReadySeconds),
					Deletion: clusterv1.MachineDeletionSpec{
						NodeDrainTimeoutSeconds:        firstInt32(topo.Deletion.NodeDrainTimeoutSeconds, mdClass.Deletion.NodeDrainTimeoutSeconds),
						NodeVolumeDetachTimeoutSeconds: firstInt32(topo.Deletion.NodeVolumeDetachTimeoutSeconds, mdClass.Deletion.NodeVolumeDetachTimeoutSeconds),
						NodeDeletionTimeoutSeconds:     firstInt32(topo.Deletion.NodeDeletionTimeoutSeconds, mdClass.Deletion.NodeDeletionTimeoutSeconds),
					},
					ReadinessGates: firstGates(topo.ReadinessGates, mdClass.ReadinessGates),
					Taints:         firstTaints(topo.Taints, mdClass.Taints),
				},
			},
		},
	}
	// Cluster API's selectors.ForMachineDeploymentMHC.
	mhc, err := c.machineHealthCheck(machineDeploymentHealthCheck(mdClass, topo),
		fmt.Sprintf("spec.topology.workers.machineDeployments[%d].machineHealthCheck", index), s.name,
		metav1.LabelSelector{MatchLabels: map[string]string{labels.TopologyOwned: "", labels.MachineDeploymentName: topo.Name}})
	if err != nil {
		return nil, err
	}
	return &MachineDeployment{TopologyName: topo.Name, Object: md, BootstrapTemplate: bootstrap, InfraTemplate: infra, MachineHealthCheck: mhc}, nil
}

func (c *computer) machinePool(s *mpSlots) (*MachinePool, error) {
	topo, mpClass := s.topo, s.class
	// The bootstrap config and infrastructure pool are owned by the Cluster until the MachinePool
	// controller takes them over (Cluster API's computeMachinePool).
	owner := []metav1.OwnerReference{c.clusterOwner()}
	bootstrap, err := c.objectFromTemplate(s.bootstrap, owner)
	if err != nil {
		return nil, err
	}
	infra, err := c.objectFromTemplate(s.infra, owner)
	if err != nil {
		return nil, err
	}
	meta := c.poolObjectMeta(mpClass.Metadata, topo.Metadata, labels.MachinePoolName, topo.Name)
	failureDomains := topo.FailureDomains
	if failureDomains == nil {
		failureDomains = mpClass.FailureDomains
	}
	// No owner references: Cluster API's MachinePool controller adds the Cluster.
	mp := &clusterv1.MachinePool{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachinePool"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        s.name,
			Namespace:   c.cluster.Namespace,
			Labels:      copyMap(meta.Labels),
			Annotations: copyMap(meta.Annotations),
		},
		Spec: clusterv1.MachinePoolSpec{
			ClusterName:    c.cluster.Name,
			Replicas:       topo.Replicas,
			FailureDomains: append([]string(nil), failureDomains...),
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: copyMap(meta.Labels), Annotations: copyMap(meta.Annotations)},
				Spec: clusterv1.MachineSpec{
					ClusterName:       c.cluster.Name,
					Version:           s.version,
					Bootstrap:         clusterv1.Bootstrap{ConfigRef: contractRef(bootstrap)},
					InfrastructureRef: contractRef(infra),
					MinReadySeconds:   firstInt32(topo.MinReadySeconds, mpClass.MinReadySeconds),
					Deletion: clusterv1.MachineDeletionSpec{
						NodeDrainTimeoutSeconds:        firstInt32(topo.Deletion.NodeDrainTimeoutSeconds, mpClass.Deletion.NodeDrainTimeoutSeconds),
						NodeVolumeDetachTimeoutSeconds: firstInt32(topo.Deletion.NodeVolumeDetachTimeoutSeconds, mpClass.Deletion.NodeVolumeDetachTimeoutSeconds),
						NodeDeletionTimeoutSeconds:     firstInt32(topo.Deletion.NodeDeletionTimeoutSeconds, mpClass.Deletion.NodeDeletionTimeoutSeconds),
					},
					Taints: firstTaints(topo.Taints, mpClass.Taints),
				},
			},
		},
	}
	return &MachinePool{TopologyName: topo.Name, Object: mp, BootstrapConfig: bootstrap, InfraMachinePool: infra}, nil
}

// healthCheck is what a part's MachineHealthCheck is computed from: the class's and the
// topology's checks and remediation, whether each defines a check as Cluster API v1.14's
// IsDefined sees it, and the topology's enabled.
type healthCheck struct {
	class, topo               healthCheckDefinition
	classDefined, topoDefined bool
	enabled                   *bool
}

// healthCheckDefinition is a check's definition (a MachineDeployment's remediation also has
// maxInFlight, which goes to the MachineDeployment).
type healthCheckDefinition struct {
	checks      clusterv1.HealthCheckChecks
	remediation clusterv1.HealthCheckRemediation
}

// controlPlaneHealthCheck is the control plane's health check inputs.
func controlPlaneHealthCheck(class *clusterv1.ControlPlaneClassHealthCheck, topo *clusterv1.ControlPlaneTopologyHealthCheck) healthCheck {
	return healthCheck{
		class: healthCheckDefinition{class.Checks, class.Remediation}, topo: healthCheckDefinition{topo.Checks, topo.Remediation},
		classDefined: isDefined(class.Checks, class.Remediation), topoDefined: isDefined(topo.Checks, topo.Remediation), enabled: topo.Enabled,
	}
}

// machineDeploymentHealthCheck is a MachineDeployment's health check inputs: remediation.maxInFlight
// alone defines a check, one with no conditions and the default startup timeout.
func machineDeploymentHealthCheck(class *clusterv1.MachineDeploymentClass, topo *clusterv1.MachineDeploymentTopology) healthCheck {
	cr, tr := class.HealthCheck.Remediation, topo.HealthCheck.Remediation
	return healthCheck{
		class:        healthCheckDefinition{class.HealthCheck.Checks, clusterv1.HealthCheckRemediation{TriggerIf: cr.TriggerIf, TemplateRef: cr.TemplateRef}},
		topo:         healthCheckDefinition{topo.HealthCheck.Checks, clusterv1.HealthCheckRemediation{TriggerIf: tr.TriggerIf, TemplateRef: tr.TemplateRef}},
		classDefined: isDefined(class.HealthCheck.Checks, cr), topoDefined: isDefined(topo.HealthCheck.Checks, tr), enabled: topo.HealthCheck.Enabled,
	}
}

// isDefined is Cluster API v1.14's IsDefined of a health check: checks or remediation set.
func isDefined(checks, remediation any) bool {
	return !reflect.ValueOf(checks).IsZero() || !reflect.ValueOf(remediation).IsZero()
}

// definition is the check to create: the topology's when it defines one (it replaces the class's
// as a whole), else the class's.
func (h healthCheck) definition() healthCheckDefinition {
	if h.topoDefined {
		return h.topo
	}
	return h.class
}

// machineHealthCheck computes the MachineHealthCheck of the control plane or a MachineDeployment.
// As Cluster API v1.14's IsControlPlaneMachineHealthCheckEnabled and
// IsMachineDeploymentMachineHealthCheckEnabled decide it, a check exists when the class or the
// topology defines one and the topology's enabled is not false; enabled: true requires a definition
// somewhere. As in computeMachineHealthCheck, the check is owned by the Cluster (so it is
// collected even if its target never existed), is labelled topology-owned and cluster-name only,
// and carries the MachineHealthCheck webhook's defaults, so the intent matches what the server holds.
func (c *computer) machineHealthCheck(h healthCheck, topoField, name string, selector metav1.LabelSelector) (*clusterv1.MachineHealthCheck, error) {
	defined := h.classDefined || h.topoDefined
	if h.enabled != nil && *h.enabled && !defined {
		return nil, fmt.Errorf("Cluster %s/%s: %s.enable: a MachineHealthCheck is enabled but neither the topology nor the ClusterClass defines one",
			c.cluster.Namespace, c.cluster.Name, topoField)
	}
	if !defined || (h.enabled != nil && !*h.enabled) {
		return nil, nil
	}
	d := h.definition()
	mhc := &clusterv1.MachineHealthCheck{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineHealthCheck"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			Namespace:       c.cluster.Namespace,
			Labels:          c.baseLabels(),
			OwnerReferences: []metav1.OwnerReference{c.clusterOwner()},
		},
		Spec: clusterv1.MachineHealthCheckSpec{
			ClusterName: c.cluster.Name,
			Selector:    selector,
			Checks:      *d.checks.DeepCopy(),
			Remediation: *d.remediation.DeepCopy(),
		},
	}
	defaultMachineHealthCheck(mhc)
	return mhc, nil
}

// DefaultNodeStartupTimeoutSeconds is the MachineHealthCheck webhook's default
// nodeStartupTimeoutSeconds (10 minutes).
const DefaultNodeStartupTimeoutSeconds int32 = 600

// defaultMachineHealthCheck applies the MachineHealthCheck webhook's defaults as Cluster API
// v1.14's computeMachineHealthCheck calls them (core/webhooks/admission MachineHealthCheck.Default):
// nodeStartupTimeoutSeconds 600 only. Before v1.11 the webhook also wrote maxUnhealthy 100%; v1.14
// writes no remediation trigger, so neither does topoflow (a takeover would otherwise change every
// check).
func defaultMachineHealthCheck(m *clusterv1.MachineHealthCheck) {
	if m.Spec.Checks.NodeStartupTimeoutSeconds == nil {
		d := DefaultNodeStartupTimeoutSeconds
		m.Spec.Checks.NodeStartupTimeoutSeconds = &d
	}
}

// objectMeta is the metadata of an object made from a template: the template's
// spec.template.metadata, then the given labels and annotations, then the cloned-from
// annotations (Cluster API's templateToObject and external.GenerateTemplate).
func objectMeta(tmpl *unstructured.Unstructured, objLabels, objAnnotations map[string]string) clusterv1.ObjectMeta {
	tmplLabels, _, _ := unstructured.NestedStringMap(tmpl.Object, contract.TemplateLabels...)
	tmplAnnotations, _, _ := unstructured.NestedStringMap(tmpl.Object, contract.TemplateAnnotations...)
	return clusterv1.ObjectMeta{
		Labels:      mergeMaps(tmplLabels, objLabels),
		Annotations: mergeMaps(tmplAnnotations, objAnnotations, clonedFrom(tmpl)),
	}
}

// objectFromTemplate creates an object from a slot's (patched) template spec.template.spec,
// with the slot's metadata; the kind loses its "Template" suffix (Cluster API's templateToObject).
func (c *computer) objectFromTemplate(s *slot, owners []metav1.OwnerReference) (*unstructured.Unstructured, error) {
	tmpl := s.template
	spec, _, err := unstructured.NestedMap(tmpl.Object, contract.TemplateSpec...)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", tmpl.GetKind(), tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(tmpl.GetAPIVersion())
	obj.SetKind(strings.TrimSuffix(tmpl.GetKind(), "Template"))
	obj.SetName(s.name)
	obj.SetNamespace(c.cluster.Namespace)
	l, a := patchedObjectMeta(s)
	obj.SetLabels(l)
	obj.SetAnnotations(a)
	if len(owners) > 0 {
		obj.SetOwnerReferences(owners)
	}
	if spec == nil {
		spec = map[string]any{}
	}
	obj.Object["spec"] = spec
	return obj, nil
}

// cloneTemplate copies a template under a new name, as Cluster API's templateToTemplate does.
func (c *computer) cloneTemplate(tmpl *unstructured.Unstructured, name string, extraLabels map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(tmpl.GetAPIVersion())
	obj.SetKind(tmpl.GetKind())
	obj.SetName(name)
	obj.SetNamespace(c.cluster.Namespace)
	obj.SetLabels(mergeMaps(tmpl.GetLabels(), extraLabels))
	ann := mergeMaps(tmpl.GetAnnotations(), clonedFrom(tmpl))
	delete(ann, corev1.LastAppliedConfigAnnotation)
	obj.SetAnnotations(ann)
	obj.SetOwnerReferences([]metav1.OwnerReference{c.clusterOwner()})
	if spec, ok := tmpl.Object["spec"]; ok {
		obj.Object["spec"] = runtimeDeepCopy(spec)
	}
	return obj
}

// rotate gives a cloned template a new name when the template it would replace exists and its
// spec differs (Cluster API's template rotation); a metadata-only change keeps the name.
func (c *computer) rotate(tmpl *unstructured.Unstructured, prefix, key string) *unstructured.Unstructured {
	cur := c.in.Current.Templates[RefKey(refTo(tmpl))]
	if cur == nil || Compare(cur, tmpl) != SpecChanged {
		return tmpl
	}
	tmpl.SetName(names.WithRandomSuffix(prefix, c.in.Names.For(key+"/"+specHash(tmpl))))
	return tmpl
}

func clonedFrom(tmpl *unstructured.Unstructured) map[string]string {
	gk := schema.FromAPIVersionAndKind(tmpl.GetAPIVersion(), tmpl.GetKind()).GroupKind()
	return map[string]string{labels.ClonedFromName: tmpl.GetName(), labels.ClonedFromGroupKind: gk.String()}
}

func refTo(u *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace()}
}

// contractRef is a contract reference (API group, kind, name) to an object.
func contractRef(u *unstructured.Unstructured) clusterv1.ContractVersionedObjectReference {
	return clusterv1.ContractVersionedObjectReference{APIGroup: u.GroupVersionKind().Group, Kind: u.GetKind(), Name: u.GetName()}
}

func runtimeDeepCopy(v any) any {
	return (&unstructured.Unstructured{Object: map[string]any{"v": v}}).DeepCopy().Object["v"]
}

// mergeMeta merges class metadata with topology metadata; topology wins.
func mergeMeta(class, topo clusterv1.ObjectMeta) clusterv1.ObjectMeta {
	return clusterv1.ObjectMeta{Labels: mergeMaps(class.Labels, topo.Labels), Annotations: mergeMaps(class.Annotations, topo.Annotations)}
}

func metaToMap(m clusterv1.ObjectMeta) map[string]any {
	out := map[string]any{}
	if len(m.Labels) > 0 {
		out["labels"] = stringMapToAny(m.Labels)
	}
	if len(m.Annotations) > 0 {
		out["annotations"] = stringMapToAny(m.Annotations)
	}
	return out
}

func stringMapToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeMaps merges maps left to right (later maps win); nil when all are empty.
func mergeMaps(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		for k, v := range m {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

func copyMap(m map[string]string) map[string]string { return mergeMaps(m) }

func firstInt32(vs ...*int32) *int32 {
	for _, v := range vs {
		if v != nil {
			x := *v
			return &x
		}
	}
	return nil
}

// firstNonEmpty is the first value set.
func firstNonEmpty[T ~string](vs ...T) T {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// machineDeploymentRollout is a MachineDeployment's rollout as Cluster API v1.14's
// computeMachineDeployment computes it: the topology's (after and strategy) when it sets any
// rollout field, else the class's strategy. A topology's rollout so replaces the class's whole.
func machineDeploymentRollout(topo *clusterv1.MachineDeploymentTopology, class *clusterv1.MachineDeploymentClass) clusterv1.MachineDeploymentRolloutSpec {
	var out clusterv1.MachineDeploymentRolloutSpec
	if !reflect.ValueOf(class.Rollout).IsZero() {
		out.Strategy = rolloutStrategy(class.Rollout.Strategy)
	}
	if !reflect.ValueOf(topo.Rollout).IsZero() {
		out = clusterv1.MachineDeploymentRolloutSpec{After: topo.Rollout.After, Strategy: rolloutStrategy(topo.Rollout.Strategy)}
	}
	return out
}

func rolloutStrategy(s clusterv1.MachineDeploymentRolloutStrategy) clusterv1.MachineDeploymentRolloutStrategy {
	return clusterv1.MachineDeploymentRolloutStrategy{Type: s.Type, RollingUpdate: clusterv1.MachineDeploymentRolloutStrategyRollingUpdate{
		MaxUnavailable: copyIntOrString(s.RollingUpdate.MaxUnavailable), MaxSurge: copyIntOrString(s.RollingUpdate.MaxSurge)}}
}

func firstIntOrString(vs ...*intstr.IntOrString) *intstr.IntOrString {
	for _, v := range vs {
		if v != nil {
			return copyIntOrString(v)
		}
	}
	return nil
}

func copyIntOrString(v *intstr.IntOrString) *intstr.IntOrString {
	if v == nil {
		return nil
	}
	x := *v
	return &x
}

// setList sets a typed list (readiness gates, taints) at p in its JSON form, as Cluster API's
// contract setters do; a nil list (neither topology nor class set one) leaves the field to
// providers that do not know it (computeControlPlane).
func setList[T any](obj *unstructured.Unstructured, p contract.Path, items []T) error {
	if items == nil {
		return nil
	}
	data, err := json.Marshal(items)
	if err != nil {
		return err
	}
	var list []any
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	return contract.Set(obj, p, list)
}

// firstTaints is the first list set (the topology's over the class's), copied.
func firstTaints(ts ...[]clusterv1.MachineTaint) []clusterv1.MachineTaint {
	for _, t := range ts {
		if t != nil {
			return append([]clusterv1.MachineTaint{}, t...)
		}
	}
	return nil
}

func firstGates(gs ...[]clusterv1.MachineReadinessGate) []clusterv1.MachineReadinessGate {
	for _, g := range gs {
		if g != nil {
			return append([]clusterv1.MachineReadinessGate(nil), g...)
		}
	}
	return nil
}

// Objects returns the desired objects to write in this pass, in Cluster API's write order
// (reconcileState): infrastructure cluster, control plane machine template, control plane and its
// health check, the Cluster, then per MachineDeployment its templates, itself and its health check,
// then per MachinePool its bootstrap config, infrastructure pool and itself. Parts that wait are
// left out (see PendingObjects). Typed objects are converted to apply intents.
func (s *State) Objects() ([]*unstructured.Unstructured, error) {
	return s.objects(false)
}

// AllObjects returns every desired object, in the same order, those that wait included.
func (s *State) AllObjects() ([]*unstructured.Unstructured, error) {
	return s.objects(true)
}

func (s *State) objects(all bool) ([]*unstructured.Unstructured, error) {
	out := s.ClusterObjects()
	if all && s.ControlPlanePending {
		out = append(out[:0:0], s.InfrastructureCluster, s.ControlPlaneInfrastructureTemplate, s.ControlPlane)
		out = slices.DeleteFunc(out, func(u *unstructured.Unstructured) bool { return u == nil })
	}
	if s.ControlPlaneMachineHealthCheck != nil {
		u, err := ToIntent(s.ControlPlaneMachineHealthCheck)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if s.Cluster != nil {
		out = append(out, s.Cluster)
	}
	for _, md := range s.MachineDeployments {
		objs, err := md.Objects()
		if all {
			objs, err = md.allObjects()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	for _, mp := range s.MachinePools {
		objs, err := mp.Objects()
		if all {
			objs, err = mp.allObjects()
		}
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ClusterObjects returns the infrastructure cluster and control plane objects to write, in apply
// order (a pending control plane and its machine template are left out).
func (s *State) ClusterObjects() []*unstructured.Unstructured {
	objs := []*unstructured.Unstructured{s.InfrastructureCluster}
	if !s.ControlPlanePending {
		objs = append(objs, s.ControlPlaneInfrastructureTemplate, s.ControlPlane)
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// PendingObjects names ("Kind name") the desired objects not written in this pass, and why
// ("pending upgrade" or "pending create").
func (s *State) PendingObjects() map[string]string {
	out := map[string]string{}
	add := func(why string, objs ...*unstructured.Unstructured) {
		for _, o := range objs {
			if o != nil {
				out[o.GetKind()+" "+o.GetName()] = why
			}
		}
	}
	if s.ControlPlanePending {
		add("pending upgrade", s.ControlPlaneInfrastructureTemplate, s.ControlPlane)
	}
	for _, md := range s.MachineDeployments {
		switch {
		case md.PendingCreate:
			add("pending create", md.BootstrapTemplate, md.InfraTemplate)
			out["MachineDeployment "+md.Object.Name] = "pending create"
			if md.MachineHealthCheck != nil {
				out["MachineHealthCheck "+md.MachineHealthCheck.Name] = "pending create"
			}
		case md.Pending:
			add("pending upgrade", md.BootstrapTemplate, md.InfraTemplate)
			out["MachineDeployment "+md.Object.Name] = "pending upgrade"
		}
	}
	for _, mp := range s.MachinePools {
		why := ""
		switch {
		case mp.PendingCreate:
			why = "pending create"
		case mp.Pending:
			why = "pending upgrade"
		default:
			continue
		}
		add(why, mp.BootstrapConfig, mp.InfraMachinePool)
		out["MachinePool "+mp.Object.Name] = why
	}
	return out
}

// Objects returns what to write of the MachineDeployment, in apply order: its templates, itself and
// its health check; only the health check while it is pending an upgrade, nothing before creation.
func (md MachineDeployment) Objects() ([]*unstructured.Unstructured, error) {
	all, err := md.allObjects()
	switch {
	case err != nil || md.PendingCreate:
		return nil, err
	case md.Pending && md.MachineHealthCheck != nil:
		return all[len(all)-1:], nil
	case md.Pending:
		return nil, nil
	}
	return all, nil
}

// allObjects returns the MachineDeployment's templates, itself and its health check, whether
// written in this pass or not.
func (md MachineDeployment) allObjects() ([]*unstructured.Unstructured, error) {
	obj, err := ToIntent(md.Object)
	if err != nil {
		return nil, fmt.Errorf("MachineDeployment %s: %w", md.Object.Name, err)
	}
	out := []*unstructured.Unstructured{md.BootstrapTemplate, md.InfraTemplate, obj}
	if md.MachineHealthCheck != nil {
		mhc, err := ToIntent(md.MachineHealthCheck)
		if err != nil {
			return nil, err
		}
		out = append(out, mhc)
	}
	return out, nil
}

// Objects returns what to write of the MachinePool: its bootstrap config, infrastructure pool and
// itself, or nothing while it is pending.
func (mp MachinePool) Objects() ([]*unstructured.Unstructured, error) {
	if mp.Pending || mp.PendingCreate {
		return nil, nil
	}
	return mp.allObjects()
}

func (mp MachinePool) allObjects() ([]*unstructured.Unstructured, error) {
	obj, err := ToIntent(mp.Object)
	if err != nil {
		return nil, fmt.Errorf("MachinePool %s: %w", mp.Object.Name, err)
	}
	return []*unstructured.Unstructured{mp.BootstrapConfig, mp.InfraMachinePool, obj}, nil
}

// SortedKeys returns a map's keys in order (deterministic output for tests and plans).
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
