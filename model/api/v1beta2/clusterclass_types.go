package v1beta2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterClassSpec is the shape every Cluster of a class shares: its templates, the variables a
// Cluster may set and the patches that apply them.
type ClusterClassSpec struct {
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	AvailabilityGates []ClusterAvailabilityGate `json:"availabilityGates,omitempty"`
	// +required
	Infrastructure InfrastructureClass `json:"infrastructure,omitempty,omitzero"`
	// +required
	ControlPlane ControlPlaneClass `json:"controlPlane,omitempty,omitzero"`
	// +optional
	Workers WorkersClass `json:"workers,omitempty,omitzero"`
	// +optional
	// +listType=atomic
	Variables []ClusterClassVariable `json:"variables,omitempty"`
	// +optional
	// +listType=atomic
	Patches []ClusterClassPatch `json:"patches,omitempty"`
	// +optional
	Upgrade ClusterClassUpgrade `json:"upgrade,omitempty,omitzero"`
	// KubernetesVersions lists, in order, the versions the class's Clusters may run; an upgrade
	// across several minors steps through them.
	// +optional
	// +listType=atomic
	KubernetesVersions []string `json:"kubernetesVersions,omitempty"`
}

// InfrastructureClass is the class's InfrastructureCluster template and how to name the copy.
type InfrastructureClass struct {
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
	// +optional
	Naming NamingSpec `json:"naming,omitempty,omitzero"`
}

// ControlPlaneClass is the class's control plane: its template, the template of its Machines'
// infrastructure (for control planes with Machines) and the Machine settings.
type ControlPlaneClass struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
	// +optional
	MachineInfrastructure ClassTemplate `json:"machineInfrastructure,omitempty,omitzero"`
	// +optional
	HealthCheck ControlPlaneClassHealthCheck `json:"healthCheck,omitempty,omitzero"`
	// +optional
	Naming NamingSpec `json:"naming,omitempty,omitzero"`
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
}

// ClassTemplate wraps a template reference: the bootstrap and infrastructure templates of a pool
// class and the control plane's machine infrastructure all have this shape.
type ClassTemplate struct {
	// +required
	TemplateRef ClusterClassTemplateReference `json:"templateRef,omitempty,omitzero"`
}

// ControlPlaneClassHealthCheck is the class's health check for control plane Machines.
type ControlPlaneClassHealthCheck struct {
	// +optional
	Checks HealthCheckChecks `json:"checks,omitempty,omitzero"`
	// +optional
	Remediation HealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// WorkersClass lists the pool classes a topology's workers pick from.
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

// MachineDeploymentClass is a kind of MachineDeployment a topology may ask for.
type MachineDeploymentClass struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Class string `json:"class,omitempty"`
	// +required
	Bootstrap ClassTemplate `json:"bootstrap,omitempty,omitzero"`
	// +required
	Infrastructure ClassTemplate `json:"infrastructure,omitempty,omitzero"`
	// +optional
	HealthCheck MachineDeploymentClassHealthCheck `json:"healthCheck,omitempty,omitzero"`
	// +optional
	FailureDomain string `json:"failureDomain,omitempty"`
	// +optional
	Naming NamingSpec `json:"naming,omitempty,omitzero"`
	// +optional
	Deletion MachineDeploymentMachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=conditionType
	ReadinessGates []MachineReadinessGate `json:"readinessGates,omitempty"`
	// +optional
	Rollout MachineDeploymentClassRolloutSpec `json:"rollout,omitempty,omitzero"`
}

// MachineDeploymentClassHealthCheck is the class's health check for a MachineDeployment.
type MachineDeploymentClassHealthCheck struct {
	// +optional
	Checks HealthCheckChecks `json:"checks,omitempty,omitzero"`
	// +optional
	Remediation MachineDeploymentHealthCheckRemediation `json:"remediation,omitempty,omitzero"`
}

