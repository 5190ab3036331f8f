package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/model/validation"
	"github.com/topoflow/topoflow/model/variables"
)

// ObjectRef names a namespaced or cluster-scoped object of a kind topoflow keeps status for.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// DiscoverExtension runs discovery for one ExtensionConfig and records its handlers.
func (a *Activities) DiscoverExtension(ctx context.Context, ref ObjectRef) error {
	u, err := a.Kube.Get(ctx, runtimev1.GroupVersion.WithResource("extensionconfigs"), "", ref.Name, 0)
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ExtensionConfig %s: %w", ref.Name, err)
	}
	cfg := &runtimev1.ExtensionConfig{}
	if err := a.Kube.Decode(u, cfg); err != nil {
		return invalid(err)
	}
	return (&runtimeext.Client{Kube: a.Kube}).Discover(ctx, cfg)
}

// ReconcileClusterClassStatus validates a ClusterClass and writes its status as Cluster API
// v1.14's ClusterClass controller writes it, on the hub (v1beta2): the effective variable
// definitions (status.variables: inline, and discovered by the external patches'
// DiscoverVariables handlers), the VariablesReady condition with the v1beta1 VariablesReconciled
// one beside it (status.deprecated.v1beta1.conditions) and the observed generation. A v1beta1
// client reads the same status.variables, conditions and observedGeneration as when topoflow
// wrote them in v1beta1, with VariablesReady under status.v1beta2.conditions. When discovery
// fails the previous status.variables stay, as in Cluster API.
func (a *Activities) ReconcileClusterClassStatus(ctx context.Context, ref ObjectRef) error {
	class := &hubv1.ClusterClass{}
	if err := a.Kube.GetTyped(ctx, kube.ClusterClasses, ref.Namespace, ref.Name, class); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ClusterClass %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if err := a.ownTemplates(ctx, class); err != nil {
		return err
	}
	discovered, discoveryErrs, err := a.discoverVariables(ctx, class)
	if err != nil {
		return err
	}
	st := classStatus(class, discovered, discoveryErrs, time.Now())
	// Nothing to write when the status says it already: a class whose status Cluster API's
	// ClusterClass controller wrote before a takeover keeps it as it is, with no record of
	// topoflow as its writer.
	if !classStatusHolds(class, st) {
		obj, err := classStatusObject(class, st)
		if err != nil {
			return err
		}
		if _, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager); err != nil {
			return err
		}
	}
	if len(discoveryErrs) > 0 {
		// Retried with backoff until the extensions answer (a newer change of the class or of an
		// ExtensionConfig starts a fresh run).
		return fmt.Errorf("variable discovery of ClusterClass %s/%s failed: %v", class.Namespace, class.Name, utilerrors.NewAggregate(discoveryErrs))
	}
	return nil
}

// The ClusterClass conditions topoflow writes (Cluster API v1.14's api/core/v1beta2
// ClusterClassVariablesReady*, ClusterClassVariablesReconciledV1Beta1Condition and
// VariableDiscoveryFailedV1Beta1Reason).
const (
	classVariablesReady          = "VariablesReady"
	classVariablesReadyReason    = "VariablesReady"
	classVariablesReconciled     = "VariablesReconciled"
	classVariableDiscoveryFailed = "VariableDiscoveryFailed"
)

// classStatus is the status ReconcileClusterClassStatus writes for class (read as the hub): the
// observed generation, the effective variables (the previous ones when discovery failed; none for
// an invalid class without extensions), VariablesReady and, in status.deprecated.v1beta1, the
// VariablesReconciled condition, each keeping its transition time while its status stays. Only
// these two conditions: the write owns them and nothing else of the condition lists.
func classStatus(class *hubv1.ClusterClass, discovered []variables.Discovered, discoveryErrs []error, now time.Time) hubv1.ClusterClassStatus {
	vars, failure := class.Status.Variables, ""
	if len(discoveryErrs) > 0 {
		failure = "VariableDiscovery failed: " + utilerrors.NewAggregate(discoveryErrs).Error()
	} else {
		vars = variables.StatusVariables(class, discovered...)
		checked := class.DeepCopy()
		checked.Status.Variables = vars
		if errs := validation.ClusterClass(checked, nil, nil); len(errs) > 0 {
			failure = errs.ToAggregate().Error()
			if len(discovered) == 0 {
				vars = nil // an invalid class without extensions has no effective variables
			}
		}
	}
	v1 := status.True(classVariablesReconciled)
	v2 := status.Condition{Type: classVariablesReady, Status: true, Reason: classVariablesReadyReason}
	if failure != "" {
		v1 = status.False(classVariablesReconciled, classVariableDiscoveryFailed, status.SeverityError, failure)
		v2 = status.Condition{Type: classVariablesReady, Reason: classVariableDiscoveryFailed, Message: failure}
	}
	var current hubv1.V1Beta1Conditions
	if old := classV1Beta1Condition(class); old != nil {
		current = hubv1.V1Beta1Conditions{*old}
	}
	return hubv1.ClusterClassStatus{
		ObservedGeneration: class.Generation,
		Variables:          vars,
		Conditions:         []metav1.Condition{status.V1Beta2(v2, meta.FindStatusCondition(class.Status.Conditions, classVariablesReady), class.Generation, now)},
		Deprecated: &hubv1.V1Beta1ConditionsDeprecatedStatus{V1Beta1: &hubv1.V1Beta1ConditionsStatus{
			Conditions: status.Merge(current, []status.Condition{v1}, now),
		}},
	}
}

