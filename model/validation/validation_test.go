package validation

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/deploy/samples"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

func sample(t *testing.T) (*clusterv1.ClusterClass, *clusterv1.Cluster) {
	t.Helper()
	class, cluster, err := samples.Typed()
	require.NoError(t, err)
	return class, cluster
}

func ptr[T any](v T) *T { return &v }

func TestSampleIsValid(t *testing.T) {
	class, cluster := sample(t)
	assert.Empty(t, ClusterClassV1Beta1(class, nil, nil))
	assert.Empty(t, ClusterV1Beta1(cluster, nil, class, nil))
}

func TestClusterClassRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.ClusterClass)
		want string
	}{
		{"control plane ref required", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.Ref = nil }, "spec.controlPlane.ref: Required value"},
		{"ref needs a kind", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.Ref.Kind = "" }, "spec.controlPlane.ref.kind: Required value"},
		{"unique MachineDeploymentClass names", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments = append(c.Spec.Workers.MachineDeployments, c.Spec.Workers.MachineDeployments[0])
		}, `spec.workers.machineDeployments[1].class: Duplicate value: "default-worker"`},
		{"unique MachinePoolClass names", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachinePools = append(c.Spec.Workers.MachinePools, c.Spec.Workers.MachinePools[0])
		}, `spec.workers.machinePools[1].class: Duplicate value: "default-pool"`},
		{"worker template refs required", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref = nil },
			"spec.workers.machineDeployments[0].template.bootstrap.ref: Required value"},
		{"naming template must render a valid name", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].NamingStrategy = &clusterv1.MachineDeploymentClassNamingStrategy{Template: ptr("{{ .machinePool.topologyName }}")}
		}, "spec.workers.machineDeployments[0].namingStrategy.template"},
		{"MHC range and maxUnhealthy exclusive", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].MachineHealthCheck.MaxUnhealthy = ptrIntStr("40%")
		}, "spec.workers.machineDeployments[0].machineHealthCheck.unhealthyRange: Forbidden"},
		{"MHC machine conditions Cluster API sets itself are refused", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].MachineHealthCheck.UnhealthyMachineConditions = []clusterv1.UnhealthyMachineCondition{{Type: "Ready", Status: "False"}}
		}, `spec.workers.machineDeployments[0].machineHealthCheck.unhealthyMachineConditions[0].type: Invalid value: "Ready": type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated`},
		{"control plane MHC needs machines", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.MachineInfrastructure = nil },
			"spec.controlPlane.machineHealthCheck: Forbidden"},
		{"unique variable names", func(c *clusterv1.ClusterClass) { c.Spec.Variables = append(c.Spec.Variables, c.Spec.Variables[0]) },
			`spec.variables[3].name: Duplicate value: "region"`},
		{"builtin is reserved", func(c *clusterv1.ClusterClass) { c.Spec.Variables[0].Name = "builtinRegion" }, `spec.variables[0].name: Invalid value: "builtinRegion"`},
		{"default must match the schema", func(c *clusterv1.ClusterClass) {
			c.Spec.Variables[2].Schema.OpenAPIV3Schema.Default = &apiextensionsv1.JSON{Raw: []byte(`"XL"`)}
		}, `spec.variables[workerInstanceType].schema.openAPIV3Schema.default: Invalid value: "\"XL\""`},
		{"schema must be structural", func(c *clusterv1.ClusterClass) {
			c.Spec.Variables[0].Schema.OpenAPIV3Schema = clusterv1.JSONSchemaProps{Type: "object", Properties: map[string]clusterv1.JSONSchemaProps{"a": {}}}
		}, "spec.variables[region].schema.openAPIV3Schema"},
		{"unique patch names", func(c *clusterv1.ClusterClass) { c.Spec.Patches = append(c.Spec.Patches, c.Spec.Patches[0]) },
			`spec.patches[3].name: Duplicate value: "region"`},
		{"patch paths start with /spec/", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].Path = "/metadata/labels/x"
		},
			`spec.patches[0].definitions[0].jsonPatches[0].path: Invalid value: "/metadata/labels/x": must start with "/spec/"`},
		{"add only at list index 0 or -", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[0].Path = "/spec/template/spec/files/3"
		}, `an add may only insert at list index "0" or "-"`},
		{"unsupported op", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Definitions[0].JSONPatches[0].Op = "move" },
			`spec.patches[0].definitions[0].jsonPatches[0].op: Unsupported value: "move"`},
		{"value and valueFrom exclusive", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].Value = &apiextensionsv1.JSON{Raw: []byte(`"x"`)}
		}, "value and valueFrom are mutually exclusive"},
		{"unknown variable", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("zone.name")
		}, `spec.patches[0].definitions[0].jsonPatches[0].valueFrom.variable: Invalid value: "zone.name": variable "zone" is not defined`},
		{"unknown builtin", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("builtin.cluster.colour")
		}, "not a defined builtin variable"},
		// Cluster API v1.14.2 patch_validation.go builtinVariables: metadata only by its labels or
		// annotations.
		{"builtin metadata as a whole", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("builtin.controlPlane.metadata")
		}, `valueFrom.variable: Invalid value: "builtin.controlPlane.metadata": not a defined builtin variable`},
		{"template must parse", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[1].ValueFrom.Template = ptr("{{ .x ")
		}, "spec.patches[2].definitions[0].jsonPatches[1].valueFrom.template"},
		{"enabledIf must parse", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].EnabledIf = ptr("{{ if }}") }, "spec.patches[0].enabledIf"},
		{"selector must select something", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].Selector.MatchResources = clusterv1.PatchSelectorMatch{}
		}, "spec.patches[0].definitions[0].selector.matchResources: Required value"},
		{"selector must match a template", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Definitions[0].Selector.Kind = "AWSClusterTemplate" },
			"selects no template of this ClusterClass"},
		{"selector class names must exist", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].Selector.MatchResources.MachineDeploymentClass.Names = []string{"gpu"}
		}, `machineDeploymentClass.names[0]: Invalid value: "gpu"`},
		{"definitions or external", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].External = &clusterv1.ExternalPatchDefinition{GenerateExtension: ptr("x")}
		}, "exactly one of definitions and external must be set"},
		{"inline is reserved", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Name = "inline" },
			`spec.patches[0].name: Invalid value: "inline": "inline" is reserved`},
		{"kubernetesVersions semver", func(c *clusterv1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.x"} },
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.x": version must be a valid semantic version`},
		{"kubernetesVersions ascending", func(c *clusterv1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.31.2", "v1.30.4"} },
			"spec.kubernetesVersion[1]: Invalid value: \"v1.30.4\": version must be greater than v1.31.2"},
		{"external patch handler form", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions = nil
			c.Spec.Patches[0].External = &clusterv1.ExternalPatchDefinition{GenerateExtension: ptr("images"), ValidateExtension: ptr("check.ext")}
		}, `spec.patches[0].external.generateExtension: Invalid value: "images": must have the form <handler>.<extensionconfig>`},
		{"upgrade plan extension named", func(c *clusterv1.ClusterClass) {
			c.Spec.Upgrade = &clusterv1.ClusterClassUpgrade{External: &clusterv1.ClusterClassUpgradeExternal{}}
		}, "spec.upgrade.external.generateUpgradePlanExtension: Required value"},
		{"upgrade plan extension form", func(c *clusterv1.ClusterClass) {
			c.Spec.Upgrade = &clusterv1.ClusterClassUpgrade{External: &clusterv1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plans"}}
		}, `spec.upgrade.external.generateUpgradePlanExtension: Invalid value: "plans": must have the form <handler>.<extensionconfig>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, _ := sample(t)
			tc.edit(class)
			errs := ClusterClassV1Beta1(class, nil, nil)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

// TestBuiltinVariableNames: the builtin paths Cluster API v1.14.2 admits in valueFrom.variable
// (builtinVariables in core/webhooks/admission/patch_validation.go), v1.11's classRef included.
func TestBuiltinVariableNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"builtin.cluster.topology.classRef.name": true, "builtin.cluster.topology.classRef.namespace": true,
		"builtin.cluster.metadata.labels": true, "builtin.machinePool": true, "builtin.machinePool.metadata.annotations": true,
		"builtin.machineDeployment.bootstrap.configRef.name": true, "builtin.cluster.network": true,
		"builtin.cluster.metadata": false, "builtin.machineDeployment.metadata": false, "builtin.cluster.network.ipFamily": false,
		"builtin.controlPlane.machineTemplate": false,
	} {
		t.Run(name, func(t *testing.T) {
			class, _ := sample(t)
			class.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr(name)
			err := ClusterClassV1Beta1(class, nil, nil).ToAggregate()
			if ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, "not a defined builtin variable")
		})
	}
}

func ptrIntStr(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

// TestDiscoveredVariables: definitions a DiscoverVariables handler answers are checked like
// inline ones, with errors naming where they came from.
func TestDiscoveredVariables(t *testing.T) {
	p := field.NewPath("lb", "variables")
	bad := []clusterv1.ClusterClassVariable{
		{Name: "builtinX", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}},
	}
	assert.Contains(t, VariablesV1Beta1(bad, p).ToAggregate().Error(), `lb.variables[0].name: Invalid value: "builtinX"`)
	badDefault := []clusterv1.ClusterClassVariable{{Name: "tag", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
		Type: "string", MaxLength: ptrInt64(2), Default: &apiextensionsv1.JSON{Raw: []byte(`"toolong"`)}}}}}
	assert.Contains(t, VariablesV1Beta1(badDefault, p).ToAggregate().Error(), `lb.variables[tag].schema.openAPIV3Schema.default`)
	ok := []clusterv1.ClusterClassVariable{{Name: "tag", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}}
	assert.Empty(t, VariablesV1Beta1(ok, p))
}

func ptrInt64(v int64) *int64 { return &v }

func TestClusterClassUpdateRules(t *testing.T) {
	_, cluster := sample(t)
	users := []clusterv1.Cluster{*cluster}
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.ClusterClass)
		want string
	}{
		{"infrastructure kind immutable", func(c *clusterv1.ClusterClass) { c.Spec.Infrastructure.Ref.Kind = "OtherClusterTemplate" },
			"spec.infrastructure.ref: Invalid value: \"OtherClusterTemplate.infrastructure.cluster.x-k8s.io\": the template's kind and group cannot change (was SimClusterTemplate.infrastructure.cluster.x-k8s.io)"},
		{"control plane group immutable", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.Ref.APIVersion = "other.io/v1" },
			"spec.controlPlane.ref: Invalid value"},
		{"worker infrastructure kind immutable", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Kind = "OtherMachineTemplate"
		}, "spec.workers.machineDeployments[0].template.infrastructure.ref"},
		{"used MachineDeploymentClass cannot be removed", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachineDeployments = nil },
			`MachineDeploymentClass "default-worker" cannot be removed: used by ClusterV1Beta1(s) default/demo`},
		{"used MachinePoolClass cannot be removed", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachinePools = nil },
			`MachinePoolClass "default-pool" cannot be removed`},
		{"used variable cannot be removed", func(c *clusterv1.ClusterClass) {
			c.Spec.Variables = c.Spec.Variables[1:]
			c.Spec.Patches = c.Spec.Patches[1:]
		}, `variable "region" cannot be removed: used by ClusterV1Beta1(s) default/demo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, _ := sample(t)
			class := old.DeepCopy()
			tc.edit(class)
			errs := ClusterClassV1Beta1(class, old, users)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
	// A bootstrap template may change kind; an unused class may go.
	old, _ := sample(t)
	class := old.DeepCopy()
	class.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref.Kind = "OtherConfigTemplate"
	class.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref.APIVersion = "bootstrap.other.io/v1"
	assert.Empty(t, ClusterClassV1Beta1(class, old, users))
	class = old.DeepCopy()
	class.Spec.Workers.MachinePools = nil
	assert.Empty(t, ClusterClassV1Beta1(class, old, nil), "no Cluster uses it")
}

func TestClusterRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.Cluster, class *clusterv1.ClusterClass)
		want string
	}{
		{"class required", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Class = "" }, "spec.topology.class: Required value"},
		{"semver version", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Version = "1.31" },
			`spec.topology.version: Invalid value: "1.31": must be a semantic version with a "v" prefix`},
		{"version required", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Version = "" },
			"spec.topology.version: Required value: a Kubernetes version such as v1.31.2"},
		{"refs exclusive with topology", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.InfrastructureRef = &corev1.ObjectReference{Kind: "SimCluster", Name: "x"}
		}, "spec.infrastructureRef: Forbidden: must not be set when spec.topology is set"},
		{"control plane ref exclusive too", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "SimControlPlane", Name: "x"}
		}, "spec.controlPlaneRef: Forbidden"},
		{"unique pool names", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Name = "md-0"
		}, `spec.topology.workers.machineDeployments[1].name: Duplicate value: "md-0"`},
		{"pool names are label values", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Name = "no spaces allowed"
		}, `spec.topology.workers.machinePools[0].name: Invalid value: "no spaces allowed"`},
		{"worker class must exist", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Class = "gpu"
		}, `spec.topology.workers.machineDeployments[0].class: Invalid value: "gpu": MachineDeploymentClass is not defined in ClusterClass default/quick-start`},
		{"required variable", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Variables = nil },
			"spec.topology.variables[region]: Required value"},
		{"override validated", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`"big"`)
		}, "spec.topology.workers.machineDeployments[1].variables.overrides[workerInstanceType].value"},
		// v1beta2 has no definitionFrom (the variables are validated in v1beta2); the v1beta1
		// Cluster is still refused for setting it.
		{"definitionFrom is deprecated", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Variables[0].DefinitionFrom = "inline"
		}, `spec.topology.variables[region].definitionFrom: Invalid value: "inline": definitionFrom is deprecated and must not be set`},
		{"definitionFrom is deprecated in overrides too", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].DefinitionFrom = "inline"
		}, "spec.topology.workers.machineDeployments[1].variables.overrides[workerInstanceType].definitionFrom"},
		{"enabled MHC needs a definition", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &clusterv1.MachineHealthCheckTopology{Enable: ptr(true)}
		}, "spec.topology.workers.machineDeployments[0].machineHealthCheck.enable: Forbidden"},
		{"version listed by the class", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.3"}
		}, `spec.topology.version: Invalid value: "v1.31.2": version must match one of the versions defined in the ClusterClass`},
		// Cluster API's webhooks.Cluster.validate and validateTopology.
		{"name is a label value", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Name = strings.Repeat("a", 64) },
			"metadata.name: Invalid value"},
		{"references stay in the namespace", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "SimControlPlane", Name: "x", Namespace: "other"}
		}, `spec.controlPlaneRef.namespace: Invalid value: "other": must match metadata.namespace`},
		{"pod CIDRs parse (validateCIDRBlocks)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ClusterNetwork = &clusterv1.ClusterNetwork{Pods: &clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16", "10.0.0.0/33"}}}
		}, `spec.clusterNetwork.pods.cidrBlocks[1]: Invalid value: "10.0.0.0/33"`},
		{"service CIDRs parse", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ClusterNetwork = &clusterv1.ClusterNetwork{Services: &clusterv1.NetworkRanges{CIDRBlocks: []string{"nope"}}}
		}, `spec.clusterNetwork.services.cidrBlocks[0]: Invalid value: "nope"`},
		{"topology label keys (validateTopologyMetadata)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels = map[string]string{"bad key!": "v"}
		}, `spec.topology.workers.machineDeployments[0].metadata.labels: Invalid value: "bad key!"`},
		{"control plane label values", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.ControlPlane.Metadata.Labels = map[string]string{"ok": "not ok"}
		}, `spec.topology.controlPlane.metadata.labels: Invalid value: "not ok"`},
		{"annotation keys", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Metadata.Annotations = map[string]string{"/x": "v"}
		}, `spec.topology.workers.machinePools[0].metadata.annotations: Invalid value: "/x"`},
		{"upgrade-concurrency is a number", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "two"}
		}, `metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: Invalid value: "two"`},
		{"upgrade-concurrency at least 1", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "0"}
		}, "value cannot be less than 1"},
		{"replicas and autoscaler annotations (validateAutoscalerAnnotationsForCluster)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}
		}, "spec.topology.workers.machineDeployments[0].replicas: Invalid value: 2: must not be set when the MachineDeployment's topology metadata has the cluster autoscaler"},
		{"replicas and the class's autoscaler annotations", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].Template.Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1"}
		}, `must not be set when MachineDeploymentClass "default-worker" has the cluster autoscaler`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, c := sample(t)
			tc.edit(c, class)
			errs := ClusterV1Beta1(c, nil, class, nil)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

