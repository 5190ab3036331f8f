package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/status"
)

// topoflow plays two roles. The topology role writes exactly what Cluster API's topology
// controller writes (field manager capi-topology). The Cluster controller role stands in for
// Cluster API's core controllers where none run beside topoflow: the Cluster's phase, readiness
// and endpoint, and the owner references that let the garbage collector follow the Cluster. It
// writes under its own field manager (StatusFieldManager), and is off when Activities.ClusterController
// is false, leaving that work to Cluster API.

// clusterV1Beta2 computes the v1beta2 status the Cluster controller role writes (status.ClusterV1Beta2)
// from what Cluster API's Cluster controller reads: the infrastructure cluster and control plane
// the Cluster references, its MachineDeployments and MachinePools, its ClusterClass's availability
// gates; the topology condition and infrastructure readiness are the ones this write sets. The
// answer is the hub's (status.conditions, status.controlPlane, status.workers).
func (a *Activities) clusterV1Beta2(ctx context.Context, cluster *v1beta2.Cluster, in StatusInput) (*v1beta2.ClusterStatus, error) {
	var err error
	f := status.ClusterFacts{Cluster: cluster, InfrastructureProvisioned: in.InfrastructureReady}
	for i := range in.Conditions {
		if in.Conditions[i].Type == status.TopologyReconciled {
			f.Topology = &in.Conditions[i]
		}
	}
	if f.InfraCluster, err = a.referenced(ctx, cluster, cluster.Spec.InfrastructureRef); err != nil {
		return nil, err
	}
	if f.ControlPlane, err = a.referenced(ctx, cluster, cluster.Spec.ControlPlaneRef); err != nil {
		return nil, err
	}
	if f.MachineDeployments, f.MachinePools, err = a.poolsOf(ctx, cluster); err != nil {
		return nil, err
	}
	if cluster.Spec.AvailabilityGates == nil && cluster.Spec.Topology.IsDefined() {
		class := &v1beta2.ClusterClass{}
		var fe *decode.FieldError
		switch err := a.Kube.GetTyped(ctx, kube.ClusterClasses, cluster.ClassNamespace(), cluster.Spec.Topology.ClassRef.Name, class); {
		case err == nil:
			f.ClassAvailabilityGates = class.Spec.AvailabilityGates
		case kube.IsNotFound(err), errors.As(err, &fe):
			// No class to take gates from (the topology condition says why).
		default:
			return nil, fmt.Errorf("reading ClusterClass %s/%s: %w", cluster.ClassNamespace(), cluster.Spec.Topology.ClassRef.Name, err)
		}
	}
	return status.ClusterV1Beta2(f, time.Now()), nil
}

// poolsOf lists a Cluster's MachineDeployments and MachinePools (any that carry its cluster-name
// label, as Cluster API's Cluster controller counts them), each sorted by name: what the v1beta2
// counters are computed from, and what their digest (countersDigest) covers, read one way.
//
// They are read in the version the API server serves them: topoflow's own pool CRDs serve only
// v1beta1, whose controllers report counters in v1beta1 terms alone (status.poolCountersOf).
func (a *Activities) poolsOf(ctx context.Context, cluster *v1beta2.Cluster) (mds, mps []unstructured.Unstructured, err error) {
	byName := func(x, y unstructured.Unstructured) int { return strings.Compare(x.GetName(), y.GetName()) }
	if mds, err = a.listIfServed(ctx, kube.V1Beta1MachineDeployments, cluster, ""); err != nil {
		return nil, nil, err
	}
	if mps, err = a.listIfServed(ctx, kube.V1Beta1MachinePools, cluster, ""); err != nil {
		return nil, nil, err
	}
	slices.SortFunc(mds, byName) // the cache lists in no fixed order
	slices.SortFunc(mps, byName)
	return mds, mps, nil
}

// referenced reads the object a Cluster references (nil when it has no reference or the object is not there).
func (a *Activities) referenced(ctx context.Context, cluster *v1beta2.Cluster, contract v1beta2.ContractVersionedObjectReference) (*unstructured.Unstructured, error) {
	ref, err := a.contractRef(contract, cluster.Namespace)
	if err != nil || ref == nil {
		return nil, err
	}
	obj, err := a.Kube.GetRef(ctx, ref, cluster.Namespace)
	switch {
	case kube.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s: %w", ref.Kind, ref.Name, err)
	}
	return obj, nil
}

