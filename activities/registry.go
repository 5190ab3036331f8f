package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/activities/runtimeext"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
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
	u, err := a.Kube.Dynamic.Resource(runtimev1.GroupVersion.WithResource("extensionconfigs")).Get(ctx, ref.Name, metav1.GetOptions{})
	if kube.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading ExtensionConfig %s: %w", ref.Name, err)
	}
	cfg := &runtimev1.ExtensionConfig{}
	if err := decode.FromUnstructured(u, cfg); err != nil {
		return invalid(err)
	}
	return (&runtimeext.Client{Kube: a.Kube}).Discover(ctx, cfg)
}

// ReconcileClusterClassStatus validates a ClusterClass and writes its status: the effective
// variable definitions (status.variables), the VariablesReconciled condition and the observed
// generation.
func (a *Activities) ReconcileClusterClassStatus(ctx context.Context, ref ObjectRef) error {
	class := &clusterv1.ClusterClass{}
	if err := a.Kube.GetTyped(ctx, kube.ClusterClasses, ref.Namespace, ref.Name, class); err != nil {
		if kube.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading ClusterClass %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	cond := map[string]any{"type": "VariablesReconciled", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
	st := map[string]any{"observedGeneration": class.Generation}
	if errs := validation.ClusterClass(class, nil, nil); len(errs) > 0 {
		cond["status"], cond["reason"], cond["severity"] = "False", "VariableDiscoveryFailed", "Error"
		cond["message"] = errs.ToAggregate().Error()
	} else {
		js, err := json.Marshal(variables.StatusVariables(class))
		if err != nil {
			return err
		}
		var vars []any
		if err := json.Unmarshal(js, &vars); err != nil {
			return err
		}
		st["variables"] = vars
	}
	if old := class.Status.Conditions.Get("VariablesReconciled"); old != nil && string(old.Status) == cond["status"] {
		cond["lastTransitionTime"] = old.LastTransitionTime.UTC().Format(time.RFC3339)
	}
	st["conditions"] = []any{cond}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": clusterv1.GroupVersion.String(), "kind": "ClusterClass",
		"metadata": map[string]any{"name": class.Name, "namespace": class.Namespace},
		"status":   st,
	}}
	_, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager)
	return err
}
