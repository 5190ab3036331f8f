package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ClusterClassSpec describes the shape shared by all Clusters of a class.
type ClusterClassSpec struct {
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
	// Infrastructure is the InfrastructureClusterTemplate; optional since seed 003
	// (managed control planes that need no infrastructure cluster).
	// +optional
	Infrastructure *LocalObjectTemplate `json:"infrastructure,omitempty"`
	// +optional
	InfrastructureNamingStrategy *InfrastructureNamingStrategy `json:"infrastructureNamingStrategy,omitempty"`
	// +optional
	ControlPlane ControlPlaneClass `json:"controlPlane,omitempty"`
	// +optional
	Workers WorkersClass `json:"workers,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=name
	Variables []ClusterClassVariable `json:"variables,omitempty"`
	// +optional
	Patches []ClusterClassPatch `json:"patches,omitempty"`
	// KubernetesVersions lists the versions Clusters of this class may run, in order. When set,
	// an upgrade across several minors is chained through the last patch release of each minor.
	// (Cluster API v1.12 field, accepted here on v1beta1.)
	// +optional
	// +listType=atomic
	KubernetesVersions []string `json:"kubernetesVersions,omitempty"`
	// Upgrade configures how Clusters of this class upgrade. (Cluster API v1.12 field, accepted
	// here on v1beta1.)
	// +optional
	Upgrade *ClusterClassUpgrade `json:"upgrade,omitempty"`
}

// ClusterClassUpgrade configures upgrades of the class's Clusters.
type ClusterClassUpgrade struct {
	// External names Runtime Extensions that take part in upgrades.
	// +optional
	External *ClusterClassUpgradeExternal `json:"external,omitempty"`
}

// ClusterClassUpgradeExternal names Runtime Extensions that take part in upgrades.
type ClusterClassUpgradeExternal struct {
	// GenerateUpgradePlanExtension is the GenerateUpgradePlan handler ("<handler>.<extensionconfig>")
	// asked for the versions an upgrade passes through. It takes precedence over kubernetesVersions.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	GenerateUpgradePlanExtension string `json:"generateUpgradePlanExtension,omitempty"`
}

// UpgradePlanExtension returns the class's GenerateUpgradePlan handler, or "".
func (s *ClusterClassSpec) UpgradePlanExtension() string {
	if s.Upgrade == nil || s.Upgrade.External == nil {
		return ""
	}
	return s.Upgrade.External.GenerateUpgradePlanExtension
}

// InfrastructureNamingStrategy names the generated InfrastructureCluster.
type InfrastructureNamingStrategy struct {
	// +optional
	Template *string `json:"template,omitempty"`
}

// ControlPlaneClass is the control plane part of a ClusterClass.
type ControlPlaneClass struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty"`
	// LocalObjectTemplate holds the ref to the ControlPlaneTemplate.
	LocalObjectTemplate `json:",inline"`
	// MachineInfrastructure is the InfrastructureMachineTemplate for control planes that use Machines.
	// +optional
	MachineInfrastructure *LocalObjectTemplate `json:"machineInfrastructure,omitempty"`
	// +optional
	MachineHealthCheck *MachineHealthCheckClass `json:"machineHealthCheck,omitempty"`
	// +optional
	NamingStrategy *ControlPlaneClassNamingStrategy `json:"namingStrategy,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// ControlPlaneClassNamingStrategy names the generated control plane.
type ControlPlaneClassNamingStrategy struct {
	// +optional
	Template *string `json:"template,omitempty"`
}

// WorkersClass lists the worker pool classes.
type WorkersClass struct {
	// +optional
	// +listType=map
	// +listMapKey=class
	MachineDeployments []MachineDeploymentClass `json:"machineDeployments,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=class
	MachinePools []MachinePoolClass `json:"machinePools,omitempty"`
}

