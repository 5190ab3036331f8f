package upgrade

import (
	"slices"
	"strings"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/hooknames"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// Pending says the Cluster's runtime.cluster.x-k8s.io/pending-hooks annotation lists hook (Cluster
// API's hooks.IsPending).
func Pending(c *clusterv1.Cluster, hook string) bool {
	return slices.Contains(strings.Split(c.Annotations[runtimev1.PendingHooksAnnotation], ","), hook)
}

// CreateStep is what a pass does about BeforeClusterCreate.
type CreateStep int

const (
	// CreateGoesOn: the hook passed, or there is nothing to create.
	CreateGoesOn CreateStep = iota
	// CreateHeld: an extension handles the hook and it has not passed; the pass waits for it.
	CreateHeld
	// CreateUnhandled: no extension handles the hook; it passes without a call, in this pass,
	// which marks AfterControlPlaneInitialized pending before it creates anything.
	CreateUnhandled
)

// CreateGate tells whether a pass creates the Cluster's topology and what BeforeClusterCreate
// (handled: an extension handles it) does to it. Cluster API creates while the Cluster has neither
// an infrastructure nor a control plane reference, and goes on in the same reconcile when no
// extension handles the hook. A create that passed the hook without a call marks
// AfterControlPlaneInitialized pending before anything else, so the same create interrupted after
// it set the references (its step ran again as an activity of its own) is still recognised by
// that mark, and the workflow still learns that the hook passed and which hooks are owed.
func (l Ledger) CreateGate(c *clusterv1.Cluster, handled bool) CreateStep {
	if l.CreatePassed {
		return CreateGoesOn
	}
	fresh := !c.Spec.ControlPlaneRef.IsDefined() && !c.Spec.InfrastructureRef.IsDefined()
	switch {
	case handled && fresh:
		return CreateHeld
	case !handled && (fresh || Pending(c, hooksv1.AfterControlPlaneInitialized)):
		return CreateUnhandled
	}
	return CreateGoesOn
}
