package topology

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/upgrade"
)

// observed is what a pass reads from the status of one object of a Cluster's topology, by the
// same reads the pass makes: the provider contract's facts for an infrastructure cluster or a
// control plane (either contract is read, the object's role is not known here), a pool's state
// for a MachineDeployment or MachinePool (read on the hub, v1beta2, as the starter watches them),
// and a MachinePool's Nodes.
type observed struct {
	Infra        contract.InfraClusterState
	ControlPlane controlPlaneFacts
	Pool         upgrade.Pool
	// Nodes are a MachinePool's status.nodeRefs, whose kubelet versions tell whether it upgrades
	// (upgrade.NodeVersions).
	Nodes []any
}

func observe(u *unstructured.Unstructured) (observed, error) {
	var o observed
	var err error
	switch u.GetKind() {
	case "MachineDeployment", "MachinePool":
		if u.GetAPIVersion() != conversion.V1Beta2GroupVersion.String() {
			// Pools are watched on the hub; another version is not read here (counts as changed).
			return o, fmt.Errorf("%s %s: want %s, got %s", u.GetKind(), u.GetName(), conversion.V1Beta2GroupVersion, u.GetAPIVersion())
		}
		o.Nodes, _, _ = unstructured.NestedSlice(u.Object, "status", "nodeRefs")
		o.Pool, err = upgrade.ObservedPool(u)
		return o, err
	}
	if o.Infra, err = contract.ReadInfraCluster(u); err != nil {
		return o, err
	}
	cp, err := contract.ReadControlPlane(u)
	o.ControlPlane = controlPlaneFacts{DesiredVersion: cp.DesiredVersion, Version: cp.Version, Initialized: cp.Initialized,
		Ready: cp.Ready, Stable: cp.Stable(), FailureMessage: cp.FailureMessage}
	return o, err
}

// controlPlaneFacts are what a pass reads of a control plane (upgrade.InputFrom, the provisioning
// read): its replica counts only through Stable, as a pool's through Converging. A replica
// becoming ready while others are still on their way changes nothing a pass decides.
type controlPlaneFacts struct {
	DesiredVersion, Version    string
	Initialized, Ready, Stable bool
	FailureMessage             string
}

// Unobserved tells that an update of an object of a Cluster's topology (its infrastructure
// cluster, control plane, MachineDeployments and MachinePools) changed nothing a pass reads: not
// its generation (its spec), labels, annotations or owner references, not its deletion, and not the
// status facts the pass reads (observed). A provider adding its finalizer, setting a condition, or
// writing a status it had already reported makes such an update; the starter does not wake the
// Cluster's workflow for it, since the pass would find nothing to do. An object that cannot be
// read counts as changed.
func Unobserved(old, cur *unstructured.Unstructured) bool {
	if old == nil || cur == nil || old.GetGeneration() != cur.GetGeneration() ||
		old.GetDeletionTimestamp() != nil || cur.GetDeletionTimestamp() != nil ||
		!maps.Equal(old.GetLabels(), cur.GetLabels()) || !SameAnnotations(old.GetAnnotations(), cur.GetAnnotations()) ||
		!slices.EqualFunc(old.GetOwnerReferences(), cur.GetOwnerReferences(), func(a, b metav1.OwnerReference) bool { return reflect.DeepEqual(a, b) }) {
		return false
	}
	o, err := observe(old)
	if err != nil {
		return false
	}
	c, err := observe(cur)
	return err == nil && reflect.DeepEqual(o, c)
}

// SameAnnotations compares two objects' annotations as a pass reads them: without Cluster API's
// conversion data (conversion.DataAnnotation). An object Cluster API stores as v1beta2 and serves
// as v1beta1 carries there every v1beta2 value v1beta1 cannot hold, its status conditions
// included, so that annotation changes with each status write of Cluster API's controllers (beside
// them, about 45 of the 55 events a Cluster's create sent its workflow). Its spec part moves with
// the generation, which the callers compare on their own.
func SameAnnotations(a, b map[string]string) bool {
	return maps.Equal(withoutConversionData(a), withoutConversionData(b))
}

func withoutConversionData(m map[string]string) map[string]string {
	if _, ok := m[conversion.DataAnnotation]; !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, conversion.DataAnnotation)
	return out
}
