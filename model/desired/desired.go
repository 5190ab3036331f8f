// Package desired computes the objects a managed Cluster should have, from its topology, its
// ClusterClass and the class's templates. It is pure: the caller reads everything (templates and
// the current objects, whose names are kept) and applies the result.
//
// This is the walking-skeleton engine: no variables or patches yet, and templates are applied in
// place rather than rotated. Issue 3 widens it to the complete ClusterClass semantics.
package desired

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/names"
)

// Input is everything the computation reads.
type Input struct {
	Cluster *clusterv1.Cluster
	Class   *clusterv1.ClusterClass
	// Templates holds every template the class references, keyed by RefKey.
	Templates map[string]*unstructured.Unstructured
	// Current holds the topology objects that exist now; their names are kept.
	Current Current
	// Names seeds the random suffixes of new objects' names; see names.Source.
	Names names.Source
}

// Current is the part of the current state the computation needs.
type Current struct {
	// ControlPlane is the existing control plane object (nil before creation).
	ControlPlane *unstructured.Unstructured
	// MachineDeployments maps topology names to existing MachineDeployments.
	MachineDeployments map[string]*clusterv1.MachineDeployment
}

// State is the desired topology of one Cluster.
type State struct {
	// InfrastructureRef and ControlPlaneRef are what the Cluster's spec should point at.
	InfrastructureRef *corev1.ObjectReference
	ControlPlaneRef   *corev1.ObjectReference
	// InfrastructureCluster is nil when the class has no infrastructure template (seed 003).
	InfrastructureCluster *unstructured.Unstructured
	ControlPlane          *unstructured.Unstructured
	// ControlPlaneInfrastructureTemplate is nil when the control plane has no machines.
	ControlPlaneInfrastructureTemplate *unstructured.Unstructured
	// MachineDeployments are in topology order.
	MachineDeployments []MachineDeployment
}

// MachineDeployment is one desired MachineDeployment with the templates it points at.
type MachineDeployment struct {
	TopologyName      string
	Object            *clusterv1.MachineDeployment
	BootstrapTemplate *unstructured.Unstructured
	InfraTemplate     *unstructured.Unstructured
}

// RefKey is the key of a template in Input.Templates.
func RefKey(ref *corev1.ObjectReference) string {
	return ref.Kind + "/" + ref.Namespace + "/" + ref.Name
}

// TemplateRef is one template a class references and where.
type TemplateRef struct {
	Ref *corev1.ObjectReference
	// Field is the ClusterClass field holding the reference, for error messages.
	Field string
}

// TemplateRefs lists the templates a class references that a Cluster of this topology needs, with
// their namespace defaulted to the class's.
func TemplateRefs(class *clusterv1.ClusterClass) []TemplateRef {
	var out []TemplateRef
	add := func(ref *corev1.ObjectReference, field string) {
		if ref == nil {
			return
		}
		r := ref.DeepCopy()
		if r.Namespace == "" {
			r.Namespace = class.Namespace
		}
		out = append(out, TemplateRef{Ref: r, Field: field})
	}
	if class.Spec.Infrastructure != nil {
		add(class.Spec.Infrastructure.Ref, "spec.infrastructure.ref")
	}
	add(class.Spec.ControlPlane.Ref, "spec.controlPlane.ref")
	if class.Spec.ControlPlane.MachineInfrastructure != nil {
		add(class.Spec.ControlPlane.MachineInfrastructure.Ref, "spec.controlPlane.machineInfrastructure.ref")
	}
	for _, md := range class.Spec.Workers.MachineDeployments {
		add(md.Template.Bootstrap.Ref, fmt.Sprintf("spec.workers.machineDeployments[class=%s].template.bootstrap.ref", md.Class))
		add(md.Template.Infrastructure.Ref, fmt.Sprintf("spec.workers.machineDeployments[class=%s].template.infrastructure.ref", md.Class))
	}
	for _, mp := range class.Spec.Workers.MachinePools {
		add(mp.Template.Bootstrap.Ref, fmt.Sprintf("spec.workers.machinePools[class=%s].template.bootstrap.ref", mp.Class))
		add(mp.Template.Infrastructure.Ref, fmt.Sprintf("spec.workers.machinePools[class=%s].template.infrastructure.ref", mp.Class))
	}
	return out
}

