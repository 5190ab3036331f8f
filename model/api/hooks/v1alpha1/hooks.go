// Package v1alpha1 holds the hooks.runtime.cluster.x-k8s.io/v1alpha1 request and response
// bodies that topoflow sends to and reads from Runtime Extensions. They are wire types only:
// JSON field names match Cluster API so existing extensions answer unchanged.
//
// +kubebuilder:object:generate=false
package v1alpha1

import (
	"encoding/json"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/hooks/hooknames"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// Group is the API group of the hooks; Cluster API names a hook with it ("BeforeClusterCreate.hooks.runtime.cluster.x-k8s.io").
const Group = "hooks.runtime.cluster.x-k8s.io"

// APIVersion is the apiVersion every request and response carries.
const APIVersion = Group + "/v1alpha1"

// Hook names as they appear in ExtensionConfig handlers and request kinds (without "Request"),
// from hooknames.
const (
	Discovery                    = hooknames.Discovery
	BeforeClusterCreate          = hooknames.BeforeClusterCreate
	AfterControlPlaneInitialized = hooknames.AfterControlPlaneInitialized
	BeforeClusterUpgrade         = hooknames.BeforeClusterUpgrade
	BeforeControlPlaneUpgrade    = hooknames.BeforeControlPlaneUpgrade
	AfterControlPlaneUpgrade     = hooknames.AfterControlPlaneUpgrade
	BeforeWorkersUpgrade         = hooknames.BeforeWorkersUpgrade
	AfterWorkersUpgrade          = hooknames.AfterWorkersUpgrade
	AfterClusterUpgrade          = hooknames.AfterClusterUpgrade
	BeforeClusterDelete          = hooknames.BeforeClusterDelete
	GeneratePatches              = hooknames.GeneratePatches
	ValidateTopology             = hooknames.ValidateTopology
	DiscoverVariables            = hooknames.DiscoverVariables
	GenerateUpgradePlan          = hooknames.GenerateUpgradePlan
)

// HandlerPath is the URL path of a hook handler: /hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook lowercase>/<handler>.
// The discovery endpoint has no handler name.
func HandlerPath(hook, handler string) string {
	p := "/" + APIVersion + "/" + strings.ToLower(hook)
	if handler != "" {
		p += "/" + handler
	}
	return p
}

// ResponseStatus is Success or Failure.
type ResponseStatus string

// Response statuses.
const (
	ResponseStatusSuccess ResponseStatus = "Success"
	ResponseStatusFailure ResponseStatus = "Failure"
)

// CommonRequest is embedded in every request.
type CommonRequest struct {
	// Settings come from the ExtensionConfig (and for external patches, the ClusterClass).
	Settings map[string]string `json:"settings,omitempty"`
}

// CommonResponse is embedded in every response.
type CommonResponse struct {
	Status  ResponseStatus `json:"status"`
	Message string         `json:"message,omitempty"`
}

// CommonRetryResponse is the response of a blocking hook: a non-zero RetryAfterSeconds blocks.
type CommonRetryResponse struct {
	CommonResponse    `json:",inline"`
	RetryAfterSeconds int32 `json:"retryAfterSeconds"`
}

// DiscoveryRequest asks an extension server which handlers it serves.
type DiscoveryRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
}

// DiscoveryResponse lists the handlers of an extension server.
type DiscoveryResponse struct {
	metav1.TypeMeta `json:",inline"`
	CommonResponse  `json:",inline"`
	Handlers        []runtimev1.ExtensionHandler `json:"handlers"`
}

// ClusterRequest is the body of the lifecycle hooks that only carry the Cluster.
type ClusterRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
	Cluster         hubv1.Cluster `json:"cluster"`
}

// BeforeClusterCreateRequest is sent before any topology object is created. Blocking.
type BeforeClusterCreateRequest = ClusterRequest

// AfterControlPlaneInitializedRequest is sent once the control plane is initialized. Not blocking.
type AfterControlPlaneInitializedRequest = ClusterRequest