// MachineDeploymentClass is a kind of MachineDeployment that topologies can instantiate.
type MachineDeploymentClass struct {
	Class    string                         `json:"class"`
	Template MachineDeploymentClassTemplate `json:"template"`
	// +optional
	MachineHealthCheck *MachineHealthCheckClass `json:"machineHealthCheck,omitempty"`
	// +optional
	FailureDomain *string `json:"failureDomain,omitempty"`
	// +optional
	NamingStrategy *MachineDeploymentClassNamingStrategy `json:"namingStrategy,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	Strategy *MachineDeploymentStrategy `json:"strategy,omitempty"`
}

// MachineDeploymentClassTemplate holds the templates a MachineDeploymentClass stamps from.
type MachineDeploymentClassTemplate struct {
	// +optional
	Metadata       ObjectMeta          `json:"metadata,omitempty"`
	Bootstrap      LocalObjectTemplate `json:"bootstrap"`
	Infrastructure LocalObjectTemplate `json:"infrastructure"`
}

// MachineDeploymentClassNamingStrategy names generated MachineDeployments.
type MachineDeploymentClassNamingStrategy struct {
	// +optional
	Template *string `json:"template,omitempty"`
}

// MachinePoolClass is a kind of MachinePool that topologies can instantiate.
type MachinePoolClass struct {
	Class    string                   `json:"class"`
	Template MachinePoolClassTemplate `json:"template"`
	// +optional
	FailureDomains []string `json:"failureDomains,omitempty"`
	// +optional
	NamingStrategy *MachinePoolClassNamingStrategy `json:"namingStrategy,omitempty"`
	// +optional
	NodeDrainTimeout *metav1.Duration `json:"nodeDrainTimeout,omitempty"`
	// +optional
	NodeVolumeDetachTimeout *metav1.Duration `json:"nodeVolumeDetachTimeout,omitempty"`
	// +optional
	NodeDeletionTimeout *metav1.Duration `json:"nodeDeletionTimeout,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// Taints go to the Nodes of the machines (Cluster API v1.13).
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	Taints []MachineTaint `json:"taints,omitempty"`
}

// MachinePoolClassTemplate holds the templates a MachinePoolClass stamps from.
type MachinePoolClassTemplate struct {
	// +optional
	Metadata       ObjectMeta          `json:"metadata,omitempty"`
	Bootstrap      LocalObjectTemplate `json:"bootstrap"`
	Infrastructure LocalObjectTemplate `json:"infrastructure"`
}

// MachinePoolClassNamingStrategy names generated MachinePools.
type MachinePoolClassNamingStrategy struct {
	// +optional
	Template *string `json:"template,omitempty"`
}

// MachineHealthCheckClass defines a MachineHealthCheck to create for matching Machines.
type MachineHealthCheckClass struct {
	// +optional
	UnhealthyConditions []UnhealthyCondition `json:"unhealthyConditions,omitempty"`
	// UnhealthyMachineConditions mark a Machine unhealthy by its own conditions (Cluster API
	// v1.12; backported to v1beta1).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	UnhealthyMachineConditions []UnhealthyMachineCondition `json:"unhealthyMachineConditions,omitempty"`
	// +optional
	MaxUnhealthy *intstr.IntOrString `json:"maxUnhealthy,omitempty"`
	// +kubebuilder:validation:Pattern=^\[[0-9]+-[0-9]+\]$
	// +optional
	UnhealthyRange *string `json:"unhealthyRange,omitempty"`
	// +optional
	NodeStartupTimeout *metav1.Duration `json:"nodeStartupTimeout,omitempty"`
	// +optional
	RemediationTemplate *corev1.ObjectReference `json:"remediationTemplate,omitempty"`
}

// IsZero says no field of the check is set (a topology's check then takes the class's).
func (m *MachineHealthCheckClass) IsZero() bool {
	return len(m.UnhealthyConditions) == 0 && len(m.UnhealthyMachineConditions) == 0 && m.MaxUnhealthy == nil &&
		m.UnhealthyRange == nil && m.NodeStartupTimeout == nil && m.RemediationTemplate == nil
}

// ClusterClassVariable defines a variable that Clusters of the class may or must set.
type ClusterClassVariable struct {
	Name string `json:"name"`
	// Required means a Cluster must set the variable (after defaulting).
	Required bool `json:"required"`
	// Metadata is deprecated in Cluster API (use schema x-metadata) but still decoded.
	// +optional
	Metadata ClusterClassVariableMetadata `json:"metadata,omitempty"`
	Schema   VariableSchema               `json:"schema"`
}

// ClusterClassVariableMetadata is metadata attached to a variable definition.
type ClusterClassVariableMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// VariableSchema wraps the OpenAPI v3 schema of a variable.
type VariableSchema struct {
	OpenAPIV3Schema JSONSchemaProps `json:"openAPIV3Schema"`
}

