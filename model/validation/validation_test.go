package validation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// sampleV1Beta1 is the quick-start sample (deploy/samples) as written, in v1beta1.
func sampleV1Beta1(t *testing.T) (*v1beta1.ClusterClass, *v1beta1.Cluster) {
	t.Helper()
	class, cluster, err := samples.Typed()
	require.NoError(t, err)
	return class, cluster
}

// sample is the quick-start sample on the hub, converted as Cluster API converts it.
func sample(t *testing.T) (*clusterv1.ClusterClass, *clusterv1.Cluster) {
	t.Helper()
	class, cluster := sampleV1Beta1(t)
	c, err := conversion.ClusterToHub(cluster)
	require.NoError(t, err)
	return hubClass(t, class), c
}

func ptr[T any](v T) *T { return &v }

func ptrIntStr(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }

func TestSampleIsValid(t *testing.T) {
	class, cluster := sample(t)
	assert.Empty(t, ClusterClass(class, nil, nil))
	assert.Empty(t, Cluster(cluster, nil, class, nil))
}

// TestClusterClassRules: the rules of Cluster API v1.14.2's ClusterClass webhook (package
// admission, ClusterClass.validate, with check.ClusterClassTemplatesAreValid and the
// MachineDeploymentClassesAreUnique checks, validateMachineHealthCheckClasses,
// validateNamingStrategies, ValidateClusterClassVariables, validatePatches) and its CRD schema,
// with the v1beta2 paths they report: a template reference is templateRef, a pool class keyed by
// its name where the webhook keys it.
func TestClusterClassRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.ClusterClass)
		want string
	}{
		{"control plane ref required", func(c *clusterv1.ClusterClass) {
			c.Spec.ControlPlane.TemplateRef = clusterv1.ClusterClassTemplateReference{}
		}, "spec.controlPlane.templateRef: Required value"},
		{"ref needs a kind", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.TemplateRef.Kind = "" }, "spec.controlPlane.templateRef.kind: Required value"},
		{"ref's apiVersion is a group version", func(c *clusterv1.ClusterClass) { c.Spec.Infrastructure.TemplateRef.APIVersion = "a/b/c" },
			`spec.infrastructure.templateRef.apiVersion: Invalid value: "a/b/c"`},
		{"unique MachineDeploymentClass names", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments = append(c.Spec.Workers.MachineDeployments, c.Spec.Workers.MachineDeployments[0])
		}, `spec.workers.machineDeployments[1].class: Duplicate value: "default-worker"`},
		{"unique MachinePoolClass names", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachinePools = append(c.Spec.Workers.MachinePools, c.Spec.Workers.MachinePools[0])
		}, `spec.workers.machinePools[1].class: Duplicate value: "default-pool"`},
		{"a pool class needs a name", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachinePools[0].Class = "" },
			"spec.workers.machinePools[0].class: Required value"},
		{"worker template refs required", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Bootstrap.TemplateRef = clusterv1.ClusterClassTemplateReference{}
		}, "spec.workers.machineDeployments[0].bootstrap.templateRef: Required value"},
		{"naming template must render a valid name", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Naming.Template = "{{ .machinePool.topologyName }}"
		}, "spec.workers.machineDeployments[default-worker].naming.template"},
		{"control plane naming template", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.Naming.Template = "{{ .nope }}" },
			"spec.controlPlane.naming.template"},
		{"infrastructure naming template", func(c *clusterv1.ClusterClass) { c.Spec.Infrastructure.Naming.Template = "{{ .nope }}" },
			"spec.infrastructure.naming.template"},
		{"MHC range and maxUnhealthy exclusive", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].HealthCheck.Remediation.TriggerIf.UnhealthyLessThanOrEqualTo = ptrIntStr("40%")
		}, "spec.workers.machineDeployments[default-worker].healthCheck.remediation.triggerIf.unhealthyInRange: Forbidden"},
		{"MHC range pattern (CRD)", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].HealthCheck.Remediation.TriggerIf.UnhealthyInRange = "0-2"
		}, `spec.workers.machineDeployments[0].healthCheck.remediation.triggerIf.unhealthyInRange: Invalid value: "0-2"`},
		// validateMachineHealthCheckNodeStartupTimeoutSeconds, keyed by the class.
		{"MHC startup timeout at least 30s", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].HealthCheck.Checks.NodeStartupTimeoutSeconds = ptr(int32(20))
		}, "spec.workers.machineDeployments[default-worker].healthCheck.checks.nodeStartupTimeoutSeconds: Invalid value: 20"},
		{"MHC timeout not negative (CRD)", func(c *clusterv1.ClusterClass) {
			c.Spec.ControlPlane.HealthCheck.Checks.UnhealthyNodeConditions[0].TimeoutSeconds = ptr(int32(-1))
		}, "spec.controlPlane.healthCheck.checks.unhealthyNodeConditions[0].timeoutSeconds: Invalid value: -1"},
		{"MHC machine conditions Cluster API sets itself are refused", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].HealthCheck.Checks.UnhealthyMachineConditions = []clusterv1.UnhealthyMachineCondition{{Type: "Ready", Status: "False"}}
		}, `spec.workers.machineDeployments[0].healthCheck.checks.unhealthyMachineConditions[0].type: Invalid value: "Ready": type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated`},
		{"control plane MHC needs machines", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.MachineInfrastructure = clusterv1.ClassTemplate{} },
			"spec.controlPlane.healthCheck: Forbidden"},
		{"unique variable names", func(c *clusterv1.ClusterClass) { c.Spec.Variables = append(c.Spec.Variables, c.Spec.Variables[0]) },
			`spec.variables[region].name: Duplicate value: "region"`},
		{"builtin is reserved", func(c *clusterv1.ClusterClass) { c.Spec.Variables[0].Name = "builtinRegion" }, `spec.variables[builtinRegion].name: Invalid value: "builtinRegion"`},
		{"a variable needs a name", func(c *clusterv1.ClusterClass) { c.Spec.Variables[1].Name = "" }, "spec.variables[1].name: Required value"},
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
		}, `spec.patches[0].definitions[0].jsonPatches[0].path: Invalid value: "/metadata/labels/x": must start with "/spec/"`},
		{"add only at list index 0 or -", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[0].Path = "/spec/template/spec/files/3"
		}, `an add may only insert at list index "0" or "-"`},
		{"unsupported op", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Definitions[0].JSONPatches[0].Op = "move" },
			`spec.patches[0].definitions[0].jsonPatches[0].op: Unsupported value: "move"`},
		{"value and valueFrom exclusive", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].Value = &apiextensionsv1.JSON{Raw: []byte(`"x"`)}
		}, "value and valueFrom are mutually exclusive"},
		{"variable or template", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Template = "{{ .region }}"
		}, "spec.patches[0].definitions[0].jsonPatches[0].valueFrom: Invalid value: \"\": exactly one of variable and template must be set"},
		{"unknown variable", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = "zone.name"
		}, `spec.patches[0].definitions[0].jsonPatches[0].valueFrom.variable: Invalid value: "zone.name": variable "zone" is not defined`},
		{"unknown builtin", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = "builtin.cluster.colour"
		}, "not a defined builtin variable"},
		// Cluster API v1.14.2 patch_validation.go builtinVariables: metadata only by its labels or
		// annotations.
		{"builtin metadata as a whole", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = "builtin.controlPlane.metadata"
		}, `valueFrom.variable: Invalid value: "builtin.controlPlane.metadata": not a defined builtin variable`},
		{"template must parse", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[1].ValueFrom.Template = "{{ .x "
		}, "spec.patches[2].definitions[0].jsonPatches[1].valueFrom.template"},
		{"enabledIf must parse", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].EnabledIf = "{{ if }}" }, "spec.patches[0].enabledIf"},
		{"selector must select something", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].Selector.MatchResources = clusterv1.PatchSelectorMatch{}
		}, "spec.patches[0].definitions[0].selector.matchResources: Required value"},
		{"selector must match a template", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Definitions[0].Selector.Kind = "AWSClusterTemplate" },
			"selects no template of this ClusterClass"},
		{"selector class names must exist", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].Selector.MatchResources.MachineDeploymentClass.Names = []string{"gpu"}
		}, `machineDeploymentClass.names[0]: Invalid value: "gpu"`},
		{"definitions or external", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].External = &clusterv1.ExternalPatchDefinition{GeneratePatchesExtension: "x"}
		}, "exactly one of definitions and external must be set"},
		{"an external patch names a generate or validate handler", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions = nil
			c.Spec.Patches[0].External = &clusterv1.ExternalPatchDefinition{DiscoverVariablesExtension: "vars.ext"}
		}, "spec.patches[0].external: Invalid value: \"\": one of generatePatchesExtension or validateTopologyExtension must be set"},
		{"inline is reserved", func(c *clusterv1.ClusterClass) { c.Spec.Patches[0].Name = "inline" },
			`spec.patches[0].name: Invalid value: "inline": "inline" is reserved`},
		{"kubernetesVersions semver", func(c *clusterv1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.x"} },
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.x": version must be a valid semantic version`},
		{"kubernetesVersions ascending", func(c *clusterv1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.31.2", "v1.30.4"} },
			"spec.kubernetesVersion[1]: Invalid value: \"v1.30.4\": version must be greater than v1.31.2"},
		{"external patch handler form", func(c *clusterv1.ClusterClass) {
			c.Spec.Patches[0].Definitions = nil
			c.Spec.Patches[0].External = &clusterv1.ExternalPatchDefinition{GeneratePatchesExtension: "images", ValidateTopologyExtension: "check.ext"}
		}, `spec.patches[0].external.generatePatchesExtension: Invalid value: "images": must have the form <handler>.<extensionconfig>`},
		// "upgrade plan extension named" (spec.upgrade.external without a name) cannot be written
		// in v1beta2: see TestV1Beta1OnlyRules.
		{"upgrade plan extension form", func(c *clusterv1.ClusterClass) {
			c.Spec.Upgrade.External.GenerateUpgradePlanExtension = "plans"
		}, `spec.upgrade.external.generateUpgradePlanExtension: Invalid value: "plans": must have the form <handler>.<extensionconfig>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, _ := sample(t)
			tc.edit(class)
			errs := ClusterClass(class, nil, nil)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

// TestClassWithoutInfrastructure: topoflow lets a class leave out the infrastructure cluster and
// control plane machines (then it generates none); what refers to them is refused.
func TestClassWithoutInfrastructure(t *testing.T) {
	class, _ := sample(t)
	class.Spec.Infrastructure = clusterv1.InfrastructureClass{}
	err := ClusterClass(class, nil, nil).ToAggregate()
	require.Error(t, err)
	assert.Equal(t, `[spec.patches[0].definitions[0].selector.matchResources.infrastructureCluster: Invalid value: true: the ClusterClass has no infrastructure template, `+
		`spec.patches[0].definitions[0].selector: Invalid value: "infrastructure.cluster.x-k8s.io/v1beta1 SimClusterTemplate": selects no template of this ClusterClass]`, err.Error())
	class.Spec.Patches = class.Spec.Patches[1:]
	assert.Empty(t, ClusterClass(class, nil, nil))
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
			class.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = name
			err := ClusterClass(class, nil, nil).ToAggregate()
			if ok {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, "not a defined builtin variable")
		})
	}
}

// TestDiscoveredVariables: definitions a DiscoverVariables handler answers are checked like
// inline ones, with errors naming where they came from, each definition by its name as Cluster
// API's ValidateClusterClassVariables names it.
func TestDiscoveredVariables(t *testing.T) {
	p := field.NewPath("lb", "variables")
	bad := []clusterv1.ClusterClassVariable{
		{Name: "builtinX", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}},
	}
	assert.Contains(t, Variables(bad, p).ToAggregate().Error(), `lb.variables[builtinX].name: Invalid value: "builtinX"`)
	dotted := []clusterv1.ClusterClassVariable{{Name: "a.b", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}}
	assert.Contains(t, Variables(dotted, p).ToAggregate().Error(), `lb.variables[a.b].name: Invalid value: "a.b": must not contain "."`)
	badDefault := []clusterv1.ClusterClassVariable{{Name: "tag", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{
		Type: "string", MaxLength: ptr(int64(2)), Default: &apiextensionsv1.JSON{Raw: []byte(`"toolong"`)}}}}}
	assert.Contains(t, Variables(badDefault, p).ToAggregate().Error(), `lb.variables[tag].schema.openAPIV3Schema.default`)
	ok := []clusterv1.ClusterClassVariable{{Name: "tag", Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}}}
	assert.Empty(t, Variables(ok, p))
}

// TestClusterClassUpdateRules follows Cluster API v1.14.2's ClusterClass webhook on update
// (check.ClusterClassesAreCompatible: templateRef paths, the MachineDeploymentClass by its index;
// validateRemovedMachineDeploymentClassesAreNotUsed), and topoflow's rule on variables in use.
func TestClusterClassUpdateRules(t *testing.T) {
	_, cluster := sample(t)
	users := []clusterv1.Cluster{*cluster}
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.ClusterClass)
		want string
	}{
		{"infrastructure kind immutable", func(c *clusterv1.ClusterClass) { c.Spec.Infrastructure.TemplateRef.Kind = "OtherClusterTemplate" },
			"spec.infrastructure.templateRef: Invalid value: \"OtherClusterTemplate.infrastructure.cluster.x-k8s.io\": the template's kind and group cannot change (was SimClusterTemplate.infrastructure.cluster.x-k8s.io)"},
		{"control plane group immutable", func(c *clusterv1.ClusterClass) { c.Spec.ControlPlane.TemplateRef.APIVersion = "other.io/v1" },
			"spec.controlPlane.templateRef: Invalid value"},
		{"control plane machines kind immutable", func(c *clusterv1.ClusterClass) {
			c.Spec.ControlPlane.MachineInfrastructure.TemplateRef.Kind = "OtherMachineTemplate"
		}, "spec.controlPlane.machineInfrastructure.templateRef: Invalid value"},
		{"worker infrastructure kind immutable", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Infrastructure.TemplateRef.Kind = "OtherMachineTemplate"
		}, "spec.workers.machineDeployments[0].infrastructure.templateRef"},
		{"pool infrastructure kind immutable", func(c *clusterv1.ClusterClass) {
			c.Spec.Workers.MachinePools[0].Infrastructure.TemplateRef.Kind = "OtherPoolTemplate"
		}, "spec.workers.machinePools[0].infrastructure.templateRef"},
		{"used MachineDeploymentClass cannot be removed", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachineDeployments = nil },
			`spec.workers.machineDeployments: Forbidden: MachineDeploymentClass "default-worker" cannot be removed: used by Cluster(s) default/demo`},
		{"used MachinePoolClass cannot be removed", func(c *clusterv1.ClusterClass) { c.Spec.Workers.MachinePools = nil },
			`MachinePoolClass "default-pool" cannot be removed`},
		{"used variable cannot be removed", func(c *clusterv1.ClusterClass) {
			c.Spec.Variables = c.Spec.Variables[1:]
			c.Spec.Patches = c.Spec.Patches[1:]
		}, `spec.variables: Forbidden: variable "region" cannot be removed: used by Cluster(s) default/demo`},
		{"a variable used by an override cannot be removed", func(c *clusterv1.ClusterClass) {
			c.Spec.Variables = c.Spec.Variables[:2]
			c.Spec.Patches = c.Spec.Patches[:2]
		}, `variable "workerInstanceType" cannot be removed: used by Cluster(s) default/demo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, _ := sample(t)
			class := old.DeepCopy()
			tc.edit(class)
			errs := ClusterClass(class, old, users)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
	// A bootstrap template may change kind; an unused class may go.
	old, _ := sample(t)
	class := old.DeepCopy()
	class.Spec.Workers.MachineDeployments[0].Bootstrap.TemplateRef.Kind = "OtherConfigTemplate"
	class.Spec.Workers.MachineDeployments[0].Bootstrap.TemplateRef.APIVersion = "bootstrap.other.io/v1"
	assert.Empty(t, ClusterClass(class, old, users))
	class = old.DeepCopy()
	class.Spec.Workers.MachinePools = nil
	assert.Empty(t, ClusterClass(class, old, nil), "no Cluster uses it")
}

// TestClusterRules follows Cluster API v1.14.2's Cluster webhook (package admission,
// Cluster.Default for the class, Cluster.validate and validateTopology with
// validateTopologyMetadata, validateAutoscalerAnnotationsForCluster,
// ValidateClusterForClusterClass, DefaultAndValidateVariables) and topoflow's own rules, with the
// v1beta2 paths: classRef, healthCheck, and a pool keyed by its name where the webhook keys it.
func TestClusterRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *clusterv1.Cluster, class *clusterv1.ClusterClass)
		want string
	}{
		{"class required", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.ClassRef.Name = "" },
			"spec.topology.classRef.name: Required value"},
		{"class namespace is a namespace name", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.ClassRef.Namespace = "Not_A_Namespace"
		}, `spec.topology.classRef.namespace: Invalid value: "Not_A_Namespace": must be a namespace name`},
		{"semver version", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Version = "1.31" },
			`spec.topology.version: Invalid value: "1.31": must be a semantic version with a "v" prefix`},
		{"version required", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Version = "" },
			"spec.topology.version: Required value: a Kubernetes version such as v1.31.2"},
		{"refs exclusive with topology", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "SimCluster", Name: "x"}
		}, "spec.infrastructureRef: Forbidden: must not be set when spec.topology is set"},
		{"control plane ref exclusive too", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{Kind: "SimControlPlane", Name: "x"}
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
		{"pool class must exist", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Class = "gpu"
		}, `spec.topology.workers.machinePools[0].class: Invalid value: "gpu": MachinePoolClass is not defined in ClusterClass default/quick-start`},
		{"required variable", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Spec.Topology.Variables = nil },
			"spec.topology.variables[region]: Required value"},
		{"override validated", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`"big"`)
		}, "spec.topology.workers.machineDeployments[md-1].variables.overrides[workerInstanceType].value"},
		// definitionFrom has no v1beta2 field: see TestV1Beta1OnlyRules.
		{"enabled MHC needs a definition", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentClassHealthCheck{}
			c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentTopologyHealthCheck{Enabled: ptr(true)}
		}, "spec.topology.workers.machineDeployments[md-0].healthCheck.enabled: Forbidden"},
		{"version listed by the class", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.3"}
		}, `spec.topology.version: Invalid value: "v1.31.2": version must match one of the versions defined in the ClusterClass`},
		// Cluster API's webhooks.Cluster.validate and validateTopology.
		{"name is a label value", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) { c.Name = strings.Repeat("a", 64) },
			"metadata.name: Invalid value"},
		// "references stay in the namespace": v1beta2 references have none, see TestV1Beta1OnlyRules.
		{"pod CIDRs parse (validateCIDRBlocks)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ClusterNetwork = clusterv1.ClusterNetwork{Pods: clusterv1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16", "10.0.0.0/33"}}}
		}, `spec.clusterNetwork.pods.cidrBlocks[1]: Invalid value: "10.0.0.0/33"`},
		{"service CIDRs parse", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.ClusterNetwork = clusterv1.ClusterNetwork{Services: clusterv1.NetworkRanges{CIDRBlocks: []string{"nope"}}}
		}, `spec.clusterNetwork.services.cidrBlocks[0]: Invalid value: "nope"`},
		{"topology label keys (validateTopologyMetadata)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels = map[string]string{"bad key!": "v"}
		}, `spec.topology.workers.machineDeployments[md-0].metadata.labels: Invalid value: "bad key!"`},
		{"control plane label values", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.ControlPlane.Metadata.Labels = map[string]string{"ok": "not ok"}
		}, `spec.topology.controlPlane.metadata.labels: Invalid value: "not ok"`},
		{"annotation keys", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Metadata.Annotations = map[string]string{"/x": "v"}
		}, `spec.topology.workers.machinePools[mp-0].metadata.annotations: Invalid value: "/x"`},
		{"upgrade-concurrency is a number", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "two"}
		}, `metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: Invalid value: "two"`},
		{"upgrade-concurrency at least 1", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "0"}
		}, "value cannot be less than 1"},
		{"replicas and autoscaler annotations (validateAutoscalerAnnotationsForCluster)", func(c *clusterv1.Cluster, _ *clusterv1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}
		}, "spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: must not be set when the MachineDeployment's topology metadata has the cluster autoscaler"},
		{"replicas and the class's autoscaler annotations", func(c *clusterv1.Cluster, class *clusterv1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1"}
		}, `spec.topology.workers.machineDeployments[md-0].replicas: Invalid value: 2: must not be set when MachineDeploymentClass "default-worker" has the cluster autoscaler`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, c := sample(t)
			tc.edit(c, class)
			errs := Cluster(c, nil, class, nil)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

// TestClusterWithoutClass: with the class unknown (admission before the class exists), the rules
// that need it are skipped.
func TestClusterWithoutClass(t *testing.T) {
	_, c := sample(t)
	c.Spec.Topology.Variables = nil
	c.Spec.Topology.Workers.MachineDeployments[0].Class = "gpu"
	assert.Empty(t, Cluster(c, nil, nil, nil))
}

func TestClusterUpdateRules(t *testing.T) {
	class, old := sample(t)
	upgrade := func(to string, cls *clusterv1.ClusterClass, annotations map[string]string) error {
		c := old.DeepCopy()
		c.Spec.Topology.Version = to
		c.Annotations = annotations
		return Cluster(c, old, cls, nil).ToAggregate()
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
	planned.Spec.Upgrade.External.GenerateUpgradePlanExtension = "plan.ext"
	assert.NoError(t, upgrade("v1.34.0", planned, nil), "chained through a GenerateUpgradePlan extension")
	assert.Empty(t, ClusterClass(planned, nil, nil), "a well-formed handler name")

	c := old.DeepCopy()
	c.Spec.Topology = clusterv1.Topology{}
	assert.ErrorContains(t, Cluster(c, old, class, nil).ToAggregate(), "spec.topology: Forbidden: spec.topology cannot be removed")
	assert.ErrorContains(t, Cluster(old, c, class, nil).ToAggregate(), "spec.topology: Forbidden: an unmanaged Cluster cannot be given a topology")

	// Refs set by topoflow after creation are fine on update.
	c = old.DeepCopy()
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: "infrastructure.cluster.x-k8s.io", Kind: "SimCluster", Name: "demo-x"}
	assert.Empty(t, Cluster(c, old, class, nil))

	// Rebase: a compatible class is fine; one with another infrastructure kind is not.
	next := class.DeepCopy()
	next.Name = "quick-start-v2"
	c = old.DeepCopy()
	c.Spec.Topology.ClassRef.Name = next.Name
	assert.Empty(t, Cluster(c, old, next, class))
	next.Spec.Infrastructure.TemplateRef.Kind = "OtherClusterTemplate"
	assert.ErrorContains(t, Cluster(c, old, next, class).ToAggregate(),
		`spec.topology.classRef.name: Invalid value: "quick-start-v2": ClusterClass quick-start-v2 is not compatible with quick-start: spec.infrastructure.templateRef`)
	next = class.DeepCopy()
	next.Spec.ControlPlane.MachineInfrastructure = clusterv1.ClassTemplate{}
	next.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{}
	assert.ErrorContains(t, Cluster(c, old, next, class).ToAggregate(), "one has control plane machines and the other not")
	next = class.DeepCopy()
	next.Spec.Infrastructure = clusterv1.InfrastructureClass{}
	assert.ErrorContains(t, Cluster(c, old, next, class).ToAggregate(), "one has an infrastructure template and the other not")
}

// TestEnabledHealthCheckNeedsDefinition: a health check enabled in the topology must be defined
// by the topology or the class, as Cluster API v1.14.2's Cluster webhook checks it
// (validateMachineHealthChecks with HealthCheck.IsDefined): zero checks and remediation are no
// definition, and a MachineDeployment's remediation.maxInFlight alone is one. The path names the
// field, healthCheck.enabled (the webhook says "enable", a field v1beta2 does not have).
func TestEnabledHealthCheckNeedsDefinition(t *testing.T) {
	on := clusterv1.MachineDeploymentTopologyHealthCheck{Enabled: ptr(true)}
	tests := []struct {
		name string
		edit func(class *clusterv1.ClusterClass, c *clusterv1.Cluster)
		want string
	}{
		{"control plane: nothing defined", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{}
			c.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr(true)}
		}, "spec.topology.controlPlane.healthCheck.enabled: Forbidden"},
		{"control plane: an empty definition is none", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{Remediation: clusterv1.HealthCheckRemediation{TriggerIf: clusterv1.RemediationTriggerIf{}}}
			c.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr(true)}
		}, "spec.topology.controlPlane.healthCheck.enabled: Forbidden"},
		{"control plane: the class defines it", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{Checks: clusterv1.HealthCheckChecks{NodeStartupTimeoutSeconds: ptr(int32(60))}}
			c.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr(true)}
		}, ""},
		{"control plane: the topology defines it", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.ControlPlane.HealthCheck = clusterv1.ControlPlaneClassHealthCheck{}
			c.Spec.Topology.ControlPlane.HealthCheck = clusterv1.ControlPlaneTopologyHealthCheck{Enabled: ptr(true),
				Checks: clusterv1.HealthCheckChecks{NodeStartupTimeoutSeconds: ptr(int32(60))}}
		}, ""},
		{"MachineDeployment: nothing defined", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentClassHealthCheck{}
			c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck = on
		}, "spec.topology.workers.machineDeployments[md-0].healthCheck.enabled: Forbidden"},
		{"MachineDeployment: the class's maxInFlight alone", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentClassHealthCheck{
				Remediation: clusterv1.MachineDeploymentHealthCheckRemediation{MaxInFlight: ptrIntStr("50%")}}
			c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck = on
		}, ""},
		{"MachineDeployment: the topology's maxInFlight alone", func(class *clusterv1.ClusterClass, c *clusterv1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentClassHealthCheck{}
			c.Spec.Topology.Workers.MachineDeployments[0].HealthCheck = clusterv1.MachineDeploymentTopologyHealthCheck{Enabled: ptr(true),
				Remediation: clusterv1.MachineDeploymentHealthCheckRemediation{MaxInFlight: ptrIntStr("50%")}}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			class, c := sample(t)
			require.NotEmpty(t, c.Spec.Topology.Workers.MachineDeployments)
			tc.edit(class, c)
			err := Cluster(c, nil, class, nil).ToAggregate()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