// classV1Beta1Condition is the class's VariablesReconciled condition (nil: none).
func classV1Beta1Condition(class *hubv1.ClusterClass) *hubv1.V1Beta1Condition {
	if d := class.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		for i := range d.V1Beta1.Conditions {
			if d.V1Beta1.Conditions[i].Type == classVariablesReconciled {
				return &d.V1Beta1.Conditions[i]
			}
		}
	}
	return nil
}

// classStatusObject is the status apply of st: the class's name and status only.
func classStatusObject(class *hubv1.ClusterClass, st hubv1.ClusterClassStatus) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return nil, fmt.Errorf("the status of ClusterClass %s/%s: %w", class.Namespace, class.Name, err)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hubv1.GroupVersion.String(), "kind": "ClusterClass",
		"metadata": map[string]any{"name": class.Name, "namespace": class.Namespace},
		"status":   m,
	}}, nil
}

// classStatusHolds says whether class's status already says what ReconcileClusterClassStatus would
// write (st): the observed generation, the effective variables, the VariablesReconciled condition
// (status, reason, severity and message) and VariablesReady (status, reason, message and observed
// generation). A variable's definitionsConflict unset is false, as a v1beta1 status (a bool) is
// read on the hub.
func classStatusHolds(class *hubv1.ClusterClass, st hubv1.ClusterClassStatus) bool {
	if class.Status.ObservedGeneration != st.ObservedGeneration ||
		!equality.Semantic.DeepEqual(conflictsSet(class.Status.Variables), conflictsSet(st.Variables)) {
		return false
	}
	old, want := classV1Beta1Condition(class), st.Deprecated.V1Beta1.Conditions[0]
	if old == nil || old.Status != want.Status || old.Reason != want.Reason || old.Severity != want.Severity || old.Message != want.Message {
		return false
	}
	cur, want2 := meta.FindStatusCondition(class.Status.Conditions, classVariablesReady), st.Conditions[0]
	return cur != nil && cur.Status == want2.Status && cur.Reason == want2.Reason && cur.Message == want2.Message &&
		cur.ObservedGeneration == want2.ObservedGeneration
}

// conflictsSet is vs with every definitionsConflict set (unset is false).
func conflictsSet(vs []hubv1.ClusterClassStatusVariable) []hubv1.ClusterClassStatusVariable {
	out := make([]hubv1.ClusterClassStatusVariable, len(vs))
	for i, v := range vs {
		conflict := v.DefinitionsConflict != nil && *v.DefinitionsConflict
		out[i] = v
		out[i].DefinitionsConflict = &conflict
	}
	return out
}

// ownTemplates makes the ClusterClass an owner of every template it references, as Cluster API's
// ClusterClass controller does (reconcileExternalReferences; off with its ClusterTopology gate):
// clusterctl move follows the references and the garbage collector deletes the templates with the
// class. A template that does not exist yet is skipped (the Clusters of the class report it); the
// next change of the class tries again. The owner references go in a merge patch carrying the
// resourceVersion read, so a concurrent change to the list fails and the activity reads again.
// The reference is the one Cluster API v1.14 sets (classOwned).
func (a *Activities) ownTemplates(ctx context.Context, class *hubv1.ClusterClass) error {
	for _, tr := range distinctTemplateRefs(class) {
		t, err := a.Kube.GetRef(ctx, tr.Ref, class.Namespace)
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading template %s %s of ClusterClass %s/%s: %w", tr.Ref.Kind, tr.Ref.Name, class.Namespace, class.Name, err)
		}
		owners, changed := classOwned(t.GetOwnerReferences(), class, a.servedVersion("ClusterClass"))
		if !changed {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": t.GetResourceVersion(), "ownerReferences": owners}})
		if err != nil {
			return err
		}
		gvr, err := a.Kube.ResourceFor(t.GetAPIVersion(), t.GetKind())
		if err != nil {
			return err
		}
		if _, err := a.Kube.MergePatch(ctx, gvr, t.GetNamespace(), t.GetName(), patch, StatusFieldManager); err != nil && !kube.IsNotFound(err) {
			return fmt.Errorf("making ClusterClass %s/%s an owner of %s %s: %w", class.Namespace, class.Name, t.GetKind(), t.GetName(), err)
		}
	}
	return nil
}