// BeforeClusterDeleteRequest is sent before a Cluster is deleted. Blocking.
type BeforeClusterDeleteRequest = ClusterRequest

// UpgradeStepInfo is one Kubernetes version an upgrade passes through.
type UpgradeStepInfo struct {
	Version string `json:"version"`
}

// BeforeClusterUpgradeRequest is sent before an upgrade starts. Blocking.
type BeforeClusterUpgradeRequest struct {
	metav1.TypeMeta       `json:",inline"`
	CommonRequest         `json:",inline"`
	Cluster               hubv1.Cluster `json:"cluster"`
	FromKubernetesVersion string        `json:"fromKubernetesVersion"`
	ToKubernetesVersion   string        `json:"toKubernetesVersion"`
	// ControlPlaneUpgrades and WorkersUpgrades are the planned steps (Cluster API v1.12 chained upgrades).
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`
	WorkersUpgrades      []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

// UpgradeStepRequest is the body of the per-step upgrade hooks (Before/AfterControlPlaneUpgrade,
// Before/AfterWorkersUpgrade) and AfterClusterUpgrade.
type UpgradeStepRequest struct {
	metav1.TypeMeta       `json:",inline"`
	CommonRequest         `json:",inline"`
	Cluster               hubv1.Cluster `json:"cluster"`
	FromKubernetesVersion string        `json:"fromKubernetesVersion,omitempty"`
	ToKubernetesVersion   string        `json:"toKubernetesVersion,omitempty"`
	// KubernetesVersion is the version the step brings the Cluster to (AfterControlPlaneUpgrade,
	// AfterClusterUpgrade).
	KubernetesVersion    string            `json:"kubernetesVersion,omitempty"`
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`
	WorkersUpgrades      []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

// GenerateUpgradePlanRequest asks the ClusterClass's upgrade plan extension which versions an
// upgrade passes through (Cluster API v1.12).
type GenerateUpgradePlanRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
	Cluster         hubv1.Cluster `json:"cluster"`
	// FromControlPlaneKubernetesVersion is the control plane's current version.
	FromControlPlaneKubernetesVersion string `json:"fromControlPlaneKubernetesVersion,omitempty"`
	// FromWorkersKubernetesVersion is the lowest version the worker pools run ("" without pools).
	FromWorkersKubernetesVersion string `json:"fromWorkersKubernetesVersion,omitempty"`
	ToKubernetesVersion          string `json:"toKubernetesVersion,omitempty"`
}

// GenerateUpgradePlanResponse is the plan: the control plane's steps (the last one the target),
// and optionally the workers' steps (when empty, topoflow works them out).
type GenerateUpgradePlanResponse struct {
	metav1.TypeMeta      `json:",inline"`
	CommonResponse       `json:",inline"`
	ControlPlaneUpgrades []UpgradeStepInfo `json:"controlPlaneUpgrades,omitempty"`
	WorkersUpgrades      []UpgradeStepInfo `json:"workersUpgrades,omitempty"`
}

// RetryResponse is the response of every blocking lifecycle hook.
type RetryResponse struct {
	metav1.TypeMeta     `json:",inline"`
	CommonRetryResponse `json:",inline"`
}

// Response is the response of a non-blocking hook.
type Response struct {
	metav1.TypeMeta `json:",inline"`
	CommonResponse  `json:",inline"`
}

// Variable is a variable value sent to topology mutation hooks.
type Variable struct {
	Name  string               `json:"name"`
	Value apiextensionsv1.JSON `json:"value"`
}

// HolderReference says which object holds a template (and at which field).
type HolderReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	FieldPath  string `json:"fieldPath"`
}

// GeneratePatchesRequestItem is one template to patch.
type GeneratePatchesRequestItem struct {
	UID             types.UID            `json:"uid"`
	HolderReference HolderReference      `json:"holderReference"`
	Object          runtime.RawExtension `json:"object"`
	Variables       []Variable           `json:"variables"`
}

