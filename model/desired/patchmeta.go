package desired

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/labels"
)

// Patches may set labels and annotations (Cluster API v1.14, #13924). Before patching, every
// object's and cloned template's desired labels and annotations go into the template the patches
// see: an object's into the template's spec.template.metadata, a cloned template's into its own
// metadata (the patch engine's createRequest). A patch's result keeps its spec and its
// metadata.labels and metadata.annotations (patches.takeSpec). After patching an object takes
// its labels and annotations from spec.template.metadata and a cloned template from its metadata
// (updateDesiredState with patchObject / patchTemplate), except the keys Cluster API always
// preserves: the cluster-name, topology-owned and pool-name labels and the cloned-from
// annotations.

// preservedLabels and preservedAnnotations are the keys a patch cannot change
// (updateDesiredState's alwaysPreserveLabelsAndAnnotations).
var (
	preservedLabels      = []string{labels.ClusterName, labels.TopologyOwned, labels.MachineDeploymentName, labels.MachinePoolName}
	preservedAnnotations = []string{labels.ClonedFromName, labels.ClonedFromGroupKind}
)

// syncMetadata writes the desired metadata into the templates before patching.
func (c *computer) syncMetadata() {
	for _, s := range []*slot{c.infra, c.cp} {
		if s != nil {
			setTemplateMeta(s, s.meta.Labels, s.meta.Annotations)
		}
	}
	for _, mp := range c.mps {
		setTemplateMeta(mp.bootstrap, mp.bootstrap.meta.Labels, mp.bootstrap.meta.Annotations)
		setTemplateMeta(mp.infra, mp.infra.meta.Labels, mp.infra.meta.Annotations)
	}
	if c.cpInfra != nil {
		syncClonedMeta(c.cpInfra.template, c.baseLabels())
	}
	for _, md := range c.mds {
		extra := mergeMaps(c.baseLabels(), map[string]string{labels.MachineDeploymentName: md.topo.Name})
		syncClonedMeta(md.bootstrap.template, extra)
		syncClonedMeta(md.infra.template, extra)
	}
}

// setTemplateMeta puts an object's desired metadata into its template's spec.template.metadata.
func setTemplateMeta(s *slot, l, a map[string]string) {
	if len(l) > 0 {
		_ = unstructured.SetNestedStringMap(s.template.Object, l, contract.TemplateLabels...)
	}
	if len(a) > 0 {
		_ = unstructured.SetNestedStringMap(s.template.Object, a, contract.TemplateAnnotations...)
	}
}

// syncClonedMeta puts a cloned template's desired metadata (cloneTemplate's) into the template.
func syncClonedMeta(tmpl *unstructured.Unstructured, extra map[string]string) {
	tmpl.SetLabels(mergeMaps(tmpl.GetLabels(), extra))
	ann := mergeMaps(tmpl.GetAnnotations(), clonedFrom(tmpl))
	delete(ann, corev1.LastAppliedConfigAnnotation)
	tmpl.SetAnnotations(ann)
}

// patchedObjectMeta is an object's labels and annotations after patching: its template's
// spec.template.metadata, with the preserved keys as desired before patching.
func patchedObjectMeta(s *slot) (map[string]string, map[string]string) {
	l, found, _ := unstructured.NestedStringMap(s.template.Object, contract.TemplateLabels...)
	if !found {
		l = copyMap(s.meta.Labels)
	}
	a, found, _ := unstructured.NestedStringMap(s.template.Object, contract.TemplateAnnotations...)
	if !found {
		a = copyMap(s.meta.Annotations)
	}
	return preserve(l, s.meta.Labels, preservedLabels), preserve(a, s.meta.Annotations, preservedAnnotations)
}

// preserve sets the given keys of got back to their desired values (removing those desired
// without them).
func preserve(got, desired map[string]string, keys []string) map[string]string {
	if got == nil {
		got = map[string]string{}
	}
	for _, k := range keys {
		if v, ok := desired[k]; ok {
			got[k] = v
		} else {
			delete(got, k)
		}
	}
	if len(got) == 0 {
		return nil
	}
	return got
}
