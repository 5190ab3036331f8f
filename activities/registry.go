package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/desired"
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

// ReconcileClusterClassStatus validates a ClusterClass and writes its status: the effective
// variable definitions (status.variables: inline, and discovered by the external patches'
// DiscoverVariables handlers), the VariablesReconciled condition and the observed generation.
// When discovery fails the previous status.variables stay, as in Cluster API.
func (a *Activities) ReconcileClusterClassStatus(ctx context.Context, ref ObjectRef) error {
	class := &clusterv1.ClusterClass{}
	if err := a.Kube.GetTyped(ctx, kube.V1Beta1ClusterClasses, ref.Namespace, ref.Name, class); err != nil {
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
	cond := map[string]any{"type": "VariablesReconciled", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
	st := map[string]any{"observedGeneration": class.Generation}
	vars := class.Status.Variables
	if len(discoveryErrs) > 0 {
		cond["status"], cond["reason"], cond["severity"] = "False", "VariableDiscoveryFailed", "Error"
		cond["message"] = "VariableDiscovery failed: " + utilerrors.NewAggregate(discoveryErrs).Error()
	} else {
		vars = adapt.ClusterClassStatusVariablesFromHub(variables.StatusVariables(adapt.ClusterClassToHub(class), discovered...))
		checked := class.DeepCopy()
		checked.Status.Variables = vars
		if errs := validation.ClusterClassV1Beta1(checked, nil, nil); len(errs) > 0 {
			cond["status"], cond["reason"], cond["severity"] = "False", "VariableDiscoveryFailed", "Error"
			cond["message"] = errs.ToAggregate().Error()
			if len(discovered) == 0 {
				vars = nil // an invalid class without extensions has no effective variables
			}
		}
	}
	if len(vars) > 0 {
		js, err := json.Marshal(vars)
		if err != nil {
			return err
		}
		var list []any
		if err := json.Unmarshal(js, &list); err != nil {
			return err
		}
		st["variables"] = list
	}
	if old := class.Status.Conditions.Get("VariablesReconciled"); old != nil && string(old.Status) == cond["status"] {
		cond["lastTransitionTime"] = old.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	st["conditions"] = []any{cond}
	// Nothing to write when the status says it already: a class whose status Cluster API's
	// ClusterClass controller wrote before a takeover keeps it as it is, with no record of
	// topoflow as its writer.
	if !classStatusHolds(class, vars, cond) {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": clusterv1.GroupVersion.String(), "kind": "ClusterClass",
			"metadata": map[string]any{"name": class.Name, "namespace": class.Namespace},
			"status":   st,
		}}
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

// classStatusHolds says whether class's status already says what ReconcileClusterClassStatus would
// write: the observed generation, the effective variables and the VariablesReconciled condition
// (status, reason, severity and message).
func classStatusHolds(class *clusterv1.ClusterClass, vars []clusterv1.ClusterClassStatusVariable, cond map[string]any) bool {
	old := class.Status.Conditions.Get("VariablesReconciled")
	if class.Status.ObservedGeneration != class.Generation || old == nil || !equality.Semantic.DeepEqual(class.Status.Variables, vars) {
		return false
	}
	str := func(k string) string { s, _ := cond[k].(string); return s }
	return string(old.Status) == str("status") && old.Reason == str("reason") &&
		string(old.Severity) == str("severity") && old.Message == str("message")
}

// ownTemplates makes the ClusterClass an owner of every template it references, as Cluster API's
// ClusterClass controller does (reconcileExternalReferences; off with its ClusterTopology gate):
// clusterctl move follows the references and the garbage collector deletes the templates with the
// class. A template that does not exist yet is skipped (the Clusters of the class report it); the
// next change of the class tries again. The owner references go in a merge patch carrying the
// resourceVersion read, so a concurrent change to the list fails and the activity reads again.
func (a *Activities) ownTemplates(ctx context.Context, class *clusterv1.ClusterClass) error {
	for _, tr := range distinctTemplateRefs(class) {
		t, err := a.Kube.GetRef(ctx, tr.Ref, class.Namespace)
		if kube.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading template %s %s of ClusterClass %s/%s: %w", tr.Ref.Kind, tr.Ref.Name, class.Namespace, class.Name, err)
		}
		owners := t.GetOwnerReferences()
		if slices.ContainsFunc(owners, func(o metav1.OwnerReference) bool { return o.UID == class.UID }) {
			continue
		}
		owners = append(owners, metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "ClusterClass", Name: class.Name, UID: class.UID})
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

// distinctTemplateRefs are the templates a class references (desired.TemplateRefs), each once
// (by apiVersion, kind, namespace and name): several fields may name the same template.
func distinctTemplateRefs(class *clusterv1.ClusterClass) []desired.TemplateRef {
	var out []desired.TemplateRef
	seen := map[string]bool{}
	for _, tr := range desired.TemplateRefs(adapt.ClusterClassToHub(class)) {
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
func (a *Activities) discoverVariables(ctx context.Context, class *clusterv1.ClusterClass) ([]variables.Discovered, []error, error) {
	var out []variables.Discovered
	var failed []error
	rc := &runtimeext.Client{Kube: a.Kube}
	for _, p := range class.Spec.Patches {
		if p.External == nil || p.External.DiscoverVariablesExtension == nil {
			continue
		}
		var resp hooksv1.DiscoverVariablesResponse
		err := rc.CallExtension(ctx, hooksv1.DiscoverVariables, *p.External.DiscoverVariablesExtension, class.Namespace,
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
		if errs := validation.VariablesV1Beta1(resp.Variables, field.NewPath(p.Name, "variables")); len(errs) > 0 {
			failed = append(failed, errs.ToAggregate())
			continue
		}
		a.Log.InfoContext(ctx, "variables discovered", "clusterClass", class.Namespace+"/"+class.Name, "patch", p.Name, "variables", len(resp.Variables))
		out = append(out, variables.Discovered{Patch: p.Name, Variables: adapt.ClusterClassVariablesToHub(resp.Variables)})
	}
	return out, failed, nil
}