// GeneratePatchesRequest asks an extension for patches to the templates.
type GeneratePatchesRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
	Variables       []Variable                   `json:"variables"`
	Items           []GeneratePatchesRequestItem `json:"items"`
}

// PatchType is JSONPatch or JSONMergePatch.
type PatchType string

// Patch types.
const (
	JSONPatchType      PatchType = "JSONPatch"
	JSONMergePatchType PatchType = "JSONMergePatch"
)

// GeneratePatchesResponseItem is a patch for the request item with the same UID.
type GeneratePatchesResponseItem struct {
	UID       types.UID `json:"uid"`
	PatchType PatchType `json:"patchType"`
	Patch     []byte    `json:"patch"`
}

// GeneratePatchesResponse carries the patches.
type GeneratePatchesResponse struct {
	metav1.TypeMeta `json:",inline"`
	CommonResponse  `json:",inline"`
	Items           []GeneratePatchesResponseItem `json:"items"`
}

// ValidateTopologyRequestItem is one object of the computed topology.
type ValidateTopologyRequestItem struct {
	HolderReference HolderReference      `json:"holderReference"`
	Object          runtime.RawExtension `json:"object"`
	Variables       []Variable           `json:"variables"`
}

// ValidateTopologyRequest asks an extension to validate the computed topology.
type ValidateTopologyRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
	Variables       []Variable                     `json:"variables"`
	Items           []*ValidateTopologyRequestItem `json:"items"`
}

// ValidateTopologyResponse says whether the topology is valid.
type ValidateTopologyResponse = Response

// DiscoverVariablesRequest asks an extension for its variable definitions.
type DiscoverVariablesRequest struct {
	metav1.TypeMeta `json:",inline"`
	CommonRequest   `json:",inline"`
}

// DiscoverVariablesResponse carries variable definitions.
type DiscoverVariablesResponse struct {
	metav1.TypeMeta `json:",inline"`
	CommonResponse  `json:",inline"`
	Variables       []clusterv1.ClusterClassVariable `json:"variables"`
}

// UnmarshalJSON reads the definitions in either shape: extensions built on Cluster API's SDK
// up to v1.12 answer with v1beta1 ClusterClassVariables, v1.13+ with v1beta2 ones, whose
// deprecated metadata moved to deprecatedV1Beta1Metadata (the rest is the same on the wire).
func (r *DiscoverVariablesResponse) UnmarshalJSON(b []byte) error {
	type plain DiscoverVariablesResponse
	var wire struct {
		plain
		Variables []struct {
			clusterv1.ClusterClassVariable
			DeprecatedV1Beta1Metadata clusterv1.ClusterClassVariableMetadata `json:"deprecatedV1Beta1Metadata"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(b, &wire); err != nil {
		return err
	}
	*r = DiscoverVariablesResponse(wire.plain)
	r.Variables = nil
	for _, v := range wire.Variables {
		if v.Metadata.Labels == nil && v.Metadata.Annotations == nil {
			v.Metadata = v.DeprecatedV1Beta1Metadata
		}
		r.Variables = append(r.Variables, v.ClusterClassVariable)
	}
	return nil
}

// lastAppliedAnnotation is kubectl's copy of the last applied manifest (corev1.LastAppliedConfigAnnotation).
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// TrimRequestCluster leaves out of the Cluster JSON a hook request carries what Cluster API
// leaves out (core/reconcilers/topology/cluster.cleanupCluster): the status, the managed fields,
// kubectl's last-applied manifest and the conversion data. It changes c in place.
func TrimRequestCluster(c map[string]any) {
	delete(c, "status")
	meta, ok := c["metadata"].(map[string]any)
	if !ok {
		return
	}
	delete(meta, "managedFields")
	annotations, ok := meta["annotations"].(map[string]any)
	if !ok {
		return
	}
	delete(annotations, lastAppliedAnnotation)
	delete(annotations, conversion.DataAnnotation)
	if len(annotations) == 0 {
		delete(meta, "annotations")
	}
}