// JSONSchemaProps is the OpenAPI v3 subset Cluster API accepts for variable schemas.
type JSONSchemaProps struct {
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Example *apiextensionsv1.JSON `json:"example,omitempty"`
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Properties map[string]JSONSchemaProps `json:"properties,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AdditionalProperties *JSONSchemaProps `json:"additionalProperties,omitempty"`
	// +optional
	MaxProperties *int64 `json:"maxProperties,omitempty"`
	// +optional
	MinProperties *int64 `json:"minProperties,omitempty"`
	// +optional
	Required []string `json:"required,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Items *JSONSchemaProps `json:"items,omitempty"`
	// +optional
	MaxItems *int64 `json:"maxItems,omitempty"`
	// +optional
	MinItems *int64 `json:"minItems,omitempty"`
	// +optional
	UniqueItems bool `json:"uniqueItems,omitempty"`
	// +optional
	Format string `json:"format,omitempty"`
	// +optional
	MaxLength *int64 `json:"maxLength,omitempty"`
	// +optional
	MinLength *int64 `json:"minLength,omitempty"`
	// +optional
	Pattern string `json:"pattern,omitempty"`
	// +optional
	Maximum *int64 `json:"maximum,omitempty"`
	// +optional
	ExclusiveMaximum bool `json:"exclusiveMaximum,omitempty"`
	// +optional
	Minimum *int64 `json:"minimum,omitempty"`
	// +optional
	ExclusiveMinimum bool `json:"exclusiveMinimum,omitempty"`
	// +optional
	XPreserveUnknownFields bool `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Enum []apiextensionsv1.JSON `json:"enum,omitempty"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Default *apiextensionsv1.JSON `json:"default,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=rule
	XValidations []ValidationRule `json:"x-kubernetes-validations,omitempty"`
	// +optional
	XMetadata *VariableSchemaMetadata `json:"x-metadata,omitempty"`
	// +optional
	XIntOrString bool `json:"x-kubernetes-int-or-string,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AllOf []JSONSchemaProps `json:"allOf,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	OneOf []JSONSchemaProps `json:"oneOf,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	AnyOf []JSONSchemaProps `json:"anyOf,omitempty"`
	// +optional
	// +kubebuilder:pruning:PreserveUnknownFields
	// +kubebuilder:validation:Schemaless
	Not *JSONSchemaProps `json:"not,omitempty"`
}

// VariableSchemaMetadata is metadata for a schema (x-metadata).
type VariableSchemaMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ValidationRule is a CEL rule (x-kubernetes-validations).
type ValidationRule struct {
	Rule string `json:"rule"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	MessageExpression string `json:"messageExpression,omitempty"`
	// +optional
	Reason *string `json:"reason,omitempty"`
	// +optional
	FieldPath string `json:"fieldPath,omitempty"`
}

// ClusterClassPatch is a named set of patches applied to the class's templates.
type ClusterClassPatch struct {
	Name string `json:"name"`
	// +optional
	Description string `json:"description,omitempty"`
	// EnabledIf is a Go template; the patch applies only when it renders "true".
	// +optional
	EnabledIf *string `json:"enabledIf,omitempty"`
	// +optional
	Definitions []PatchDefinition `json:"definitions,omitempty"`
	// +optional
	External *ExternalPatchDefinition `json:"external,omitempty"`
}

// PatchDefinition selects templates and lists the JSON patches to apply to them.
type PatchDefinition struct {
	Selector    PatchSelector `json:"selector"`
	JSONPatches []JSONPatch   `json:"jsonPatches"`
}

// PatchSelector matches templates by apiVersion, kind and role.
type PatchSelector struct {
	APIVersion     string             `json:"apiVersion"`
	Kind           string             `json:"kind"`
	MatchResources PatchSelectorMatch `json:"matchResources"`
}

// PatchSelectorMatch says which roles of a template a patch applies to (any match counts).
type PatchSelectorMatch struct {
	// +optional
	ControlPlane bool `json:"controlPlane,omitempty"`
	// +optional
	InfrastructureCluster bool `json:"infrastructureCluster,omitempty"`
	// +optional
	MachineDeploymentClass *PatchSelectorMatchMachineDeploymentClass `json:"machineDeploymentClass,omitempty"`
	// +optional
	MachinePoolClass *PatchSelectorMatchMachinePoolClass `json:"machinePoolClass,omitempty"`
}

