package activities

import (
	"context"
	"fmt"
	"sort"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/revision"
)

// HandBackRefusals reads every ClusterClass with revisions (in namespace, "" for all) and says
// why Cluster API could not take its Clusters back as they are (revision.HandBackRefusals): the
// hand-back (deploy/capi/switch.sh clusterapi) refuses while there are any. It reads what the
// recorder reads (readClassRevisions), and writes nothing.
func (a *Activities) HandBackRefusals(ctx context.Context, namespace string) ([]string, error) {
	classes, err := a.Kube.ListUncached(ctx, kube.V1Beta1ClusterClasses, namespace, "")
	if err != nil {
		return nil, fmt.Errorf("listing ClusterClasses: %w", err)
	}
	var out []string
	for i := range classes {
		u := &classes[i]
		if !revision.On(u.GetAnnotations()) {
			continue
		}
		class, err := a.revisionClass(u)
		if err != nil {
			return nil, err
		}
		cr, err := a.readClassRevisions(ctx, class, u)
		if err != nil {
			return nil, err
		}
		pins := make([]revision.Pin, 0, len(cr.clusters))
		for name, annotations := range cr.clusters {
			pins = append(pins, revision.Pin{Cluster: class.Namespace + "/" + name, Pin: annotations[revision.PinAnnotation]})
		}
		refusals := revision.HandBackRefusals(class.Namespace, class.Name, cr.hash, cr.recorded, pins)
		for _, n := range cr.untrusted {
			refusals = append(refusals, fmt.Sprintf("ClusterClassRevision %s/%s does not hold what its spec.hash says: delete it", class.Namespace, revision.Name(class.Name, n)))
		}
		out = append(out, refusals...)
	}
	sort.Strings(out)
	return out, nil
}
