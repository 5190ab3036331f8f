// Package hooknames holds the Runtime SDK's hook names, with no dependencies, so that pure
// packages (model/upgrade) can name hooks without the request types and their conversions.
package hooknames

// Hook names as they appear in ExtensionConfig handlers and request kinds (without "Request").
const (
	Discovery                    = "Discovery"
	BeforeClusterCreate          = "BeforeClusterCreate"
	AfterControlPlaneInitialized = "AfterControlPlaneInitialized"
	BeforeClusterUpgrade         = "BeforeClusterUpgrade"
	BeforeControlPlaneUpgrade    = "BeforeControlPlaneUpgrade"
	AfterControlPlaneUpgrade     = "AfterControlPlaneUpgrade"
	BeforeWorkersUpgrade         = "BeforeWorkersUpgrade"
	AfterWorkersUpgrade          = "AfterWorkersUpgrade"
	AfterClusterUpgrade          = "AfterClusterUpgrade"
	BeforeClusterDelete          = "BeforeClusterDelete"
	GeneratePatches              = "GeneratePatches"
	ValidateTopology             = "ValidateTopology"
	DiscoverVariables            = "DiscoverVariables"
	GenerateUpgradePlan          = "GenerateUpgradePlan"
)
