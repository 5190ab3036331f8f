package activities

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
)

// contractsFor is how long a provider CRD's contract labels are trusted: they change only when
// the provider is upgraded, and a pass must not read a CRD each time.
const contractsFor = 5 * time.Minute

// contracts remembers the contract each provider API version follows (contract.VersionOf), by
// group, version and kind.
type contracts struct {
	mu sync.Mutex
	m  map[schema.GroupVersionKind]knownContract
}

type knownContract struct {
	contract string
	read     time.Time
}

// controlPlaneContract is the contract the class's control plane follows, read from its CRD's
// labels as Cluster API reads it (contract.GetContractVersionForVersion; the control plane is
// written at its template's version, with the template's kind less "Template"). A CRD that
// cannot be read, or names no contract for the version (topoflow's simulated providers), counts
// as the v1beta1 contract.
func (a *Activities) controlPlaneContract(ctx context.Context, class *hubv1.ClusterClass) string {
	ref := class.Spec.ControlPlane.TemplateRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return contract.V1Beta1
	}
	gvk := gv.WithKind(strings.TrimSuffix(ref.Kind, "Template"))
	a.contracts.mu.Lock()
	known, ok := a.contracts.m[gvk]
	a.contracts.mu.Unlock()
	if ok && time.Since(known.read) < contractsFor {
		return known.contract
	}
	c := a.readContract(ctx, gvk)
	a.contracts.mu.Lock()
	if a.contracts.m == nil {
		a.contracts.m = map[schema.GroupVersionKind]knownContract{}
	}
	a.contracts.m[gvk] = knownContract{contract: c, read: time.Now()}
	a.contracts.mu.Unlock()
	return c
}

// readContract reads the contract of gvk from its CRD ("<resource>.<group>").
func (a *Activities) readContract(ctx context.Context, gvk schema.GroupVersionKind) string {
	gvr, err := a.Kube.ResourceFor(gvk.GroupVersion().String(), gvk.Kind)
	if err != nil {
		return contract.V1Beta1
	}
	crd, err := a.Kube.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, gvr.Resource+"."+gvk.Group, metav1.GetOptions{})
	if err != nil {
		return contract.V1Beta1
	}
	if c := contract.VersionOf(crd.GetLabels(), gvk.Version); c != "" {
		return c
	}
	return contract.V1Beta1
}
