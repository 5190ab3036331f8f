// Package admission serves topoflow's admission webhooks for Cluster and ClusterClass, in place
// of Cluster API's: defaulting (mutating) and validation with the old object (validating), with
// the rules of model/validation and their field-named messages, so `kubectl apply` of bad input
// fails at once. The paths are Cluster API's own, so its webhook configurations fit unchanged.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/model/topology"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/model/validation"
)

// Paths the webhooks are served at (Cluster API's).
const (
	PathMutateCluster        = "/mutate-cluster-x-k8s-io-v1beta1-cluster"
	PathValidateCluster      = "/validate-cluster-x-k8s-io-v1beta1-cluster"
	PathMutateClusterClass   = "/mutate-cluster-x-k8s-io-v1beta1-clusterclass"
	PathValidateClusterClass = "/validate-cluster-x-k8s-io-v1beta1-clusterclass"
	// The ExtensionConfig webhooks (Cluster API serves them only with its RuntimeSDK gate on,
	// which is off beside topoflow).
	PathMutateExtensionConfig   = "/mutate-runtime-cluster-x-k8s-io-v1alpha1-extensionconfig"
	PathValidateExtensionConfig = "/validate-runtime-cluster-x-k8s-io-v1alpha1-extensionconfig"
	// PathHoldTopologyDelete is topoflow's own: deletes of topology objects while the Cluster's
	// BeforeClusterDelete hook has not passed (see holdTopologyDelete).
	PathHoldTopologyDelete = "/validate-topology-delete"
	// PathValidateRollout checks topoflow's own fleet Rollouts (validateRollout), and
	// PathValidateRolloutStrategy the strategies they share (validateRolloutStrategy).
	PathValidateRollout         = "/validate-topoflow-dev-v1alpha1-rollout"
	PathValidateRolloutStrategy = "/validate-topoflow-dev-v1alpha1-rolloutstrategy"
)

// Reader is what the webhooks read from the API server (activities.Activities implements it).
type Reader interface {
	// ClassOf returns the Cluster's ClusterClass, nil when it does not exist.
	ClassOf(ctx context.Context, c *clusterv1.Cluster) (*clusterv1.ClusterClass, error)
	// RunningState is what the Cluster's control plane and pools run now.
	RunningState(ctx context.Context, c *clusterv1.Cluster, class *clusterv1.ClusterClass) (upgrade.Input, error)
	// ClusterNamed reads a Cluster from the API server (nil when it does not exist).
	ClusterNamed(ctx context.Context, ns, name string) (*clusterv1.Cluster, error)
	// ClustersUsing lists the Clusters whose topology names the class.
	ClustersUsing(ctx context.Context, class *clusterv1.ClusterClass) ([]clusterv1.Cluster, error)
	// ClustersMatching lists the Clusters of the namespaces whose labels match.
	ClustersMatching(ctx context.Context, namespaces []string, sel *metav1.LabelSelector) ([]clusterv1.Cluster, error)
	// ClassExists says whether a ClusterClass exists.
	ClassExists(ctx context.Context, namespace, name string) (bool, error)
	// ResolveStrategy gives a Rollout's spec its RolloutStrategy's stages, or says why it cannot.
	ResolveStrategy(ctx context.Context, namespace string, spec rolloutv1.RolloutSpec) (rollout.Resolved, error)
}

// Server answers AdmissionReview requests.
type Server struct {
	Reads Reader
	Log   *slog.Logger
	// Versions names the API version of a provider kind, for the conversion webhook (Cluster
	// references to v1beta1); kube.Client.PreferredVersion.
	Versions conversion.APIVersionOf
	// Gates are the Cluster API feature gates whose rules apply (taints need
	// MachineTaintPropagation).
	Gates validation.Gates
}

var (
	clusterKind         = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "Cluster"}
	clusterClassKind    = schema.GroupKind{Group: clusterv1.GroupVersion.Group, Kind: "ClusterClass"}
	extensionConfigKind = schema.GroupKind{Group: runtimev1.GroupVersion.Group, Kind: "ExtensionConfig"}
)