// Compute returns the desired state. Errors name the field or object at fault.
func Compute(in Input) (*State, error) {
	c := &computer{in: in, cluster: in.Cluster, class: in.Class}
	if c.cluster.Spec.Topology == nil {
		return nil, fmt.Errorf("Cluster %s/%s has no spec.topology", c.cluster.Namespace, c.cluster.Name)
	}
	s := &State{}
	var err error
	if s.InfrastructureCluster, err = c.infrastructureCluster(); err != nil {
		return nil, err
	}
	if s.InfrastructureCluster != nil {
		s.InfrastructureRef = refTo(s.InfrastructureCluster)
	}
	if s.ControlPlaneInfrastructureTemplate, err = c.controlPlaneInfrastructureTemplate(); err != nil {
		return nil, err
	}
	if s.ControlPlane, err = c.controlPlane(s.ControlPlaneInfrastructureTemplate); err != nil {
		return nil, err
	}
	s.ControlPlaneRef = refTo(s.ControlPlane)
	if w := c.cluster.Spec.Topology.Workers; w != nil {
		for i := range w.MachineDeployments {
			md, err := c.machineDeployment(&w.MachineDeployments[i], i)
			if err != nil {
				return nil, err
			}
			s.MachineDeployments = append(s.MachineDeployments, *md)
		}
	}
	return s, nil
}

type computer struct {
	in      Input
	cluster *clusterv1.Cluster
	class   *clusterv1.ClusterClass
}

func (c *computer) template(ref *corev1.ObjectReference, field string) (*unstructured.Unstructured, error) {
	r := ref.DeepCopy()
	if r.Namespace == "" {
		r.Namespace = c.class.Namespace
	}
	t, ok := c.in.Templates[RefKey(r)]
	if !ok || t == nil {
		return nil, &MissingTemplateError{Class: c.class.Namespace + "/" + c.class.Name, Field: field, Ref: r}
	}
	return t, nil
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

func (c *computer) ownerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion: clusterv1.GroupVersion.String(),
		Kind:       "Cluster",
		Name:       c.cluster.Name,
		UID:        c.cluster.UID,
	}
}

func (c *computer) baseLabels() map[string]string {
	return map[string]string{labels.ClusterName: c.cluster.Name, labels.TopologyOwned: ""}
}