// PatchSelectorMatchMachineDeploymentClass matches MachineDeploymentClasses by name ("*" wildcards).
type PatchSelectorMatchMachineDeploymentClass struct {
	// +optional
	Names []string `json:"names,omitempty"`
}

// PatchSelectorMatchMachinePoolClass matches MachinePoolClasses by name ("*" wildcards).
type PatchSelectorMatchMachinePoolClass struct {
	// +optional
	Names []string `json:"names,omitempty"`
}

// JSONPatch is one RFC 6902 operation whose value may come from a variable or template.
type JSONPatch struct {
	// +kubebuilder:validation:Enum=add;replace;remove
	Op   string `json:"op"`
	Path string `json:"path"`
	// +optional
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	Value *apiextensionsv1.JSON `json:"value,omitempty"`
	// +optional
	ValueFrom *JSONPatchValue `json:"valueFrom,omitempty"`
}

// JSONPatchValue computes a patch value from a variable or a Go template.
type JSONPatchValue struct {
	// +optional
	Variable *string `json:"variable,omitempty"`
	// +optional
	Template *string `json:"template,omitempty"`
}

// ExternalPatchDefinition names Runtime Extension handlers that patch or validate the topology.
type ExternalPatchDefinition struct {
	// +optional
	GenerateExtension *string `json:"generateExtension,omitempty"`
	// +optional
	ValidateExtension *string `json:"validateExtension,omitempty"`
	// +optional
	DiscoverVariablesExtension *string `json:"discoverVariablesExtension,omitempty"`
	// +optional
	Settings map[string]string `json:"settings,omitempty"`
}

// ClusterClassStatus is the observed state of a ClusterClass.
type ClusterClassStatus struct {
	// Variables are the effective variable definitions (inline and discovered).
	// +optional
	// +listType=map
	// +listMapKey=name
	Variables []ClusterClassStatusVariable `json:"variables,omitempty"`
	// +optional
	Conditions Conditions `json:"conditions,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	V1Beta2 *ClusterClassV1Beta2Status `json:"v1beta2,omitempty"`
}

// ClusterClassV1Beta2Status carries v1beta2-style conditions.
type ClusterClassV1Beta2Status struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ClusterClassStatusVariable is one effective variable and where its definitions came from.
type ClusterClassStatusVariable struct {
	Name string `json:"name"`
	// +optional
	DefinitionsConflict bool                                   `json:"definitionsConflict,omitempty"`
	Definitions         []ClusterClassStatusVariableDefinition `json:"definitions"`
}

// ClusterClassStatusVariableDefinition is one definition of a variable ("inline" or an extension name).
type ClusterClassStatusVariableDefinition struct {
	From     string `json:"from"`
	Required bool   `json:"required"`
	// +optional
	Metadata ClusterClassVariableMetadata `json:"metadata,omitempty"`
	Schema   VariableSchema               `json:"schema"`
}

// ClusterClass is a blueprint for managed Clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterclasses,shortName=cc,scope=Namespaced,categories=cluster-api
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Variables Ready",type="string",JSONPath=`.status.conditions[?(@.type=="VariablesReconciled")].status`,description="Whether the variables of this ClusterClass are reconciled"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp",description="Time duration since creation of ClusterClass"
type ClusterClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ClusterClassSpec   `json:"spec,omitempty"`
	Status ClusterClassStatus `json:"status,omitempty"`
}

// ClusterClassList is a list of ClusterClasses.
//
// +kubebuilder:object:root=true
type ClusterClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClass `json:"items"`
}

// MachineDeploymentClass returns the named MachineDeploymentClass, or nil.
func (c *ClusterClass) MachineDeploymentClass(name string) *MachineDeploymentClass {
	for i := range c.Spec.Workers.MachineDeployments {
		if c.Spec.Workers.MachineDeployments[i].Class == name {
			return &c.Spec.Workers.MachineDeployments[i]
		}
	}
	return nil
}

// MachinePoolClass returns the named MachinePoolClass, or nil.
func (c *ClusterClass) MachinePoolClass(name string) *MachinePoolClass {
	for i := range c.Spec.Workers.MachinePools {
		if c.Spec.Workers.MachinePools[i].Class == name {
			return &c.Spec.Workers.MachinePools[i]
		}
	}
	return nil
}
