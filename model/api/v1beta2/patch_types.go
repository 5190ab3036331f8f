package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ClusterClassPatch changes the generated templates: inline JSON patches (definitions) or an
// external patch served by a Runtime Extension, exactly one of the two.
type ClusterClassPatch struct {
	// +required
	Name string `json:"name,omitempty"`
	// +optional
	Description string `json:"description,omitempty"`
	// EnabledIf is a Go template over the variables; the patch applies when it renders "true".
	// +optional
	EnabledIf string `json:"enabledIf,omitempty"`
	// +optional
	// +listType=atomic
	Definitions []PatchDefinition `json:"definitions,omitempty"`
	// +optional
	External *ExternalPatchDefinition `json:"external,omitempty"`
}

// PatchDefinition applies its JSON patches to the templates its selector picks.
type PatchDefinition struct {
	// +required
	Selector PatchSelector `json:"selector,omitempty,omitzero"`
	// +required
	// +listType=atomic
	JSONPatches []JSONPatch `json:"jsonPatches,omitempty"`
}

// PatchSelector picks templates by apiVersion and kind, and by where the class uses them.
type PatchSelector struct {
	// +required
	APIVersion string `json:"apiVersion,omitempty"`
	// +required
	Kind string `json:"kind,omitempty"`
	// +required
	MatchResources PatchSelectorMatch `json:"matchResources,omitempty,omitzero"`
}

// PatchSelectorMatch says which uses of a template a patch applies to. The booleans are pointers
// so that an explicit false round-trips.
type PatchSelectorMatch struct {
	// +optional
	ControlPlane *bool `json:"controlPlane,omitempty"`
	// +optional
	InfrastructureCluster *bool `json:"infrastructureCluster,omitempty"`
	// +optional
	MachineDeploymentClass *PatchSelectorMatchClasses `json:"machineDeploymentClass,omitempty"`
	// +optional
	MachinePoolClass *PatchSelectorMatchClasses `json:"machinePoolClass,omitempty"`
}

// PatchSelectorMatchClasses names pool classes ("*" and prefix/suffix wildcards allowed).
type PatchSelectorMatchClasses struct {
	// +optional
	// +listType=atomic
	Names []string `json:"names,omitempty"`
}

// JSONPatch is one RFC 6902 operation; the value is literal or comes from a variable or template.
type JSONPatch struct {
	// +required
	// +kubebuilder:validation:Enum=add;replace;remove
	Op string `json:"op,omitempty"`
	// +required
	Path string `json:"path,omitempty"`
	// +optional
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
	// +optional
	ValueFrom *JSONPatchValue `json:"valueFrom,omitempty"`
}

// JSONPatchValue is where a patch's value comes from: a variable (with a path into it) or a Go
// template over the variables.
type JSONPatchValue struct {
	// +optional
	Variable string `json:"variable,omitempty"`
	// +optional
	Template string `json:"template,omitempty"`
}

// ExternalPatchDefinition names the Runtime Extension handlers ("<handler>.<extensionconfig>") of
// an external patch.
type ExternalPatchDefinition struct {
	// +optional
	GeneratePatchesExtension string `json:"generatePatchesExtension,omitempty"`
	// +optional
	ValidateTopologyExtension string `json:"validateTopologyExtension,omitempty"`
	// +optional
	DiscoverVariablesExtension string `json:"discoverVariablesExtension,omitempty"`
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}
