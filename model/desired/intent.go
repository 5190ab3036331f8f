package desired

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/model/api/conversion"
)

// ToIntent converts a typed object into the unstructured body of a server-side apply request.
// Only the fields topoflow means to own are kept: apiVersion, kind, metadata name, namespace,
// labels, annotations and ownerReferences, and spec. Status and server-set metadata are dropped
// so the apply neither claims nor clears them.
func ToIntent(obj any) (*unstructured.Unstructured, error) {
	js, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, fmt.Errorf("converting to unstructured: %w", err)
	}
	return Intent(u), nil
}

// Intent trims an unstructured object to the fields topoflow applies (see ToIntent).
func Intent(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	if l := u.GetLabels(); len(l) > 0 {
		out.SetLabels(l)
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		out.SetAnnotations(a)
	}
	if o := u.GetOwnerReferences(); len(o) > 0 {
		out.SetOwnerReferences(o)
	}
	if spec, ok := u.Object["spec"]; ok {
		out.Object["spec"] = runtimeDeepCopy(spec)
	}
	return out
}

// UIDs holds the uids of the existing objects a computation read, by kind, namespace and name:
// what an apply intent needs to be an update rather than a create (see Stamp).
type UIDs map[string]types.UID

func uidKey(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

// Add records an existing object's uid; nil objects (not there yet) are skipped.
func (u UIDs) Add(kind string, obj metav1.Object) {
	if obj == nil || reflect.ValueOf(obj).IsNil() || obj.GetUID() == "" {
		return
	}
	u[uidKey(kind, obj.GetNamespace(), obj.GetName())] = obj.GetUID()
}

// Stamp makes an apply intent an update of the object it was computed from, as Cluster API's
// topology controller does (structuredmerge.NewServerSidePatchHelper carries the original's uid):
// the intent for an object that existed carries its uid, and the API server refuses such an
// apply when no object has that uid (409 Conflict) instead of creating one. So a pass computed
// before the object was deleted (a late retry, an orphaned attempt while the teardown runs)
// cannot bring it back, nor write over a namesake created since. An object that did not exist
// gets no uid: its intent creates it.
func (u UIDs) Stamp(intent *unstructured.Unstructured) {
	intent.SetUID(u[uidKey(intent.GetKind(), intent.GetNamespace(), intent.GetName())])
}

// InServedVersion is intent as it is written to the API server: a cluster.x-k8s.io/v1beta1
// MachineDeployment, MachinePool or MachineHealthCheck becomes v1beta2 where they are served as
// v1beta2 (workloadAPIVersion, see Input.WorkloadAPIVersion), because Cluster API v1.11+ applies
// them as v1beta2 and server-side apply records the API version with the fields it owns: the same
// fields applied in v1beta1 would change their owner's record on every object of a Cluster taken
// over from Cluster API. Everything else is returned as it is.
func InServedVersion(intent *unstructured.Unstructured, workloadAPIVersion string) (*unstructured.Unstructured, error) {
	if workloadAPIVersion != conversion.V1Beta2GroupVersion.String() || !slices.Contains(conversion.WorkloadKinds, intent.GetKind()) {
		return intent, nil
	}
	return V1Beta2(intent)
}

// V1Beta2 is a computed cluster.x-k8s.io/v1beta1 object as Cluster API v1.11+ holds it (the
// Cluster's intent, a MachineDeployment, MachinePool or MachineHealthCheck, through Cluster API's
// conversion), trimmed to what topoflow writes and keeping the uid that makes an apply an update;
// anything else is returned as it is.
func V1Beta2(intent *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, converted, err := conversion.ToV1Beta2(intent)
	if err != nil || !converted {
		return out, err
	}
	trimmed := Intent(out)
	trimmed.SetUID(intent.GetUID())
	return trimmed, nil
}
