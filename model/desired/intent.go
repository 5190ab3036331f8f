package desired

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
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

// InServedVersion is intent as it is written to the API server. The pools
// (MachineDeployment, MachinePool) and their health checks are computed as the hub's
// cluster.x-k8s.io/v1beta2 objects Cluster API v1.11+ applies (server-side apply records the API
// version with the fields it owns: the same fields applied in v1beta1 would change their owner's
// record on every object of a Cluster taken over from Cluster API); where they are served as
// v1beta1 (workloadAPIVersion not v1beta2, see Input.WorkloadAPIVersion) they go out as Cluster
// API's conversion serves them in v1beta1 (conversion.ToV1Beta1: contract references at the API
// versions of the state's own objects of their group and kind), trimmed to what topoflow writes,
// keeping the uid, with a pool's template references at the current pool's versions where group
// and kind agree (Cluster API's calculateRefDesiredAPIVersion, Current.RefVersions). A
// cluster.x-k8s.io/v1beta1 pool intent (computed before the hub) still becomes v1beta2 where v1beta2
// is served. Everything else is returned as it is.
func (s *State) InServedVersion(intent *unstructured.Unstructured, workloadAPIVersion string) (*unstructured.Unstructured, error) {
	if !slices.Contains(conversion.WorkloadKinds, intent.GetKind()) {
		return intent, nil
	}
	v1beta2 := conversion.V1Beta2GroupVersion.String()
	if workloadAPIVersion == v1beta2 {
		if intent.GetAPIVersion() == v1beta2 {
			return intent, nil
		}
		return V1Beta2(intent)
	}
	if intent.GetAPIVersion() != v1beta2 {
		return intent, nil
	}
	versions, err := s.objectVersions()
	if err != nil {
		return nil, err
	}
	out, err := conversion.ToV1Beta1(intent, func(group, kind string) (string, error) {
		if v, ok := versions[group+"/"+kind]; ok {
			return v, nil
		}
		return "", fmt.Errorf("%s %s: no object of group %q, kind %s in the desired state to give its reference a version", intent.GetKind(), intent.GetName(), group, kind)
	})
	if err != nil {
		return nil, err
	}
	trimmed := Intent(out)
	trimmed.SetUID(intent.GetUID())
	for _, path := range [][]string{{"spec", "template", "spec", "bootstrap", "configRef"}, {"spec", "template", "spec", "infrastructureRef"}} {
		ref, ok, _ := unstructured.NestedMap(trimmed.Object, path...)
		if !ok {
			continue
		}
		av, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		gv, err := schema.ParseGroupVersion(av)
		if err != nil {
			continue
		}
		if v, ok := s.refVersions[refVersionKey(intent.GetKind(), intent.GetName(), gv.Group, kind)]; ok && v != av {
			ref["apiVersion"] = v
			if err := unstructured.SetNestedMap(trimmed.Object, ref, path...); err != nil {
				return nil, err
			}
		}
	}
	return trimmed, nil
}

// objectVersions are the versions of the state's own objects outside cluster.x-k8s.io/v1beta2, by
// group and kind: what a v1beta1 contract reference to one of them carries.
func (s *State) objectVersions() (map[string]string, error) {
	s.versions.once.Do(func() { s.versions.m, s.versions.err = s.readObjectVersions() })
	return s.versions.m, s.versions.err
}

func (s *State) readObjectVersions() (map[string]string, error) {
	all, err := s.AllObjects()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, o := range all {
		if o.GetAPIVersion() == conversion.V1Beta2GroupVersion.String() {
			continue
		}
		gvk := o.GroupVersionKind()
		out[gvk.Group+"/"+gvk.Kind] = gvk.Version
	}
	return out, nil
}

// RefVersions are the API versions of current pools' template references as served in v1beta1,
// by pool kind and name and the reference's group and kind (see Current.RefVersions).
type RefVersions map[string]string

func refVersionKey(poolKind, poolName, group, kind string) string {
	return poolKind + "/" + poolName + "/" + group + "/" + kind
}

// Ref is a current pool's contract reference as an object reference in namespace ns, at the API
// version recorded for it (Add); nil when ref is not defined. A reference with no version recorded
// carries its group alone as apiVersion (the key fields, kind, namespace and name, are complete).
func (r RefVersions) Ref(poolKind, poolName string, ref clusterv1.ContractVersionedObjectReference, ns string) *corev1.ObjectReference {
	if !ref.IsDefined() {
		return nil
	}
	av, ok := r[refVersionKey(poolKind, poolName, ref.APIGroup, ref.Kind)]
	if !ok {
		av = ref.APIGroup
	}
	return &corev1.ObjectReference{APIVersion: av, Kind: ref.Kind, Namespace: ns, Name: ref.Name}
}

// Add records the references of the current pool of kind poolKind ("MachineDeployment",
// "MachinePool") named poolName, as read in v1beta1; nil references are skipped.
func (r RefVersions) Add(poolKind, poolName string, refs ...*corev1.ObjectReference) {
	for _, ref := range refs {
		if ref == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			continue
		}
		r[refVersionKey(poolKind, poolName, gv.Group, ref.Kind)] = ref.APIVersion
	}
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
