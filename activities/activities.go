// Package activities holds everything topoflow's workflows do to the world: reading Clusters,
// ClusterClasses and templates, server-side applying topology objects, and writing status.
// Every activity is idempotent, so a retry after a crash or an outage is always safe. In the
// worker, reads come from an informer cache (kube.Cache: never older than what the worker wrote
// or the triggering event showed) and an apply the cache shows would change nothing is not sent.
package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"

	"github.com/topoflow/topoflow/activities/runtimeext"
	"github.com/topoflow/topoflow/internal/kube"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/model/validation"
)

// ClusterRef names a Cluster.
type ClusterRef struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r ClusterRef) String() string { return r.Namespace + "/" + r.Name }

// Application error types the workflows branch on. Both are non-retryable: retrying the same
// input cannot help; a watch event (the object appears, the spec is fixed) or a resync will.
const (
	// ErrMissingDependency: the ClusterClass or a template it references does not exist.
	ErrMissingDependency = "MissingDependency"
	// ErrInvalidTopology: the Cluster and its class cannot be combined into objects.
	ErrInvalidTopology = "InvalidTopology"
)

// FieldManagers are the field managers topoflow writes under; a worker's read cache keeps their
// managedFields entries (the no-op check and a Rollout's hand-change check read them).
func FieldManagers() []string { return append(PassFieldManagers(), rollout.FieldManager) }

// PassFieldManagers are the managers a Cluster's own workflow writes under: an update only they
// made is that workflow's echo, which the starter need not signal. A Rollout's write
// (rollout.FieldManager) is not among them: it changes the Cluster's spec, which its workflow
// must see.
func PassFieldManagers() []string {
	return []string{labels.FieldManager, StatusFieldManager, pendingHooksFieldManager, runtimeext.CAInjectorFieldManager}
}

// Activities is the activity set a worker registers.
type Activities struct {
	Kube *kube.Client
	Log  *slog.Logger
	// Temporal lets activities look up workflows (RunningWorkflows), in the client's namespace.
	Temporal client.Client
	// ClusterController turns on the Cluster controller role (see ownByCluster): on by default,
	// off when Cluster API's core controllers run beside topoflow.
	ClusterController bool
	// hookAnswers gives a retried hook call the answer its earlier attempt received (nil: none).
	hookAnswers *recentAnswers
	// Events records Kubernetes Events on Clusters (nil: none; see event).
	Events record.EventRecorder
	// workload reads workload clusters' Nodes (see nodeVersions).
	workload workloadClients
	// contracts are the provider contracts read from CRDs (see controlPlaneContract).
	contracts contracts
}

// New returns the activity set.
func New(k *kube.Client, log *slog.Logger) *Activities {
	if log == nil {
		log = slog.Default()
	}
	return &Activities{Kube: k, Log: log, ClusterController: true, hookAnswers: newRecentAnswers(nil)}
}

// contractRef is a Cluster's or pool's v1beta2 contract reference as an object reference to read
// it by, in namespace ns, at the version the API server prefers for its group and kind (Cluster API
// resolves the contract's version from the provider CRD's label; for providers that serve their
// newest contract version, as they must, the two agree). Nil when the reference is not set.
func (a *Activities) contractRef(ref hubv1.ContractVersionedObjectReference, ns string) (*corev1.ObjectReference, error) {
	if !ref.IsDefined() {
		return nil, nil
	}
	v, err := a.Kube.PreferredVersion(ref.APIGroup, ref.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	return &corev1.ObjectReference{APIVersion: schema.GroupVersion{Group: ref.APIGroup, Version: v}.String(), Kind: ref.Kind, Namespace: ns, Name: ref.Name}, nil
}

func missing(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return temporal.NewNonRetryableApplicationError(msg, ErrMissingDependency, errors.New(msg))
}

func invalid(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrInvalidTopology, err)
}

// readCluster reads a Cluster and applies the Cluster webhook's defaults to it (see
// validation.DefaultCluster), so every activity computes from the Cluster Cluster API would see.
// Errors are the API server's (check kube.IsNotFound) or decoding's.
func (a *Activities) readCluster(ctx context.Context, ref ClusterRef) (*hubv1.Cluster, error) {
	cluster := &hubv1.Cluster{}
	if err := a.Kube.GetTyped(ctx, kube.Clusters, ref.Namespace, ref.Name, cluster); err != nil {
		return nil, err
	}
	if err := validation.DefaultCluster(cluster); err != nil {
		return nil, invalid(err)
	}
	return cluster, nil
}