// v1beta2Field is the v1beta2 part of a Cluster's status to apply: conditions and counters, with
// the topology role's upgrade plans (status.PlanField). A part with nothing to say is left out:
// applied as {} it would be stored as null, which the schema refuses (a Cluster being deleted has
// no counters and no plan), and leaving it out removes what topoflow wrote there before.
func v1beta2Field(v *v1beta2.ClusterStatus, plan *status.UpgradePlan) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&v1beta2.ClusterStatus{Conditions: v.Conditions, ControlPlane: v.ControlPlane, Workers: v.Workers})
	if err != nil {
		return nil, err
	}
	for _, part := range []struct {
		field string
		plan  []string
	}{{"controlPlane", plan.ControlPlane}, {"workers", plan.Workers}} {
		p, _ := m[part.field].(map[string]any)
		if p == nil {
			p = map[string]any{}
		}
		delete(p, "upgradePlan")
		if f := status.PlanField(part.plan); f != nil {
			p["upgradePlan"] = f
		}
		if len(p) == 0 {
			delete(m, part.field)
		} else {
			m[part.field] = p
		}
	}
	return m, nil
}

// servedVersion is the apiVersion the API server serves a cluster.x-k8s.io kind in (its
// preferred one): what owner references to a Cluster name, and what the pools are written in;
// v1beta1 when discovery cannot tell.
func (a *Activities) servedVersion(kind string) string {
	gv := v1beta2.GroupVersion
	if v, err := a.Kube.PreferredVersion(gv.Group, kind); err == nil {
		gv.Version = v
	}
	return gv.String()
}

// ownByCluster makes the Cluster an owner of obj, as Cluster API's controllers do for the objects
// the topology creates: the Cluster controller for the infrastructure cluster and the control plane
// (as controller), the MachineDeployment and MachinePool controllers for the pools. Only the owner
// reference is sent, and nothing when it is there already.
func (a *Activities) ownByCluster(ctx context.Context, l *loaded, obj *unstructured.Unstructured, controller bool) error {
	if !a.ClusterController || obj == nil {
		return nil
	}
	cluster := l.input.Cluster
	want := desired.ClusterOwner(cluster, l.input.ClusterAPIVersion)
	if controller {
		yes := true
		want.Controller = &yes
	}
	for _, o := range obj.GetOwnerReferences() {
		if o.UID == want.UID && (o.Controller != nil && *o.Controller) == controller {
			return nil
		}
	}
	intent := &unstructured.Unstructured{Object: map[string]any{}}
	intent.SetAPIVersion(obj.GetAPIVersion())
	intent.SetKind(obj.GetKind())
	intent.SetName(obj.GetName())
	intent.SetNamespace(obj.GetNamespace())
	intent.SetOwnerReferences([]metav1.OwnerReference{want})
	intent.SetUID(obj.GetUID()) // never a create: an object deleted since stays deleted
	if _, err := a.Kube.Apply(ctx, intent, StatusFieldManager); err != nil {
		return fmt.Errorf("making Cluster %s/%s an owner of %s %s: %w", cluster.Namespace, cluster.Name, obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// coreProviderLabel is the label clusterctl (and deploy/capi/up.sh) puts on Cluster API core's
// CRDs; topoflow's own CRDs do not carry it.
const coreProviderLabel = "cluster.x-k8s.io/provider"

// ClusterAPICoreInstalled says whether Cluster API core is installed in the management cluster:
// its Clusters CRD carries the provider label "cluster-api". Then its controllers own the Cluster
// controller role and topoflow leaves it to them.
func ClusterAPICoreInstalled(ctx context.Context, k *kube.Client) (bool, error) {
	crd, err := k.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, "clusters."+v1beta2.GroupVersion.Group, metav1.GetOptions{})
	if kube.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the Clusters CRD: %w", err)
	}
	return crd.GetLabels()[coreProviderLabel] == "cluster-api", nil
}
