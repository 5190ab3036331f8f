package activities

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
)

// classRevisionsResource is where ClusterClassRevisions are served.
var classRevisionsResource = rolloutv1.GroupVersion.WithResource("clusterclassrevisions")

// HandBackRefusals reads every ClusterClass with revisions (in namespace, "" for all) and says
// which of its Clusters Cluster API could not take back as they are (revision.HandBackRefusals):
// the hand-back (deploy/capi/switch.sh clusterapi) refuses while there are any. Read only.
func (a *Activities) HandBackRefusals(ctx context.Context, namespace string) ([]string, error) {
	classes, err := a.Kube.List(ctx, kube.ClusterClasses, namespace, "")
	if err != nil {
		return nil, fmt.Errorf("listing ClusterClasses: %w", err)
	}
	var out []string
	for i := range classes {
		class := &classes[i]
		if !revision.On(class.GetAnnotations()) {
			continue
		}
		revs, err := a.recordedRevisions(ctx, class.GetNamespace(), class.GetName())
		if err != nil {
			return nil, err
		}
		pins, err := a.classPins(ctx, class.GetNamespace(), class.GetName())
		if err != nil {
			return nil, err
		}
		out = append(out, revision.HandBackRefusals(class.GetNamespace(), class.GetName(), revs, pins)...)
	}
	return out, nil
}

// recordedRevisions lists a class's revisions as the decisions read them.
func (a *Activities) recordedRevisions(ctx context.Context, namespace, class string) ([]revision.Recorded, error) {
	items, err := a.Kube.List(ctx, classRevisionsResource, namespace, revision.ClassLabel+"="+class)
	if kube.IsNotFound(err) {
		return nil, nil // the CRD is not installed: no revisions anywhere
	}
	if err != nil {
		return nil, fmt.Errorf("listing the revisions of ClusterClass %s/%s: %w", namespace, class, err)
	}
	out := make([]revision.Recorded, 0, len(items))
	for _, u := range items {
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "revision")
		hash, _, _ := unstructured.NestedString(u.Object, "spec", "hash")
		out = append(out, revision.Recorded{Name: u.GetName(), Revision: n, Hash: hash})
	}
	return out, nil
}

// classPins lists the Clusters of a class with the revision each is pinned to.
func (a *Activities) classPins(ctx context.Context, namespace, class string) ([]revision.Pin, error) {
	clusters, err := a.Kube.List(ctx, kube.Clusters, namespace, "")
	if err != nil {
		return nil, fmt.Errorf("listing the Clusters of namespace %s: %w", namespace, err)
	}
	var out []revision.Pin
	for _, c := range clusters {
		if name, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "class"); name != class {
			continue
		}
		out = append(out, revision.Pin{Cluster: c.GetNamespace() + "/" + c.GetName(), Pin: c.GetAnnotations()[revision.PinAnnotation]})
	}
	return out, nil
}