func TestClusterUpdateRules(t *testing.T) {
	class, old := sample(t)
	upgrade := func(to string, cls *clusterv1.ClusterClass, annotations map[string]string) error {
		c := old.DeepCopy()
		c.Spec.Topology.Version = to
		c.Annotations = annotations
		return ClusterV1Beta1(c, old, cls, nil).ToAggregate()
	}
	assert.NoError(t, upgrade("v1.31.5", class, nil), "patch upgrade")
	assert.NoError(t, upgrade("v1.32.0", class, nil), "one minor")
	assert.ErrorContains(t, upgrade("v1.30.9", class, nil), "version cannot be decreased from v1.31.2")
	assert.ErrorContains(t, upgrade("v1.33.0", class, nil), "at most one minor")
	assert.ErrorContains(t, upgrade("v2.0.0", class, nil), "at most one minor")
	assert.NoError(t, upgrade("v1.33.0", class, map[string]string{SkipVersionCheckAnnotation: "true"}), "escape hatch")
	chained := class.DeepCopy()
	chained.Spec.KubernetesVersions = []string{"v1.31.2", "v1.32.4", "v1.33.1"}
	assert.NoError(t, upgrade("v1.33.1", chained, nil), "chained through kubernetesVersions")
	planned := class.DeepCopy()
	planned.Spec.Upgrade = &clusterv1.ClusterClassUpgrade{External: &clusterv1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plan.ext"}}
	assert.NoError(t, upgrade("v1.34.0", planned, nil), "chained through a GenerateUpgradePlan extension")
	assert.Empty(t, ClusterClassV1Beta1(planned, nil, nil), "a well-formed handler name")

	c := old.DeepCopy()
	c.Spec.Topology = nil
	assert.ErrorContains(t, ClusterV1Beta1(c, old, class, nil).ToAggregate(), "spec.topology cannot be removed")

	// Refs set by topoflow after creation are fine on update.
	c = old.DeepCopy()
	c.Spec.InfrastructureRef = &corev1.ObjectReference{Kind: "SimCluster", Name: "demo-x"}
	assert.Empty(t, ClusterV1Beta1(c, old, class, nil))

	// Rebase: a compatible class is fine; one with another infrastructure kind is not.
	next := class.DeepCopy()
	next.Name = "quick-start-v2"
	c = old.DeepCopy()
	c.Spec.Topology.Class = next.Name
	assert.Empty(t, ClusterV1Beta1(c, old, next, class))
	next.Spec.Infrastructure.Ref.Kind = "OtherClusterTemplate"
	assert.ErrorContains(t, ClusterV1Beta1(c, old, next, class).ToAggregate(), "ClusterClass quick-start-v2 is not compatible with quick-start")
	next = class.DeepCopy()
	next.Spec.ControlPlane.MachineInfrastructure = nil
	next.Spec.ControlPlane.MachineHealthCheck = nil
	assert.ErrorContains(t, ClusterV1Beta1(c, old, next, class).ToAggregate(), "one has control plane machines and the other not")
}

// TestEnabledHealthCheckNeedsDefinition: a health check enabled in the topology must be defined
// by the topology or the class, as Cluster API v1.14.2's Cluster webhook checks on the v1beta2 form
// (validateMachineHealthChecks with HealthCheck.IsDefined): an empty definition is none, and a
// MachineDeployment's strategy.remediation.maxInFlight alone is one.
func TestEnabledHealthCheckNeedsDefinition(t *testing.T) {
	maxInFlight := &clusterv1.MachineDeploymentStrategy{Remediation: &clusterv1.RemediationStrategy{MaxInFlight: ptrIntStr("50%")}}
	on := &clusterv1.MachineHealthCheckTopology{Enable: ptr(true)}
	tests := []struct {
		name string
		edit func(class *clusterv1.ClusterClass, c *clusterv1.Cluster)
		want string
	}{
		{"control plane: nothing defined", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = nil
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, "spec.topology.controlPlane.machineHealthCheck.enable: Forbidden"},
		{"control plane: an empty definition is none", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = &clusterv1.MachineHealthCheckClass{UnhealthyConditions: []clusterv1.UnhealthyCondition{}}
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, "spec.topology.controlPlane.machineHealthCheck.enable: Forbidden"},
		{"control plane: the class defines it", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = &clusterv1.MachineHealthCheckClass{NodeStartupTimeout: &metav1.Duration{Duration: time.Minute}}
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, ""},
		{"MachineDeployment: nothing defined", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, "spec.topology.workers.machineDeployments[0].machineHealthCheck.enable: Forbidden"},
		{"MachineDeployment: the class's maxInFlight alone", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			class.Spec.Workers.MachineDeployments[0].Strategy = maxInFlight
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, ""},
		{"MachineDeployment: the topology's maxInFlight alone", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].Strategy = maxInFlight
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			class, c := sample(t)
			require.NotEmpty(t, c.Spec.Topology.Workers.MachineDeployments)
			tc.edit(class, c)
			err := ClusterV1Beta1(c, nil, class, nil).ToAggregate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
