package upgrade

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// TestCreateGate: Cluster API's create is held by BeforeClusterCreate only where an extension
// handles it (core/reconcilers/topology/cluster: callBeforeClusterCreateHook returns at once
// without handlers); without one the pass creates at once and marks AfterControlPlaneInitialized
// pending first (callAfterControlPlaneInitialized), which also tells a create interrupted after it
// set the references from a Cluster topoflow did not create.
func TestCreateGate(t *testing.T) {
	ref := clusterv1.ContractVersionedObjectReference{Kind: "SimControlPlane", Name: "cp"}
	for _, tt := range []struct {
		name    string
		refs    bool
		pending string
		ledger  Ledger
		handled bool
		want    CreateStep
	}{
		{name: "new Cluster, an extension handles the hook", handled: true, want: CreateHeld},
		{name: "new Cluster, no extension handles it", want: CreateUnhandled},
		{name: "the hook passed already", ledger: Ledger{CreatePassed: true}, handled: true, want: CreateGoesOn},
		{name: "the hook passed already, no extension", ledger: Ledger{CreatePassed: true}, want: CreateGoesOn},
		{name: "interrupted create: references set, AfterControlPlaneInitialized marked", refs: true,
			pending: hooksv1.AfterControlPlaneInitialized, want: CreateUnhandled},
		{name: "interrupted create among other marks", refs: true,
			pending: hooksv1.AfterClusterUpgrade + "," + hooksv1.AfterControlPlaneInitialized, want: CreateUnhandled},
		{name: "an existing Cluster (adopted), no extension", refs: true, want: CreateGoesOn},
		{name: "an existing Cluster (adopted), an extension handles the hook", refs: true,
			pending: hooksv1.AfterControlPlaneInitialized, handled: true, want: CreateGoesOn},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterv1.Cluster{}
			if tt.refs {
				c.Spec.ControlPlaneRef = ref
			}
			if tt.pending != "" {
				c.ObjectMeta = metav1.ObjectMeta{Annotations: map[string]string{runtimev1.PendingHooksAnnotation: tt.pending}}
			}
			if got := tt.ledger.CreateGate(c, tt.handled); got != tt.want {
				t.Errorf("CreateGate = %d, want %d", got, tt.want)
			}
		})
	}
}
