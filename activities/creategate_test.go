package activities

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/upgrade"
)

// TestCreateGate: Cluster API's create is held by BeforeClusterCreate only where an extension
// handles it (cluster_controller.go, callBeforeClusterCreateHook returns at once without handlers);
// without one the pass creates at once and marks AfterControlPlaneInitialized pending first
// (reconcile_state.go, callAfterControlPlaneInitialized), which also tells a create interrupted
// after it set the references from a Cluster topoflow did not create.
func TestCreateGate(t *testing.T) {
	ref := &corev1.ObjectReference{Kind: "SimControlPlane", Name: "cp"}
	unhandled := []string{hooksv1.BeforeClusterCreate, hooksv1.AfterControlPlaneInitialized}
	for _, tt := range []struct {
		name    string
		refs    bool
		pending string
		ledger  upgrade.Ledger
		skip    []string
		want    createStep
	}{
		{name: "new Cluster, an extension handles the hook", skip: nil, want: createHeld},
		{name: "new Cluster, no extension handles it", skip: unhandled, want: createUnhandled},
		{name: "the hook passed already", ledger: upgrade.Ledger{CreatePassed: true}, skip: nil, want: createDone},
		{name: "the hook passed already, no extension", ledger: upgrade.Ledger{CreatePassed: true}, skip: unhandled, want: createDone},
		{name: "interrupted create: references set, AfterControlPlaneInitialized marked", refs: true,
			pending: hooksv1.AfterControlPlaneInitialized, skip: unhandled, want: createUnhandled},
		{name: "interrupted create among other marks", refs: true,
			pending: hooksv1.AfterClusterUpgrade + "," + hooksv1.AfterControlPlaneInitialized, skip: unhandled, want: createUnhandled},
		{name: "an existing Cluster (adopted), no extension", refs: true, skip: unhandled, want: createDone},
		{name: "an existing Cluster (adopted), an extension handles the hook", refs: true,
			pending: hooksv1.AfterControlPlaneInitialized, skip: nil, want: createDone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterv1.Cluster{}
			if tt.refs {
				c.Spec.ControlPlaneRef = ref
			}
			if tt.pending != "" {
				c.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{runtimev1.PendingHooksAnnotation: tt.pending}}
			}
			if got := createGate(c, tt.ledger, tt.skip); got != tt.want {
				t.Errorf("createGate = %d, want %d", got, tt.want)
			}
		})
	}
}