func (c *computer) infrastructureCluster() (*unstructured.Unstructured, error) {
	if c.class.Spec.Infrastructure == nil || c.class.Spec.Infrastructure.Ref == nil {
		return nil, nil
	}
	tmpl, err := c.template(c.class.Spec.Infrastructure.Ref, "spec.infrastructure.ref")
	if err != nil {
		return nil, err
	}
	name := ""
	if ref := c.cluster.Spec.InfrastructureRef; ref != nil {
		name = ref.Name
	} else {
		strategy := ""
		if ns := c.class.Spec.InfrastructureNamingStrategy; ns != nil && ns.Template != nil {
			strategy = *ns.Template
		}
		if name, err = names.FromTemplate(strategy, names.DefaultInfraClusterTemplate, names.Input{ClusterName: c.cluster.Name}, c.in.Names.For("infrastructureCluster")); err != nil {
			return nil, fmt.Errorf("spec.infrastructureNamingStrategy.template: %w", err)
		}
	}
	obj, err := c.objectFromTemplate(tmpl, name, c.baseLabels(), nil)
	if err != nil {
		return nil, err
	}
	// A Cluster whose endpoint is set by the user hands it to the infrastructure provider.
	if ep := c.cluster.Spec.ControlPlaneEndpoint; ep.IsValid() {
		if err := contract.Set(obj, contract.InfraClusterEndpoint, map[string]any{"host": ep.Host, "port": int64(ep.Port)}); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

func (c *computer) controlPlaneInfrastructureTemplate() (*unstructured.Unstructured, error) {
	mi := c.class.Spec.ControlPlane.MachineInfrastructure
	if mi == nil || mi.Ref == nil {
		return nil, nil
	}
	tmpl, err := c.template(mi.Ref, "spec.controlPlane.machineInfrastructure.ref")
	if err != nil {
		return nil, err
	}
	name := ""
	if cur := c.in.Current.ControlPlane; cur != nil {
		ref, err := contract.ObjectRef(cur, contract.ControlPlaneInfrastructureRef)
		if err != nil {
			return nil, err
		}
		if ref != nil {
			name = ref.Name
		}
	}
	if name == "" {
		name = names.WithRandomSuffix(c.cluster.Name+"-control-plane-", c.in.Names.For("controlPlane/infrastructure"))
	}
	return c.cloneTemplate(tmpl, name, c.baseLabels()), nil
}

func (c *computer) controlPlane(infraTemplate *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	cpClass := c.class.Spec.ControlPlane
	if cpClass.Ref == nil {
		return nil, fmt.Errorf("ClusterClass %s/%s: spec.controlPlane.ref is required", c.class.Namespace, c.class.Name)
	}
	tmpl, err := c.template(cpClass.Ref, "spec.controlPlane.ref")
	if err != nil {
		return nil, err
	}
	topo := c.cluster.Spec.Topology.ControlPlane
	name := ""
	if ref := c.cluster.Spec.ControlPlaneRef; ref != nil {
		name = ref.Name
	} else {
		strategy := ""
		if cpClass.NamingStrategy != nil && cpClass.NamingStrategy.Template != nil {
			strategy = *cpClass.NamingStrategy.Template
		}
		if name, err = names.FromTemplate(strategy, names.DefaultControlPlaneTemplate, names.Input{ClusterName: c.cluster.Name}, c.in.Names.For("controlPlane")); err != nil {
			return nil, fmt.Errorf("ClusterClass %s/%s: spec.controlPlane.namingStrategy.template: %w", c.class.Namespace, c.class.Name, err)
		}
	}
	// Topology metadata wins over class metadata.
	meta := mergeMeta(cpClass.Metadata, topo.Metadata)
	objLabels := mergeMaps(meta.Labels, c.baseLabels())
	obj, err := c.objectFromTemplate(tmpl, name, objLabels, meta.Annotations)
	if err != nil {
		return nil, err
	}
	if err := contract.Set(obj, contract.ControlPlaneVersion, c.cluster.Spec.Topology.Version); err != nil {
		return nil, err
	}
	if topo.Replicas != nil {
		if err := contract.Set(obj, contract.ControlPlaneReplicas, int64(*topo.Replicas)); err != nil {
			return nil, err
		}
	}
	if infraTemplate != nil {
		if err := contract.SetRef(obj, contract.ControlPlaneInfrastructureRef, refTo(infraTemplate)); err != nil {
			return nil, err
		}
		if err := contract.Set(obj, contract.ControlPlaneMachineMetadata, metaToMap(meta)); err != nil {
			return nil, err
		}
		for _, t := range []struct {
			field       string
			class, topo *metav1.Duration
		}{
			{"nodeDrainTimeout", cpClass.NodeDrainTimeout, topo.NodeDrainTimeout},
			{"nodeVolumeDetachTimeout", cpClass.NodeVolumeDetachTimeout, topo.NodeVolumeDetachTimeout},
			{"nodeDeletionTimeout", cpClass.NodeDeletionTimeout, topo.NodeDeletionTimeout},
		} {
			if d := firstDuration(t.topo, t.class); d != nil {
				if err := contract.Set(obj, append(contract.Path{}, append(contract.ControlPlaneMachineTemplate, t.field)...), d.Duration.String()); err != nil {
					return nil, err
				}
			}
		}
	}
	return obj, nil
}

func (c *computer) machineDeployment(topo *clusterv1.MachineDeploymentTopology, index int) (*MachineDeployment, error) {
	field := fmt.Sprintf("spec.topology.workers.machineDeployments[%d]", index)
	mdClass := c.class.MachineDeploymentClass(topo.Class)
	if mdClass == nil {
		return nil, fmt.Errorf("Cluster %s/%s: %s.class: MachineDeploymentClass %q is not defined in ClusterClass %s/%s",
			c.cluster.Namespace, c.cluster.Name, field, topo.Class, c.class.Namespace, c.class.Name)
	}
	classField := fmt.Sprintf("spec.workers.machineDeployments[class=%s]", mdClass.Class)
	bootstrapTmpl, err := c.template(mdClass.Template.Bootstrap.Ref, classField+".template.bootstrap.ref")
	if err != nil {
		return nil, err
	}
	infraTmpl, err := c.template(mdClass.Template.Infrastructure.Ref, classField+".template.infrastructure.ref")
	if err != nil {
		return nil, err
	}

	current := c.in.Current.MachineDeployments[topo.Name]
	mdLabels := mergeMaps(c.baseLabels(), map[string]string{labels.MachineDeploymentName: topo.Name})

	bootstrapName, infraName, mdName := "", "", ""
	if current != nil {
		mdName = current.Name
		if ref := current.Spec.Template.Spec.Bootstrap.ConfigRef; ref != nil {
			bootstrapName = ref.Name
		}
		infraName = current.Spec.Template.Spec.InfrastructureRef.Name
	}
	prefix := fmt.Sprintf("%s-%s-", c.cluster.Name, topo.Name)
	if bootstrapName == "" {
		bootstrapName = names.WithRandomSuffix(prefix, c.in.Names.For("machineDeployment/"+topo.Name+"/bootstrap"))
	}
	if infraName == "" {
		infraName = names.WithRandomSuffix(prefix, c.in.Names.For("machineDeployment/"+topo.Name+"/infrastructure"))
	}
	if mdName == "" {
		strategy := ""
		if mdClass.NamingStrategy != nil && mdClass.NamingStrategy.Template != nil {
			strategy = *mdClass.NamingStrategy.Template
		}
		mdName, err = names.FromTemplate(strategy, names.DefaultMachineDeploymentTemplate,
			names.Input{ClusterName: c.cluster.Name, MachineDeploymentTopologyName: topo.Name}, c.in.Names.For("machineDeployment/"+topo.Name))
		if err != nil {
			return nil, fmt.Errorf("ClusterClass %s/%s: %s.namingStrategy.template: %w", c.class.Namespace, c.class.Name, classField, err)
		}
	}
	bootstrap := c.cloneTemplate(bootstrapTmpl, bootstrapName, mdLabels)
	infra := c.cloneTemplate(infraTmpl, infraName, mdLabels)

	meta := mergeMeta(mdClass.Template.Metadata, topo.Metadata)
	version := c.cluster.Spec.Topology.Version
	md := &clusterv1.MachineDeployment{
		TypeMeta: metav1.TypeMeta{APIVersion: clusterv1.GroupVersion.String(), Kind: "MachineDeployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            mdName,
			Namespace:       c.cluster.Namespace,
			Labels:          mergeMaps(meta.Labels, mdLabels),
			Annotations:     copyMap(meta.Annotations),
			OwnerReferences: []metav1.OwnerReference{c.ownerRef()},
		},
		Spec: clusterv1.MachineDeploymentSpec{
			ClusterName:     c.cluster.Name,
			Replicas:        topo.Replicas,
			MinReadySeconds: firstInt32(topo.MinReadySeconds, mdClass.MinReadySeconds),
			Strategy:        firstStrategy(topo.Strategy, mdClass.Strategy),
			Selector:        metav1.LabelSelector{MatchLabels: copyMap(mdLabels)},
			Template: clusterv1.MachineTemplateSpec{
				ObjectMeta: clusterv1.ObjectMeta{Labels: mergeMaps(meta.Labels, mdLabels), Annotations: copyMap(meta.Annotations)},
				Spec: clusterv1.MachineSpec{
					ClusterName:             c.cluster.Name,
					Version:                 &version,
					Bootstrap:               clusterv1.Bootstrap{ConfigRef: refTo(bootstrap)},
					InfrastructureRef:       *refTo(infra),
					FailureDomain:           firstString(topo.FailureDomain, mdClass.FailureDomain),
					NodeDrainTimeout:        firstDuration(topo.NodeDrainTimeout, mdClass.NodeDrainTimeout),
					NodeVolumeDetachTimeout: firstDuration(topo.NodeVolumeDetachTimeout, mdClass.NodeVolumeDetachTimeout),
					NodeDeletionTimeout:     firstDuration(topo.NodeDeletionTimeout, mdClass.NodeDeletionTimeout),
				},
			},
		},
	}
	return &MachineDeployment{TopologyName: topo.Name, Object: md, BootstrapTemplate: bootstrap, InfraTemplate: infra}, nil
}

// objectFromTemplate creates an object from a template's spec.template (the kind loses its
// "Template" suffix), as Cluster API's templateToObject does.
func (c *computer) objectFromTemplate(tmpl *unstructured.Unstructured, name string, objLabels, objAnnotations map[string]string) (*unstructured.Unstructured, error) {
	spec, _, err := unstructured.NestedMap(tmpl.Object, contract.TemplateSpec...)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", tmpl.GetKind(), tmpl.GetNamespace(), tmpl.GetName(), err)
	}
	tmplLabels, _, _ := unstructured.NestedStringMap(tmpl.Object, append(append(contract.Path{}, contract.TemplateMetadata...), "labels")...)
	tmplAnnotations, _, _ := unstructured.NestedStringMap(tmpl.Object, append(append(contract.Path{}, contract.TemplateMetadata...), "annotations")...)

	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(tmpl.GetAPIVersion())
	obj.SetKind(strings.TrimSuffix(tmpl.GetKind(), "Template"))
	obj.SetName(name)
	obj.SetNamespace(c.cluster.Namespace)
	obj.SetLabels(mergeMaps(tmplLabels, objLabels))
	obj.SetAnnotations(mergeMaps(tmplAnnotations, objAnnotations, clonedFrom(tmpl)))
	obj.SetOwnerReferences([]metav1.OwnerReference{c.ownerRef()})
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
	obj.SetOwnerReferences([]metav1.OwnerReference{c.ownerRef()})
	if spec, ok := tmpl.Object["spec"]; ok {
		obj.Object["spec"] = runtimeDeepCopy(spec)
	}
	return obj
}

func clonedFrom(tmpl *unstructured.Unstructured) map[string]string {
	gk := schema.FromAPIVersionAndKind(tmpl.GetAPIVersion(), tmpl.GetKind()).GroupKind()
	return map[string]string{labels.ClonedFromName: tmpl.GetName(), labels.ClonedFromGroupKind: gk.String()}
}

func refTo(u *unstructured.Unstructured) *corev1.ObjectReference {
	return &corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), Namespace: u.GetNamespace()}
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