// classOwned is a template's owner references with the class among them as Cluster API v1.14's
// ClusterClass controller sets it (reconcileExternal): unchanged when they hold exactly a
// reference to the class in apiVersion (not as controller), else with that reference in place of
// the first one to the same group, kind and name (one in the other version included), or added
// (controllerutil.SetOwnerReference); changed says whether they differ from owners. apiVersion
// is the version the API server serves ClusterClasses in (cluster.x-k8s.io/v1beta2 beside
// Cluster API v1.11+, which writes that version; v1beta1 where only it is served, so the garbage
// collector can resolve the owner).
func classOwned(owners []metav1.OwnerReference, class *hubv1.ClusterClass, apiVersion string) ([]metav1.OwnerReference, bool) {
	want := metav1.OwnerReference{APIVersion: apiVersion, Kind: "ClusterClass", Name: class.Name, UID: class.UID}
	if slices.ContainsFunc(owners, func(o metav1.OwnerReference) bool {
		return o.APIVersion == want.APIVersion && o.Kind == want.Kind && o.Name == want.Name && o.UID == want.UID && (o.Controller == nil || !*o.Controller)
	}) {
		return owners, false
	}
	out := slices.Clone(owners)
	for i, o := range out {
		if gv, err := schema.ParseGroupVersion(o.APIVersion); err == nil && gv.Group == hubv1.GroupVersion.Group && o.Kind == want.Kind && o.Name == want.Name {
			out[i] = want
			return out, true
		}
	}
	return append(out, want), true
}

// distinctTemplateRefs are the templates a class references (desired.TemplateRefs), each once
// (by apiVersion, kind, namespace and name): several fields may name the same template.
func distinctTemplateRefs(class *hubv1.ClusterClass) []desired.TemplateRef {
	var out []desired.TemplateRef
	seen := map[string]bool{}
	for _, tr := range desired.TemplateRefs(class) {
		key := tr.Ref.APIVersion + " " + desired.RefKey(tr.Ref)
		if !seen[key] {
			seen[key] = true
			out = append(out, tr)
		}
	}
	return out
}

// discoversVariables says whether a class has external patches that define variables.
func discoversVariables(class *hubv1.ClusterClass) bool {
	for _, p := range class.Spec.Patches {
		if p.External != nil && p.External.DiscoverVariablesExtension != "" {
			return true
		}
	}
	return false
}

// discoverVariables calls every external patch's DiscoverVariables handler. Failures of the
// extensions, and definitions that are not valid, come back as messages for the condition; an
// error means the API server could not be read (the activity retries).
func (a *Activities) discoverVariables(ctx context.Context, class *hubv1.ClusterClass) ([]variables.Discovered, []error, error) {
	var out []variables.Discovered
	var failed []error
	rc := &runtimeext.Client{Kube: a.Kube}
	for _, p := range class.Spec.Patches {
		if p.External == nil || p.External.DiscoverVariablesExtension == "" {
			continue
		}
		var resp hooksv1.DiscoverVariablesResponse
		err := rc.CallExtension(ctx, hooksv1.DiscoverVariables, p.External.DiscoverVariablesExtension, class.Namespace,
			&hooksv1.DiscoverVariablesRequest{}, p.External.Settings, &resp)
		switch {
		case err != nil && !isExtensionError(err):
			return nil, nil, err
		// Worded as Cluster API v1.14's ClusterClass controller words them (reconcileVariables).
		case err != nil:
			failed = append(failed, fmt.Errorf("failed to call DiscoverVariables for patch %s: %w", p.Name, err))
			continue
		case resp.Status == "":
			// The handler failed under failurePolicy Ignore: no answer, no variables.
			failed = append(failed, fmt.Errorf("patch %s returned status %q with message %q", p.Name, resp.Status, resp.Message))
			continue
		}
		d, err := discoveredOf(p.Name, resp.Variables)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		a.Log.InfoContext(ctx, "variables discovered", "clusterClass", class.Namespace+"/"+class.Name, "patch", p.Name, "variables", len(d.Variables))
		out = append(out, d)
	}
	return out, failed, nil
}

// discoveredOf is a DiscoverVariables answer of patch on the hub, checked as Cluster API checks it
// (its paths: "<patch>.variables[...]").
func discoveredOf(patch string, answered []clusterv1.ClusterClassVariable) (variables.Discovered, error) {
	vars, errs := validation.VariablesV1Beta1(answered, field.NewPath(patch, "variables"))
	if len(errs) > 0 {
		return variables.Discovered{}, errs.ToAggregate()
	}
	return variables.Discovered{Patch: patch, Variables: vars}, nil
}