// MachineDeploymentClassRolloutSpec is the class's rollout strategy (a class cannot say "after").
type MachineDeploymentClassRolloutSpec struct {
	// +optional
	Strategy MachineDeploymentRolloutStrategy `json:"strategy,omitempty,omitzero"`
}

// MachinePoolClass is a kind of MachinePool a topology may ask for.
type MachinePoolClass struct {
	// +optional
	Metadata ObjectMeta `json:"metadata,omitempty,omitzero"`
	// +required
	Class string `json:"class,omitempty"`
	// +required
	Bootstrap ClassTemplate `json:"bootstrap,omitempty,omitzero"`
	// +required
	Infrastructure ClassTemplate `json:"infrastructure,omitempty,omitzero"`
	// +optional
	// +listType=atomic
	FailureDomains []string `json:"failureDomains,omitempty"`
	// +optional
	Naming NamingSpec `json:"naming,omitempty,omitzero"`
	// +optional
	Deletion MachineDeletionSpec `json:"deletion,omitempty,omitzero"`
	// +optional
	// +listType=map
	// +listMapKey=key
	// +listMapKey=effect
	Taints []MachineTaint `json:"taints,omitempty"`
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`
}

// UpgradePlanExtension returns the class's GenerateUpgradePlan handler, or "".
func (s *ClusterClassSpec) UpgradePlanExtension() string {
	return s.Upgrade.External.GenerateUpgradePlanExtension
}

// ClusterClassUpgrade configures how the class's Clusters upgrade.
type ClusterClassUpgrade struct {
	// +optional
	External ClusterClassUpgradeExternal `json:"external,omitempty,omitzero"`
}

// ClusterClassUpgradeExternal names the Runtime Extension that plans upgrades.
type ClusterClassUpgradeExternal struct {
	// GenerateUpgradePlanExtension ("<handler>.<extensionconfig>") is asked for the versions an
	// upgrade passes through; it takes precedence over kubernetesVersions.
	// +optional
	GenerateUpgradePlanExtension string `json:"generateUpgradePlanExtension,omitempty"`
}

// ClusterClassStatus is what topoflow reports on a ClusterClass: mainly the variables, with the
// definitions Runtime Extensions added.
type ClusterClassStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// +optional
	// +listType=atomic
	Variables []ClusterClassStatusVariable `json:"variables,omitempty"`
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// +optional
	Deprecated *V1Beta1ConditionsDeprecatedStatus `json:"deprecated,omitempty"`
}

// ClusterClassStatusVariable is a variable with every definition of it (the class's own, and
// those of external patches).
type ClusterClassStatusVariable struct {
	// +required
	Name string `json:"name,omitempty"`
	// DefinitionsConflict says the definitions disagree.
	// +optional
	DefinitionsConflict *bool `json:"definitionsConflict,omitempty"`
	// +required
	// +listType=atomic
	Definitions []ClusterClassStatusVariableDefinition `json:"definitions,omitempty"`
}

// ClusterClassStatusVariableDefinition is one definition of a variable and where it comes from
// ("inline" or the name of the patch that discovered it).
type ClusterClassStatusVariableDefinition struct {
	// +required
	From string `json:"from,omitempty"`
	// +required
	Required *bool `json:"required,omitempty"`
	// +optional
	DeprecatedV1Beta1Metadata ClusterClassVariableMetadata `json:"deprecatedV1Beta1Metadata,omitempty,omitzero"`
	// +required
	Schema VariableSchema `json:"schema,omitempty,omitzero"`
}

// ClusterClass is a blueprint for managed Clusters.
//
// +kubebuilder:object:root=true
type ClusterClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +required
	Spec ClusterClassSpec `json:"spec,omitempty,omitzero"`
	// +optional
	Status ClusterClassStatus `json:"status,omitempty,omitzero"`
}

// ClusterClassList is a list of ClusterClasses.
//
// +kubebuilder:object:root=true
type ClusterClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterClass `json:"items"`
}
