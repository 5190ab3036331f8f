package desired

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// AtWriteVersion returns ref at the API version topoflow writes its object in: the version of the
// class template of the same group that it is cloned from (kind "XTemplate" for an object of kind
// X, the same kind for a cloned template). The current objects must be read in that version: a
// reference on the Cluster or a pool may name a newer one (Cluster API's conversion webhooks
// answer v1beta1 references with the newest contract version), and an object read in another
// version has another shape, so every pass would find it changed and apply it again. A ref with
// no matching template is returned as it is.
func AtWriteVersion(class *clusterv1.ClusterClass, ref *corev1.ObjectReference) *corev1.ObjectReference {
	if ref == nil || class == nil {
		return ref
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return ref
	}
	for _, tr := range TemplateRefs(class) {
		tgv, err := schema.ParseGroupVersion(tr.Ref.APIVersion)
		if err != nil || tgv.Group != gv.Group || (tr.Ref.Kind != ref.Kind && tr.Ref.Kind != ref.Kind+"Template") {
			continue
		}
		if tr.Ref.APIVersion == ref.APIVersion {
			return ref
		}
		out := ref.DeepCopy()
		out.APIVersion = tr.Ref.APIVersion
		return out
	}
	return ref
}