func firstDuration(ds ...*metav1.Duration) *metav1.Duration {
	for _, d := range ds {
		if d != nil {
			return d.DeepCopy()
		}
	}
	return nil
}

func firstInt32(vs ...*int32) *int32 {
	for _, v := range vs {
		if v != nil {
			x := *v
			return &x
		}
	}
	return nil
}

func firstString(vs ...*string) *string {
	for _, v := range vs {
		if v != nil {
			x := *v
			return &x
		}
	}
	return nil
}

func firstStrategy(vs ...*clusterv1.MachineDeploymentStrategy) *clusterv1.MachineDeploymentStrategy {
	for _, v := range vs {
		if v != nil {
			return v.DeepCopy()
		}
	}
	return nil
}

// Objects returns every desired object in apply order: infrastructure cluster, control plane
// machine template, control plane, then per MachineDeployment its templates and itself.
// MachineDeployments are converted to unstructured intents.
func (s *State) Objects() ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	out = append(out, s.ClusterObjects()...)
	for _, md := range s.MachineDeployments {
		objs, err := md.Objects()
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// ClusterObjects returns the infrastructure cluster and control plane objects in apply order.
func (s *State) ClusterObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range []*unstructured.Unstructured{s.InfrastructureCluster, s.ControlPlaneInfrastructureTemplate, s.ControlPlane} {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

// Objects returns the MachineDeployment's templates and itself, in apply order.
func (md MachineDeployment) Objects() ([]*unstructured.Unstructured, error) {
	obj, err := ToIntent(md.Object)
	if err != nil {
		return nil, fmt.Errorf("MachineDeployment %s: %w", md.Object.Name, err)
	}
	return []*unstructured.Unstructured{md.BootstrapTemplate, md.InfraTemplate, obj}, nil
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