// Handler routes the admission webhooks and the conversion webhook, plus /healthz.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathMutateCluster, s.review(s.mutateCluster))
	mux.HandleFunc(PathValidateCluster, s.review(s.validateCluster))
	mux.HandleFunc(PathMutateClusterClass, s.review(s.mutateClusterClass))
	mux.HandleFunc(PathValidateClusterClass, s.review(s.validateClusterClass))
	mux.HandleFunc(PathMutateExtensionConfig, s.review(mutateExtensionConfig))
	mux.HandleFunc(PathValidateExtensionConfig, s.review(validateExtensionConfig))
	mux.HandleFunc(PathHoldTopologyDelete, s.review(s.holdTopologyDelete))
	mux.HandleFunc(PathValidateRollout, s.review(s.validateRollout))
	mux.HandleFunc(PathValidateRolloutStrategy, s.review(validateRolloutStrategy))
	mux.HandleFunc(PathConvert, s.convert)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	return mux
}

type reviewFunc func(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse

// review decodes an AdmissionReview, runs fn and writes its answer with the request's UID.
func (s *Server) review(fn reviewFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := fn(r.Context(), in.Request)
		resp.UID = in.Request.UID
		if !resp.Allowed && s.Log != nil {
			s.Log.InfoContext(r.Context(), "admission refused", "path", r.URL.Path, "operation", in.Request.Operation,
				"namespace", in.Request.Namespace, "name", in.Request.Name, "reason", resp.Result.Message)
		}
		out := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func allowed(warnings ...string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Allowed: true, Warnings: warnings}
}

func denied(err *apierrors.StatusError) *admissionv1.AdmissionResponse {
	st := err.ErrStatus
	return &admissionv1.AdmissionResponse{Allowed: false, Result: &st}
}

func invalid(kind schema.GroupKind, name string, errs field.ErrorList) *admissionv1.AdmissionResponse {
	return denied(apierrors.NewInvalid(kind, name, errs))
}

func badRequest(format string, args ...any) *admissionv1.AdmissionResponse {
	return denied(apierrors.NewBadRequest(fmt.Sprintf(format, args...)))
}

// decodeObject reads an object leniently: a field this version of topoflow does not know is ignored,
// as the API server's schema would have pruned or kept it.
func decodeObject[T any](raw []byte) (*T, error) {
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

// mutateCluster applies the Cluster webhook's defaults (validation.DefaultCluster, and the
// class's variable defaults when the class exists) as a JSON patch.
func (s *Server) mutateCluster(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation == admissionv1.Delete {
		return allowed()
	}
	c, err := decodeObject[clusterv1.Cluster](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the Cluster: %v", err)
	}
	if c.Spec.Topology != nil && c.Spec.Topology.Class == "" {
		return invalid(clusterKind, c.Name, field.ErrorList{field.Required(field.NewPath("spec", "topology", "class"), "class cannot be empty")})
	}
	if err := validation.DefaultClusterV1Beta1(c); err != nil {
		return badRequest("%v", err)
	}
	if c.Spec.Topology != nil {
		class, err := s.Reads.ClassOf(ctx, c)
		if err != nil {
			return denied(apierrors.NewInternalError(fmt.Errorf("Cluster %s cannot be defaulted: %w", c.Name, err)))
		}
		// A class that does not exist yet leaves the variables as they are (Cluster API's too).
		if errs := validation.DefaultVariablesV1Beta1(c, class); len(errs) > 0 {
			return invalid(clusterKind, c.Name, errs)
		}
	}
	return patchedLeavingOut(req.Object.Raw, "spec", c.Spec)
}

// validateCluster checks a Cluster on create and update (with the old object), against its
// class, the old class on a rebase, and what runs now when the version changes.
func (s *Server) validateCluster(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation == admissionv1.Delete {
		return allowed()
	}
	c, err := decodeObject[clusterv1.Cluster](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the Cluster: %v", err)
	}
	var old *clusterv1.Cluster
	if req.Operation == admissionv1.Update {
		if old, err = decodeObject[clusterv1.Cluster](req.OldObject.Raw); err != nil {
			return badRequest("decoding the old Cluster: %v", err)
		}
		if err := validation.DefaultClusterV1Beta1(old); err != nil {
			return badRequest("%v", err)
		}
	}
	if err := validation.DefaultClusterV1Beta1(c); err != nil {
		return badRequest("%v", err)
	}
	var warnings []string
	var class, oldClass *clusterv1.ClusterClass
	classPath := field.NewPath("spec", "topology", "class")
	if c.Spec.Topology != nil {
		if class, err = s.Reads.ClassOf(ctx, c); err != nil {
			return invalid(clusterKind, c.Name, field.ErrorList{field.InternalError(classPath, err)})
		}
		if class == nil {
			if old != nil && old.Spec.Topology != nil {
				// An update needs the class (Cluster API's rule): nothing can be checked without it.
				return invalid(clusterKind, c.Name, field.ErrorList{field.Invalid(classPath, c.Spec.Topology.Class,
					fmt.Sprintf("ClusterClass %s/%s not found", c.ClassNamespace(), c.Spec.Topology.Class))})
			}
			warnings = append(warnings, fmt.Sprintf("Cluster refers to ClusterClass %s/%s, but this ClusterClass does not exist. "+
				"Cluster topology has not been fully validated. The ClusterClass must be created to reconcile the Cluster", c.ClassNamespace(), c.Spec.Topology.Class))
		}
		if old != nil && old.Spec.Topology != nil && old.Spec.Topology.Class != c.Spec.Topology.Class {
			if oldClass, err = s.Reads.ClassOf(ctx, old); err != nil {
				return invalid(clusterKind, c.Name, field.ErrorList{field.InternalError(classPath, err)})
			}
		}
	}
	errs := append(validation.ClusterV1Beta1(c, old, class, oldClass), validation.ClusterTaintsV1Beta1(c, s.Gates)...)
	if len(errs) == 0 && class != nil && old != nil && old.Spec.Topology != nil && old.Spec.Topology.Version != c.Spec.Topology.Version {
		running, err := s.Reads.RunningState(ctx, old, class)
		if err != nil {
			return invalid(clusterKind, c.Name, field.ErrorList{field.InternalError(field.NewPath("spec", "topology", "version"), err)})
		}
		errs = append(errs, validation.VersionAgainstRunningV1Beta1(c, old, running)...)
	}
	if len(errs) > 0 {
		r := invalid(clusterKind, c.Name, errs)
		r.Warnings = warnings
		return r
	}
	return allowed(warnings...)
}

// mutateClusterClass applies the ClusterClass webhook's defaults (reference namespaces).
func (s *Server) mutateClusterClass(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation == admissionv1.Delete {
		return allowed()
	}
	class, err := decodeObject[clusterv1.ClusterClass](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the ClusterClass: %v", err)
	}
	validation.DefaultClusterClassV1Beta1(class)
	return patchedLeavingOut(req.Object.Raw, "spec", class.Spec)
}

// validateClusterClass checks a ClusterClass on create and update (with the Clusters using it,
// which must stay valid), and refuses to delete one that Clusters use.
func (s *Server) validateClusterClass(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation == admissionv1.Delete {
		class, err := decodeObject[clusterv1.ClusterClass](req.OldObject.Raw)
		if err != nil {
			return badRequest("decoding the ClusterClass: %v", err)
		}
		clusters, err := s.Reads.ClustersUsing(ctx, class)
		if err != nil {
			return denied(apierrors.NewInternalError(fmt.Errorf("could not retrieve Clusters using ClusterClass: %w", err)))
		}
		if len(clusters) > 0 {
			return denied(apierrors.NewForbidden(clusterv1.GroupVersion.WithResource("clusterclasses").GroupResource(), class.Name,
				fmt.Errorf("ClusterClass cannot be deleted because it is used by Cluster(s): %s", clusterList(clusters, 3))))
		}
		return allowed()
	}
	class, err := decodeObject[clusterv1.ClusterClass](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the ClusterClass: %v", err)
	}
	validation.DefaultClusterClassV1Beta1(class)
	var old *clusterv1.ClusterClass
	var clusters []clusterv1.Cluster
	if req.Operation == admissionv1.Update {
		if old, err = decodeObject[clusterv1.ClusterClass](req.OldObject.Raw); err != nil {
			return badRequest("decoding the old ClusterClass: %v", err)
		}
		validation.DefaultClusterClassV1Beta1(old)
		if clusters, err = s.Reads.ClustersUsing(ctx, class); err != nil {
			return denied(apierrors.NewInternalError(fmt.Errorf("could not retrieve Clusters using ClusterClass: %w", err)))
		}
	}
	if errs := append(validation.ClusterClassV1Beta1(class, old, clusters), validation.ClassTaintsV1Beta1(class, s.Gates)...); len(errs) > 0 {
		return invalid(clusterClassKind, class.Name, errs)
	}
	return allowed()
}

// clusterList names at most max Clusters, then how many more.
func clusterList(cs []clusterv1.Cluster, max int) string {
	var names []string
	for i, c := range cs {
		if i == max {
			names = append(names, fmt.Sprintf("... (%d more)", len(cs)-max))
			break
		}
		names = append(names, c.Namespace+"/"+c.Name)
	}
	return strings.Join(names, ", ")
}

// holdTopologyDelete refuses to delete an object of a Cluster's topology while the Cluster is
// being deleted and its BeforeClusterDelete hook has not passed (topology.DeleteHeld). Beside
// Cluster API core, whose Cluster controller deletes a deleting Cluster's children at once when its
// ClusterTopology gate is off, this keeps the hook's promise: nothing goes before the extension
// agrees. topoflow's own teardown starts only after the hook passed.
func (s *Server) holdTopologyDelete(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Delete {
		return allowed()
	}
	var meta metav1.PartialObjectMetadata
	if err := json.Unmarshal(req.OldObject.Raw, &meta); err != nil {
		return badRequest("decoding the object: %v", err)
	}
	name := meta.Labels[labels.ClusterName]
	if name == "" {
		return allowed()
	}
	ns := req.Namespace
	if ns == "" {
		ns = meta.Namespace
	}
	c, err := s.Reads.ClusterNamed(ctx, ns, name)
	if err != nil {
		return denied(apierrors.NewInternalError(err))
	}
	if !topology.DeleteHeld(c) {
		return allowed()
	}
	return denied(apierrors.NewForbidden(schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}, meta.Name,
		fmt.Errorf("%s %s belongs to Cluster %s/%s, which waits for its BeforeClusterDelete hook: topoflow deletes its topology once the hook passes", meta.Kind, meta.Name, ns, name)))
}

// mutateExtensionConfig applies the ExtensionConfig webhook's defaults (namespaceSelector, service port).
func mutateExtensionConfig(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	cfg, err := decodeObject[runtimev1.ExtensionConfig](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the ExtensionConfig: %v", err)
	}
	validation.DefaultExtensionConfig(cfg)
	return patched(req.Object.Raw, "spec", cfg.Spec)
}

// validateExtensionConfig checks an ExtensionConfig on create and update (validation.ExtensionConfig).
func validateExtensionConfig(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	cfg, err := decodeObject[runtimev1.ExtensionConfig](req.Object.Raw)
	if err != nil {
		return badRequest("decoding the ExtensionConfig: %v", err)
	}
	if errs := validation.ExtensionConfig(cfg); len(errs) > 0 {
		return invalid(extensionConfigKind, cfg.Name, errs)
	}
	return allowed()
}
