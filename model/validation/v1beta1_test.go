package validation

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topoflow/topoflow/model/api/conversion"
	"github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/upgrade"
)

// The v1beta1 side of the package: the rules only v1beta1 input has, and the agreement of every
// ...V1Beta1 adapter with its hub function.

// TestV1Beta1OnlyRules: what the conversion to v1beta2 drops is checked on the v1beta1 input, by
// the adapters, with v1beta1 paths.
func TestV1Beta1OnlyRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cluster func(c *v1beta1.Cluster)
		class   func(c *v1beta1.ClusterClass)
		want    string
	}{
		// Cluster API's v1beta1 Cluster webhook (webhooks.Cluster.validate before v1beta2).
		{"references stay in the namespace", func(c *v1beta1.Cluster) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "SimControlPlane", Name: "x", Namespace: "other"}
		}, nil, `spec.controlPlaneRef.namespace: Invalid value: "other": must match metadata.namespace`},
		// The conversion keeps a reference's API group, so it needs one (ConvertClusterV1Beta1ToHub).
		{"a reference's apiVersion is a group version", func(c *v1beta1.Cluster) {
			c.Spec.InfrastructureRef = &corev1.ObjectReference{APIVersion: "a/b/c", Kind: "SimCluster", Name: "x"}
		}, nil, `spec.infrastructureRef.apiVersion: Invalid value: "a/b/c"`},
		// v1beta1's schema: spec.upgrade.external needs a property, a handler name a character.
		{"upgrade plan extension named", nil, func(c *v1beta1.ClusterClass) {
			c.Spec.Upgrade = &v1beta1.ClusterClassUpgrade{External: &v1beta1.ClusterClassUpgradeExternal{}}
		}, "spec.upgrade.external.generateUpgradePlanExtension: Required value"},
		{"an external patch handler written empty", nil, func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions = nil
			c.Spec.Patches[0].External = &v1beta1.ExternalPatchDefinition{GenerateExtension: ptr("gen.ext"), DiscoverVariablesExtension: ptr("")}
		}, "spec.patches[0].external.discoverVariablesExtension: Required value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, c := sampleV1Beta1(t)
			var errs field.ErrorList
			if tc.cluster != nil {
				tc.cluster(c)
				errs = ClusterV1Beta1(c, nil, class, nil)
			} else {
				tc.class(class)
				errs = ClusterClassV1Beta1(class, nil, nil)
			}
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
	// Cluster API v1.11+ drops a variable's deprecated definitionFrom when it converts a v1beta1
	// Cluster (api module core/v1beta1, Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable),
	// before its v1beta2 webhooks see it: accepted, and ignored (v1.10's webhook refused it).
	class, c := sampleV1Beta1(t)
	c.Spec.Topology.Variables[0].DefinitionFrom = "inline"
	c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].DefinitionFrom = "inline"
	assert.Empty(t, ClusterV1Beta1(c, nil, class, nil), "definitionFrom is dropped, not refused")
}

// TestTemplateRefNamespaceIgnored: Cluster API v1.14.2 drops a v1beta1 template ref's namespace
// when it converts a ClusterClass (api module core/v1beta1,
// convert_v1beta1_LocalObjectTemplate_To_v1beta2_ClusterClassTemplateReference) and its webhook
// (check.ClusterClassTemplatesAreValid) reads templates from the class's namespace, so another
// namespace is accepted (and ignored), not refused.
func TestTemplateRefNamespaceIgnored(t *testing.T) {
	for _, edit := range templateRefNamespaces {
		class, _ := sampleV1Beta1(t)
		edit(class)
		assert.Empty(t, ClusterClassV1Beta1(class, nil, nil))
	}
}

var templateRefNamespaces = []func(c *v1beta1.ClusterClass){
	func(c *v1beta1.ClusterClass) { c.Spec.Infrastructure.Ref.Namespace = "other" },
	func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.Ref.Namespace = "other" },
	func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.MachineInfrastructure.Ref.Namespace = "other" },
	func(c *v1beta1.ClusterClass) {
		c.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref.Namespace = "other"
	},
	func(c *v1beta1.ClusterClass) {
		c.Spec.Workers.MachinePools[0].Template.Infrastructure.Ref.Namespace = "other"
	},
}

// TestV1Beta1Unconverted: an object that does not convert (here conversion data that is not
// JSON, which Cluster API's conversion refuses too) is a field error, never a nil hub object: the
// request's own is invalid, one read from the server an internal error. A reference of the
// Cluster whose apiVersion does not parse is named by the v1beta1-only check alone, and does not
// keep topologyOf from converting.
func TestV1Beta1Unconverted(t *testing.T) {
	bad := map[string]string{conversion.DataAnnotation: "{"}
	class, c := sampleV1Beta1(t)
	badClass, badCluster := class.DeepCopy(), c.DeepCopy()
	badClass.Annotations, badCluster.Annotations = bad, bad
	one := func(errs field.ErrorList, want string) {
		t.Helper()
		if assert.Len(t, errs, 1) {
			assert.Contains(t, errs[0].Error(), want)
		}
	}
	invalid := "spec: Invalid value: does not convert to v1beta2: "
	one(ClusterClassV1Beta1(badClass, nil, nil), invalid)
	one(ClassTaintsV1Beta1(badClass, Gates{}), invalid)
	one(ClusterClassV1Beta1(class, badClass, nil), "spec: Internal error: the stored ClusterClass: ")
	one(ClusterClassV1Beta1(class, class, []v1beta1.Cluster{*badCluster}), "spec: Internal error: Cluster default/demo, which uses the class,: ")
	one(ClusterV1Beta1(c, nil, badClass, nil), "spec.topology.classRef: Internal error: the ClusterClass: ")
	one(ClusterV1Beta1(c, c, class, badClass), "spec.topology.classRef: Internal error: the stored Cluster's ClusterClass: ")
	one(DefaultVariablesV1Beta1(c.DeepCopy(), badClass), `spec.topology.class: Invalid value: "quick-start": the ClusterClass does not convert to v1beta2: `)
	one(ClusterV1Beta1(badCluster, nil, class, nil), invalid)
	one(ClusterTaintsV1Beta1(badCluster, Gates{}), invalid)
	one(VersionAgainstRunningV1Beta1(badCluster, c, upgrade.Input{}), invalid)
	one(ClusterV1Beta1(c, badCluster, class, nil), "spec: Internal error: the stored Cluster: ")
	one(VersionAgainstRunningV1Beta1(c, badCluster, upgrade.Input{}), "spec: Internal error: the stored Cluster: ")
	_, errs := VariablesV1Beta1([]v1beta1.ClusterClassVariable{{Name: "tag", Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{
		Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`{`)}}}}}, field.NewPath("lb", "variables"))
	one(errs, "lb.variables: Invalid value: does not convert to v1beta2: ")

	badRef := c.DeepCopy()
	badRef.Spec.InfrastructureRef = &corev1.ObjectReference{APIVersion: "a/b/c", Kind: "SimCluster", Name: "x"}
	one(ClusterV1Beta1(badRef, nil, class, nil), `spec.infrastructureRef.apiVersion: Invalid value: "a/b/c"`)
	assert.Empty(t, ClusterTaintsV1Beta1(badRef, Gates{}))
	hub, err := topologyOf(badRef)
	require.NoError(t, err)
	assert.Equal(t, hubCluster(t, c).Spec.Topology, hub.Spec.Topology)
}

// v1beta1Fixture is one v1beta1 input of the tests written before the hub, answered by a V1Beta1
// adapter and by its hub function on the converted input (with the v1beta1-only checks,
// which only the adapter can make). refused is what the v1beta1 code answered.
type v1beta1Fixture struct {
	name         string
	refused      bool
	adapter, hub field.ErrorList
}

func hubCluster(t *testing.T, c *v1beta1.Cluster) *clusterv1.Cluster {
	t.Helper()
	out, err := conversion.ClusterToHub(c)
	require.NoError(t, err)
	return out
}

func hubClass(t *testing.T, class *v1beta1.ClusterClass) *clusterv1.ClusterClass {
	t.Helper()
	out, err := conversion.ClusterClassToHub(class)
	require.NoError(t, err)
	return out
}

func hubClusters(t *testing.T, cs []v1beta1.Cluster) []clusterv1.Cluster {
	var out []clusterv1.Cluster
	for i := range cs {
		out = append(out, *hubCluster(t, &cs[i]))
	}
	return out
}

func clusterFixture(t *testing.T, name string, refused bool, c, old *v1beta1.Cluster, class, oldClass *v1beta1.ClusterClass) v1beta1Fixture {
	hub := Cluster(hubCluster(t, c), hubCluster(t, old), hubClass(t, class), hubClass(t, oldClass))
	return v1beta1Fixture{name, refused, ClusterV1Beta1(c, old, class, oldClass), append(hub, v1beta1Cluster(c)...)}
}

func classFixture(t *testing.T, name string, refused bool, class, old *v1beta1.ClusterClass, clusters []v1beta1.Cluster) v1beta1Fixture {
	hub := ClusterClass(hubClass(t, class), hubClass(t, old), hubClusters(t, clusters))
	return v1beta1Fixture{name, refused, ClusterClassV1Beta1(class, old, clusters), append(hub, v1beta1ClusterClass(class)...)}
}

func runningFixture(t *testing.T, name string, refused bool, c, old *v1beta1.Cluster, running upgrade.Input) v1beta1Fixture {
	return v1beta1Fixture{name, refused, VersionAgainstRunningV1Beta1(c, old, running), VersionAgainstRunning(hubCluster(t, c), hubCluster(t, old), running)}
}

// TestV1Beta1AdaptersAgreeWithHub runs every v1beta1 fixture of the tests written before the hub
// through its V1Beta1 adapter and through the hub function on the converted input: both
// report the same errors (the hub's, then the v1beta1-only ones), and the adapter refuses what
// the v1beta1 code refused.
func TestV1Beta1AdaptersAgreeWithHub(t *testing.T) {
	var all []v1beta1Fixture
	for _, f := range []func(*testing.T) []v1beta1Fixture{classFixtures, clusterFixtures, runningFixtures, taintFixtures, variablesFixtures} {
		all = append(all, f(t)...)
	}
	require.NotEmpty(t, all)
	for _, f := range all {
		t.Run(f.name, func(t *testing.T) {
			assert.Equal(t, messages(f.hub), messages(f.adapter))
			assert.Equal(t, f.refused, len(f.adapter) > 0, "%v", f.adapter)
		})
	}
}

func messages(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// want in the tables below is what the v1beta1 code answered (with its v1beta1 paths); here only
// whether it refused counts.

func classFixtures(t *testing.T) []v1beta1Fixture {
	var out []v1beta1Fixture
	for _, tc := range []struct {
		name string
		edit func(c *v1beta1.ClusterClass)
		want string
	}{
		{"control plane ref required", func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.Ref = nil }, "spec.controlPlane.ref: Required value"},
		{"ref needs a kind", func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.Ref.Kind = "" }, "spec.controlPlane.ref.kind: Required value"},
		{"unique MachineDeploymentClass names", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments = append(c.Spec.Workers.MachineDeployments, c.Spec.Workers.MachineDeployments[0])
		}, `spec.workers.machineDeployments[1].class: Duplicate value: "default-worker"`},
		{"unique MachinePoolClass names", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachinePools = append(c.Spec.Workers.MachinePools, c.Spec.Workers.MachinePools[0])
		}, `spec.workers.machinePools[1].class: Duplicate value: "default-pool"`},
		{"worker template refs required", func(c *v1beta1.ClusterClass) { c.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref = nil },
			"spec.workers.machineDeployments[0].template.bootstrap.ref: Required value"},
		{"naming template must render a valid name", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].NamingStrategy = &v1beta1.MachineDeploymentClassNamingStrategy{Template: ptr("{{ .machinePool.topologyName }}")}
		}, "spec.workers.machineDeployments[0].namingStrategy.template"},
		{"MHC range and maxUnhealthy exclusive", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].MachineHealthCheck.MaxUnhealthy = ptrIntStr("40%")
		}, "spec.workers.machineDeployments[0].machineHealthCheck.unhealthyRange: Forbidden"},
		{"MHC machine conditions Cluster API sets itself are refused", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].MachineHealthCheck.UnhealthyMachineConditions = []v1beta1.UnhealthyMachineCondition{{Type: "Ready", Status: "False"}}
		}, `spec.workers.machineDeployments[0].machineHealthCheck.unhealthyMachineConditions[0].type: Invalid value: "Ready": type must not be one of: Ready, Available, HealthCheckSucceeded, OwnerRemediated, ExternallyRemediated`},
		{"control plane MHC needs machines", func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.MachineInfrastructure = nil },
			"spec.controlPlane.machineHealthCheck: Forbidden"},
		{"unique variable names", func(c *v1beta1.ClusterClass) { c.Spec.Variables = append(c.Spec.Variables, c.Spec.Variables[0]) },
			`spec.variables[3].name: Duplicate value: "region"`},
		{"builtin is reserved", func(c *v1beta1.ClusterClass) { c.Spec.Variables[0].Name = "builtinRegion" }, `spec.variables[0].name: Invalid value: "builtinRegion"`},
		{"default must match the schema", func(c *v1beta1.ClusterClass) {
			c.Spec.Variables[2].Schema.OpenAPIV3Schema.Default = &apiextensionsv1.JSON{Raw: []byte(`"XL"`)}
		}, `spec.variables[workerInstanceType].schema.openAPIV3Schema.default: Invalid value: "\"XL\""`},
		{"schema must be structural", func(c *v1beta1.ClusterClass) {
			c.Spec.Variables[0].Schema.OpenAPIV3Schema = v1beta1.JSONSchemaProps{Type: "object", Properties: map[string]v1beta1.JSONSchemaProps{"a": {}}}
		}, "spec.variables[region].schema.openAPIV3Schema"},
		{"unique patch names", func(c *v1beta1.ClusterClass) { c.Spec.Patches = append(c.Spec.Patches, c.Spec.Patches[0]) },
			`spec.patches[3].name: Duplicate value: "region"`},
		{"patch paths start with /spec/", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].Path = "/metadata/labels/x"
		},
			`spec.patches[0].definitions[0].jsonPatches[0].path: Invalid value: "/metadata/labels/x": must start with "/spec/"`},
		{"add only at list index 0 or -", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[0].Path = "/spec/template/spec/files/3"
		}, `an add may only insert at list index "0" or "-"`},
		{"unsupported op", func(c *v1beta1.ClusterClass) { c.Spec.Patches[0].Definitions[0].JSONPatches[0].Op = "move" },
			`spec.patches[0].definitions[0].jsonPatches[0].op: Unsupported value: "move"`},
		{"value and valueFrom exclusive", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].Value = &apiextensionsv1.JSON{Raw: []byte(`"x"`)}
		}, "value and valueFrom are mutually exclusive"},
		{"unknown variable", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("zone.name")
		}, `spec.patches[0].definitions[0].jsonPatches[0].valueFrom.variable: Invalid value: "zone.name": variable "zone" is not defined`},
		{"unknown builtin", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("builtin.cluster.colour")
		}, "not a defined builtin variable"},
		// Cluster API v1.14.2 patch_validation.go builtinVariables: metadata only by its labels or
		// annotations.
		{"builtin metadata as a whole", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr("builtin.controlPlane.metadata")
		}, `valueFrom.variable: Invalid value: "builtin.controlPlane.metadata": not a defined builtin variable`},
		{"template must parse", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].JSONPatches[1].ValueFrom.Template = ptr("{{ .x ")
		}, "spec.patches[2].definitions[0].jsonPatches[1].valueFrom.template"},
		{"enabledIf must parse", func(c *v1beta1.ClusterClass) { c.Spec.Patches[0].EnabledIf = ptr("{{ if }}") }, "spec.patches[0].enabledIf"},
		{"selector must select something", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions[0].Selector.MatchResources = v1beta1.PatchSelectorMatch{}
		}, "spec.patches[0].definitions[0].selector.matchResources: Required value"},
		{"selector must match a template", func(c *v1beta1.ClusterClass) { c.Spec.Patches[0].Definitions[0].Selector.Kind = "AWSClusterTemplate" },
			"selects no template of this ClusterClass"},
		{"selector class names must exist", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[2].Definitions[0].Selector.MatchResources.MachineDeploymentClass.Names = []string{"gpu"}
		}, `machineDeploymentClass.names[0]: Invalid value: "gpu"`},
		{"definitions or external", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].External = &v1beta1.ExternalPatchDefinition{GenerateExtension: ptr("x")}
		}, "exactly one of definitions and external must be set"},
		{"inline is reserved", func(c *v1beta1.ClusterClass) { c.Spec.Patches[0].Name = "inline" },
			`spec.patches[0].name: Invalid value: "inline": "inline" is reserved`},
		{"kubernetesVersions semver", func(c *v1beta1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.x"} },
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.x": version must be a valid semantic version`},
		{"kubernetesVersions ascending", func(c *v1beta1.ClusterClass) { c.Spec.KubernetesVersions = []string{"v1.31.2", "v1.30.4"} },
			"spec.kubernetesVersion[1]: Invalid value: \"v1.30.4\": version must be greater than v1.31.2"},
		{"external patch handler form", func(c *v1beta1.ClusterClass) {
			c.Spec.Patches[0].Definitions = nil
			c.Spec.Patches[0].External = &v1beta1.ExternalPatchDefinition{GenerateExtension: ptr("images"), ValidateExtension: ptr("check.ext")}
		}, `spec.patches[0].external.generateExtension: Invalid value: "images": must have the form <handler>.<extensionconfig>`},
		{"upgrade plan extension named", func(c *v1beta1.ClusterClass) {
			c.Spec.Upgrade = &v1beta1.ClusterClassUpgrade{External: &v1beta1.ClusterClassUpgradeExternal{}}
		}, "spec.upgrade.external.generateUpgradePlanExtension: Required value"},
		{"upgrade plan extension form", func(c *v1beta1.ClusterClass) {
			c.Spec.Upgrade = &v1beta1.ClusterClassUpgrade{External: &v1beta1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plans"}}
		}, `spec.upgrade.external.generateUpgradePlanExtension: Invalid value: "plans": must have the form <handler>.<extensionconfig>`},
	} {
		class, _ := sampleV1Beta1(t)
		tc.edit(class)
		out = append(out, classFixture(t, "ClusterClass/"+tc.name, true, class, nil, nil))
	}
	for name, ok := range map[string]bool{
		"builtin.cluster.topology.classRef.name": true, "builtin.cluster.metadata": false, "builtin.cluster.network.ipFamily": false,
	} {
		class, _ := sampleV1Beta1(t)
		class.Spec.Patches[0].Definitions[0].JSONPatches[0].ValueFrom.Variable = ptr(name)
		out = append(out, classFixture(t, "builtin/"+name, !ok, class, nil, nil))
	}
	for i, edit := range templateRefNamespaces {
		class, _ := sampleV1Beta1(t)
		edit(class)
		out = append(out, classFixture(t, fmt.Sprintf("template ref namespace %d", i), false, class, nil, nil))
	}

	_, cluster := sampleV1Beta1(t)
	users := []v1beta1.Cluster{*cluster}
	for _, tc := range []struct {
		name string
		edit func(c *v1beta1.ClusterClass)
		want string
	}{
		{"infrastructure kind immutable", func(c *v1beta1.ClusterClass) { c.Spec.Infrastructure.Ref.Kind = "OtherClusterTemplate" },
			"spec.infrastructure.ref: Invalid value: \"OtherClusterTemplate.infrastructure.cluster.x-k8s.io\": the template's kind and group cannot change (was SimClusterTemplate.infrastructure.cluster.x-k8s.io)"},
		{"control plane group immutable", func(c *v1beta1.ClusterClass) { c.Spec.ControlPlane.Ref.APIVersion = "other.io/v1" },
			"spec.controlPlane.ref: Invalid value"},
		{"worker infrastructure kind immutable", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Template.Infrastructure.Ref.Kind = "OtherMachineTemplate"
		}, "spec.workers.machineDeployments[0].template.infrastructure.ref"},
		{"used MachineDeploymentClass cannot be removed", func(c *v1beta1.ClusterClass) { c.Spec.Workers.MachineDeployments = nil },
			`MachineDeploymentClass "default-worker" cannot be removed: used by ClusterV1Beta1(s) default/demo`},
		{"used MachinePoolClass cannot be removed", func(c *v1beta1.ClusterClass) { c.Spec.Workers.MachinePools = nil },
			`MachinePoolClass "default-pool" cannot be removed`},
		{"used variable cannot be removed", func(c *v1beta1.ClusterClass) {
			c.Spec.Variables = c.Spec.Variables[1:]
			c.Spec.Patches = c.Spec.Patches[1:]
		}, `variable "region" cannot be removed: used by ClusterV1Beta1(s) default/demo`},
		{"a bootstrap template may change kind", func(c *v1beta1.ClusterClass) {
			c.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref.Kind = "OtherConfigTemplate"
			c.Spec.Workers.MachineDeployments[0].Template.Bootstrap.Ref.APIVersion = "bootstrap.other.io/v1"
		}, ""},
	} {
		old, _ := sampleV1Beta1(t)
		class := old.DeepCopy()
		tc.edit(class)
		out = append(out, classFixture(t, "ClusterClass update/"+tc.name, tc.want != "", class, old, users))
	}
	old, _ := sampleV1Beta1(t)
	class := old.DeepCopy()
	class.Spec.Workers.MachinePools = nil
	out = append(out, classFixture(t, "ClusterClass update/an unused class may go", false, class, old, nil))

	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("v1.31.%d", i)
	}
	for _, tc := range []struct {
		name     string
		versions []string
		want     string
	}{
		{"one per minor", []string{"v1.30.4", "v1.31.2", "v1.32.0"}, ""},
		{"several patches of a minor", []string{"v1.30.4", "v1.30.5", "v1.31.0", "v1.31.2"}, ""},
		{"a minor skipped", []string{"v1.30.4", "v1.32.0"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.32.0": expecting a version with minor 30 or 31, found version 1.32.0`},
		{"a duplicate", []string{"v1.31.2", "v1.31.2"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.2": version must be greater than v1.31.2`},
		{"descending", []string{"v1.31.2", "v1.30.4"},
			`[spec.kubernetesVersion[1]: Invalid value: "v1.30.4": version must be greater than v1.31.2, spec.kubernetesVersion[1]: Invalid value: "v1.30.4": expecting a version with minor 31 or 32, found version 1.30.4]`},
		{"a pre-release before its release", []string{"v1.31.0-rc.1", "v1.31.0"}, ""},
		{"build metadata that cannot be ordered is tolerated", []string{"v1.31.2+abc", "v1.31.2+def"}, ""},
		{"numeric build metadata ascending", []string{"v1.31.2+1", "v1.31.2+2"}, ""},
		{"numeric build metadata descending", []string{"v1.31.2+2", "v1.31.2+1"},
			`spec.kubernetesVersion[1]: Invalid value: "v1.31.2+1": version must be greater than v1.31.2+2`},
		{"read leniently, as ParseTolerant does", []string{"1.31", "v1.32"}, ""},
		{"not a version", []string{"v1.30.4", "v1.31.x"}, `spec.kubernetesVersion[1]: Invalid value: "v1.31.x": version must be a valid semantic version`},
		{"an empty entry (CRD minLength)", []string{""},
			`spec.kubernetesVersions[0]: Invalid value: "": spec.kubernetesVersions[0] in body should be at least 1 chars long`},
		{"at most 100 (CRD maxItems)", many, "spec.kubernetesVersions: Too many: 101: must have at most 100 items"},
	} {
		class, _ := sampleV1Beta1(t)
		class.Spec.KubernetesVersions = tc.versions
		out = append(out, classFixture(t, "kubernetesVersions/"+tc.name, tc.want != "", class, nil, nil))
	}
	for _, tc := range []struct {
		versions []string
		want     string
	}{
		{nil, ""},
		{[]string{"v1.31.2", "v1.32.4"}, ""},
		{[]string{"v1.31.3", "v1.32.4"}, `spec.kubernetesVersions: Forbidden: Kubernetes Version v1.31.2 is used by Cluster "demo" but not set in ClusterClass`},
	} {
		class := old.DeepCopy()
		class.Spec.KubernetesVersions = tc.versions
		out = append(out, classFixture(t, fmt.Sprintf("kubernetesVersions of Clusters/%v", tc.versions), tc.want != "", class, old, users))
	}
	return out
}

func clusterFixtures(t *testing.T) []v1beta1Fixture {
	var out []v1beta1Fixture
	for _, tc := range []struct {
		name string
		edit func(c *v1beta1.Cluster, class *v1beta1.ClusterClass)
		want string
	}{
		{"class required", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) { c.Spec.Topology.Class = "" }, "spec.topology.class: Required value"},
		{"semver version", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) { c.Spec.Topology.Version = "1.31" },
			`spec.topology.version: Invalid value: "1.31": must be a semantic version with a "v" prefix`},
		{"version required", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) { c.Spec.Topology.Version = "" },
			"spec.topology.version: Required value: a Kubernetes version such as v1.31.2"},
		{"refs exclusive with topology", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.InfrastructureRef = &corev1.ObjectReference{Kind: "SimCluster", Name: "x"}
		}, "spec.infrastructureRef: Forbidden: must not be set when spec.topology is set"},
		{"control plane ref exclusive too", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "SimControlPlane", Name: "x"}
		}, "spec.controlPlaneRef: Forbidden"},
		{"unique pool names", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Name = "md-0"
		}, `spec.topology.workers.machineDeployments[1].name: Duplicate value: "md-0"`},
		{"pool names are label values", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Name = "no spaces allowed"
		}, `spec.topology.workers.machinePools[0].name: Invalid value: "no spaces allowed"`},
		{"worker class must exist", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Class = "gpu"
		}, `spec.topology.workers.machineDeployments[0].class: Invalid value: "gpu": MachineDeploymentClass is not defined in ClusterClass default/quick-start`},
		{"required variable", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) { c.Spec.Topology.Variables = nil },
			"spec.topology.variables[region]: Required value"},
		{"override validated", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`"big"`)
		}, "spec.topology.workers.machineDeployments[1].variables.overrides[workerInstanceType].value"},
		{"enabled MHC needs a definition", func(c *v1beta1.Cluster, class *v1beta1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &v1beta1.MachineHealthCheckTopology{Enable: ptr(true)}
		}, "spec.topology.workers.machineDeployments[0].machineHealthCheck.enable: Forbidden"},
		{"version listed by the class", func(c *v1beta1.Cluster, class *v1beta1.ClusterClass) {
			class.Spec.KubernetesVersions = []string{"v1.30.4", "v1.31.3"}
		}, `spec.topology.version: Invalid value: "v1.31.2": version must match one of the versions defined in the ClusterClass`},
		// Cluster API's webhooks.Cluster.validate and validateTopology.
		{"name is a label value", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) { c.Name = strings.Repeat("a", 64) },
			"metadata.name: Invalid value"},
		{"references stay in the namespace", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "SimControlPlane", Name: "x", Namespace: "other"}
		}, `spec.controlPlaneRef.namespace: Invalid value: "other": must match metadata.namespace`},
		{"pod CIDRs parse (validateCIDRBlocks)", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.ClusterNetwork = &v1beta1.ClusterNetwork{Pods: &v1beta1.NetworkRanges{CIDRBlocks: []string{"192.168.0.0/16", "10.0.0.0/33"}}}
		}, `spec.clusterNetwork.pods.cidrBlocks[1]: Invalid value: "10.0.0.0/33"`},
		{"service CIDRs parse", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.ClusterNetwork = &v1beta1.ClusterNetwork{Services: &v1beta1.NetworkRanges{CIDRBlocks: []string{"nope"}}}
		}, `spec.clusterNetwork.services.cidrBlocks[0]: Invalid value: "nope"`},
		{"topology label keys (validateTopologyMetadata)", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Labels = map[string]string{"bad key!": "v"}
		}, `spec.topology.workers.machineDeployments[0].metadata.labels: Invalid value: "bad key!"`},
		{"control plane label values", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.ControlPlane.Metadata.Labels = map[string]string{"ok": "not ok"}
		}, `spec.topology.controlPlane.metadata.labels: Invalid value: "not ok"`},
		{"annotation keys", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachinePools[0].Metadata.Annotations = map[string]string{"/x": "v"}
		}, `spec.topology.workers.machinePools[0].metadata.annotations: Invalid value: "/x"`},
		{"upgrade-concurrency is a number", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "two"}
		}, `metadata.annotations[topology.cluster.x-k8s.io/upgrade-concurrency]: Invalid value: "two"`},
		{"upgrade-concurrency at least 1", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Annotations = map[string]string{"topology.cluster.x-k8s.io/upgrade-concurrency": "0"}
		}, "value cannot be less than 1"},
		{"replicas and autoscaler annotations (validateAutoscalerAnnotationsForCluster)", func(c *v1beta1.Cluster, _ *v1beta1.ClusterClass) {
			c.Spec.Topology.Workers.MachineDeployments[0].Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size": "5"}
		}, "spec.topology.workers.machineDeployments[0].replicas: Invalid value: 2: must not be set when the MachineDeployment's topology metadata has the cluster autoscaler"},
		{"replicas and the class's autoscaler annotations", func(c *v1beta1.Cluster, class *v1beta1.ClusterClass) {
			class.Spec.Workers.MachineDeployments[0].Template.Metadata.Annotations = map[string]string{"cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size": "1"}
		}, `must not be set when MachineDeploymentClass "default-worker" has the cluster autoscaler`},
	} {
		class, c := sampleV1Beta1(t)
		tc.edit(c, class)
		out = append(out, clusterFixture(t, "Cluster/"+tc.name, true, c, nil, class, nil))
	}
	maxInFlight := &v1beta1.MachineDeploymentStrategy{Remediation: &v1beta1.RemediationStrategy{MaxInFlight: ptrIntStr("50%")}}
	on := &v1beta1.MachineHealthCheckTopology{Enable: ptr(true)}
	for _, tc := range []struct {
		name string
		edit func(class *v1beta1.ClusterClass, c *v1beta1.Cluster)
		want string
	}{
		{"control plane: nothing defined", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = nil
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, "spec.topology.controlPlane.machineHealthCheck.enable: Forbidden"},
		{"control plane: an empty definition is none", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = &v1beta1.MachineHealthCheckClass{UnhealthyConditions: []v1beta1.UnhealthyCondition{}}
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, "spec.topology.controlPlane.machineHealthCheck.enable: Forbidden"},
		{"control plane: the class defines it", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.ControlPlane.MachineHealthCheck = &v1beta1.MachineHealthCheckClass{NodeStartupTimeout: &metav1.Duration{Duration: time.Minute}}
			c.Spec.Topology.ControlPlane.MachineHealthCheck = on
		}, ""},
		{"MachineDeployment: nothing defined", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, "spec.topology.workers.machineDeployments[0].machineHealthCheck.enable: Forbidden"},
		{"MachineDeployment: the class's maxInFlight alone", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			class.Spec.Workers.MachineDeployments[0].Strategy = maxInFlight
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, ""},
		{"MachineDeployment: the topology's maxInFlight alone", func(class *v1beta1.ClusterClass, c *v1beta1.Cluster) {
			class.Spec.Workers.MachineDeployments[0].MachineHealthCheck = nil
			c.Spec.Topology.Workers.MachineDeployments[0].Strategy = maxInFlight
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = on
		}, ""},
	} {
		class, c := sampleV1Beta1(t)
		tc.edit(class, c)
		out = append(out, clusterFixture(t, "enabled health check/"+tc.name, tc.want != "", c, nil, class, nil))
	}

	// TestClusterUpdateRules.
	class, old := sampleV1Beta1(t)
	update := func(name string, refused bool, to string, cls *v1beta1.ClusterClass, annotations map[string]string) {
		c := old.DeepCopy()
		c.Spec.Topology.Version = to
		c.Annotations = annotations
		out = append(out, clusterFixture(t, "Cluster update/"+name, refused, c, old, cls, nil))
	}
	update("patch upgrade", false, "v1.31.5", class, nil)
	update("one minor", false, "v1.32.0", class, nil)
	update("down", true, "v1.30.9", class, nil)
	update("two minors", true, "v1.33.0", class, nil)
	update("a major", true, "v2.0.0", class, nil)
	update("escape hatch", false, "v1.33.0", class, map[string]string{SkipVersionCheckAnnotation: "true"})
	chained := class.DeepCopy()
	chained.Spec.KubernetesVersions = []string{"v1.31.2", "v1.32.4", "v1.33.1"}
	update("chained through kubernetesVersions", false, "v1.33.1", chained, nil)
	planned := class.DeepCopy()
	planned.Spec.Upgrade = &v1beta1.ClusterClassUpgrade{External: &v1beta1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: "plan.ext"}}
	update("chained through a GenerateUpgradePlan extension", false, "v1.34.0", planned, nil)
	out = append(out, classFixture(t, "ClusterClass/a well-formed handler name", false, planned, nil, nil))
	chain := []string{"v1.31.2", "v1.32.4", "v1.33.1", "v1.34.1"}
	for _, tc := range []struct {
		name        string
		to          string
		versions    []string
		extension   string
		annotations map[string]string
		want        string
	}{
		{"one minor", "v1.32.0", nil, "", nil, ""},
		{"two minors", "v1.33.0", nil, "", nil, `spec.topology.version: Invalid value: "v1.33.0": version can be increased by at most one minor (from v1.31.2)`},
		{"three minors chained through kubernetesVersions", "v1.34.1", chain, "", nil, ""},
		{"chained, the target listed", "v1.34.0", chain, "", nil, `spec.topology.version: Invalid value: "v1.34.0": version must match one of the versions defined in the ClusterClass`},
		{"chained by an upgrade plan extension", "v1.35.0", nil, "plan.ext", nil, ""},
		{"a pre-release of the same version is no downgrade", "v1.31.2-rc.1", nil, "", nil, ""},
		{"a downgrade", "v1.31.1", nil, "", nil, "version cannot be decreased from v1.31.2"},
		{"the skip annotation with an empty value", "v1.34.0", nil, "", map[string]string{SkipVersionCheckAnnotation: ""}, ""},
	} {
		cls := class.DeepCopy()
		cls.Spec.KubernetesVersions = tc.versions
		if tc.extension != "" {
			cls.Spec.Upgrade = &v1beta1.ClusterClassUpgrade{External: &v1beta1.ClusterClassUpgradeExternal{GenerateUpgradePlanExtension: tc.extension}}
		}
		update(tc.name, tc.want != "", tc.to, cls, tc.annotations)
	}

	c := old.DeepCopy()
	c.Spec.Topology = nil
	out = append(out, clusterFixture(t, "Cluster update/topology removed", true, c, old, class, nil))
	c = old.DeepCopy()
	c.Spec.InfrastructureRef = &corev1.ObjectReference{Kind: "SimCluster", Name: "demo-x"}
	out = append(out, clusterFixture(t, "Cluster update/refs set after creation", false, c, old, class, nil))
	next := class.DeepCopy()
	next.Name = "quick-start-v2"
	c = old.DeepCopy()
	c.Spec.Topology.Class = next.Name
	out = append(out, clusterFixture(t, "Cluster update/compatible rebase", false, c, old, next, class))
	next.Spec.Infrastructure.Ref.Kind = "OtherClusterTemplate"
	out = append(out, clusterFixture(t, "Cluster update/rebase to another infrastructure kind", true, c, old, next, class))
	next = class.DeepCopy()
	next.Spec.ControlPlane.MachineInfrastructure = nil
	next.Spec.ControlPlane.MachineHealthCheck = nil
	out = append(out, clusterFixture(t, "Cluster update/rebase without control plane machines", true, c, old, next, class))
	return out
}

func runningFixtures(t *testing.T) []v1beta1Fixture {
	var out []v1beta1Fixture
	settled := upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.2", Stable: true}
	pool := func(name string, mp bool, version string, rolling bool) upgrade.Pool {
		return upgrade.Pool{Name: name, MachinePool: mp, Exists: true, Version: version, RollingOut: rolling}
	}
	for _, tc := range []struct {
		name    string
		to      string
		running upgrade.Input
		skip    bool
		want    string
	}{
		{"settled", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("md-0", false, "v1.31.2", false)}}, false, ""},
		{"no change is always fine", "v1.31.2", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.30.0"}}, false, ""},
		{"control plane not told yet", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.30.9", StatusVersion: "v1.30.9"}}, false,
			"Cluster.spec.topology.version 1.31.2 was not propagated to control plane yet (control plane version 1.30.9)"},
		{"control plane provisioning", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2"}}, false,
			"control plane is currently provisioning"},
		{"control plane upgrading", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.9"}}, false,
			"control plane is still completing a previous upgrade"},
		{"pool behind", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("md-0", false, "v1.30.9", false), pool("md-1", false, "v1.31.2", false)}}, false,
			"there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"pool rolling out", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{pool("mp-0", true, "v1.31.2", true)}}, false,
			"there are still MachinePools completing a previous upgrade: [mp-0]"},
		{"pool not created yet does not count", "v1.32.0", upgrade.Input{ControlPlane: settled, Pools: []upgrade.Pool{{Name: "md-9"}}}, false, ""},
		{"skip annotation", "v1.32.0", upgrade.Input{ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2"}}, true, ""},
	} {
		_, old := sampleV1Beta1(t)
		c := old.DeepCopy()
		c.Spec.Topology.Version = tc.to
		if tc.skip {
			c.Annotations = map[string]string{SkipVersionCheckAnnotation: "true"}
		}
		out = append(out, runningFixture(t, "running/"+tc.name, tc.want != "", c, old, tc.running))
	}
	chain := []string{"v1.31.2", "v1.32.4", "v1.33.1", "v1.34.1"}
	cpAt := func(v string) upgrade.ControlPlane {
		return upgrade.ControlPlane{Exists: true, SpecVersion: v, StatusVersion: v, Stable: true}
	}
	md := func(version string, rolling, converging bool) upgrade.Pool {
		return upgrade.Pool{Name: "md-0", Exists: true, Version: version, RollingOut: rolling, Converging: converging}
	}
	for _, tc := range []struct {
		name        string
		from, to    string
		running     upgrade.Input
		annotations map[string]string
		want        string
	}{
		{"control plane at an intermediate step, pools behind", "v1.32.4", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: chain, ControlPlane: cpAt("v1.32.4"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil, ""},
		{"control plane upgrading to an intermediate step", "v1.33.1", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: chain, ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.33.1", StatusVersion: "v1.32.4"}, Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil, ""},
		{"the admission webhook reads for the stored Cluster: a change", "v1.32.4", "v1.34.1",
			upgrade.Input{Target: "v1.32.4", KubernetesVersions: chain, ControlPlane: cpAt("v1.32.4"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"not a step of the chain", "v1.32.3", "v1.34.1",
			upgrade.Input{Target: "v1.34.1", KubernetesVersions: append([]string{"v1.32.3"}, chain[1:]...), ControlPlane: cpAt("v1.32.3"), Pools: []upgrade.Pool{md("v1.31.2", false, false)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"the only Machine on the old version: not upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2"), Pools: []upgrade.Pool{md("v1.31.2", false, true)}}, nil, ""},
		{"a Machine on another version: upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2"), Pools: []upgrade.Pool{md("v1.31.2", true, true)}}, nil,
			"version cannot be changed: there are still MachineDeployments completing a previous upgrade: [md-0]"},
		{"AfterClusterUpgrade pending", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: cpAt("v1.31.2")}, map[string]string{"runtime.cluster.x-k8s.io/pending-hooks": "AfterClusterUpgrade"},
			`version cannot be changed when the "AfterClusterUpgrade" hook is still blocking`},
		{"control plane status above spec: not upgrading", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.31.3"}}, nil, ""},
		{"several reasons, as an aggregate", "v1.31.2", "v1.32.4",
			upgrade.Input{Target: "v1.31.2", ControlPlane: upgrade.ControlPlane{Exists: true, SpecVersion: "v1.31.2", StatusVersion: "v1.30.9"}, Pools: []upgrade.Pool{md("v1.30.9", false, false)}}, nil,
			"version cannot be changed: [control plane is still completing a previous upgrade, there are still MachineDeployments completing a previous upgrade: [md-0]]"},
	} {
		_, old := sampleV1Beta1(t)
		old.Spec.Topology.Version = tc.from
		c := old.DeepCopy()
		c.Spec.Topology.Version = tc.to
		c.Annotations = tc.annotations
		out = append(out, runningFixture(t, "running chained/"+tc.name, tc.want != "", c, old, tc.running))
	}
	return out
}

func taintFixtures(t *testing.T) []v1beta1Fixture {
	var out []v1beta1Fixture
	taints := func(key string, propagation v1beta1.MachineTaintPropagation) []v1beta1.MachineTaint {
		return []v1beta1.MachineTaint{{Key: key, Effect: "NoSchedule", Propagation: propagation}}
	}
	always := v1beta1.MachineTaintPropagationAlways
	for _, tc := range []struct {
		key  string
		want string
	}{
		{"example.com/dedicated", ""},
		{"node.kubernetes.io/out-of-service", ""},
		{"node.cluster.x-k8s.io/uninitialized", `Invalid value: "node.cluster.x-k8s.io/uninitialized": taint key is not allowed`},
		{"node.cluster.x-k8s.io/outdated-revision", `Invalid value: "node.cluster.x-k8s.io/outdated-revision": taint key is not allowed`},
		{"node.kubernetes.io/unreachable", `Invalid value: "node.kubernetes.io/unreachable": taint key must not have the prefix node.kubernetes.io/, except for node.kubernetes.io/out-of-service`},
		{"node.cloudprovider.kubernetes.io/x", `Invalid value: "node.cloudprovider.kubernetes.io/x": taint key must not have the prefix node.cloudprovider.kubernetes.io/`},
		{"node-role.kubernetes.io/master", `Invalid value: "node-role.kubernetes.io/master": taint is deprecated since 1.24 and should not be used anymore`},
		{"bad key!", `Invalid value: "bad key!": name part must consist of alphanumeric characters`},
	} {
		class, cluster := sampleV1Beta1(t)
		class.Spec.ControlPlane.Taints = taints(tc.key, always)
		class.Spec.Workers.MachinePools[0].Taints = taints(tc.key, always)
		cluster.Spec.Topology.Workers.MachineDeployments[1].Taints = taints(tc.key, always)
		out = append(out, classFixture(t, "taint key/ClusterClass/"+tc.key, tc.want != "", class, nil, nil),
			clusterFixture(t, "taint key/Cluster/"+tc.key, tc.want != "", cluster, nil, class, nil))
	}
	for _, tc := range []struct {
		name   string
		taints []v1beta1.MachineTaint
		want   string
	}{
		{"Always", taints("example.com/a", "Always"), ""},
		{"OnInitialization", taints("example.com/a", "OnInitialization"), ""},
		{"other propagation", taints("example.com/a", "Sometimes"), `taints[0].propagation: Unsupported value: "Sometimes": supported values: "Always", "OnInitialization"`},
		{"propagation required", taints("example.com/a", ""), "taints[0].propagation: Required value"},
		{"other effect", []v1beta1.MachineTaint{{Key: "example.com/a", Effect: "Evict", Propagation: "Always"}}, `taints[0].effect: Unsupported value: "Evict"`},
		{"key required", []v1beta1.MachineTaint{{Effect: "NoSchedule", Propagation: "Always"}}, "taints[0].key: Required value"},
		{"value a label value", []v1beta1.MachineTaint{{Key: "example.com/a", Value: "not ok", Effect: "NoSchedule", Propagation: "Always"}}, `taints[0].value: Invalid value: "not ok"`},
		{"unique key and effect", append(taints("example.com/a", "Always"), taints("example.com/a", "OnInitialization")...), "taints[1]: Duplicate value"},
		{"same key, other effect", append(taints("example.com/a", "Always"), v1beta1.MachineTaint{Key: "example.com/a", Effect: "NoExecute", Propagation: "Always"}), ""},
	} {
		class, cluster := sampleV1Beta1(t)
		class.Spec.ControlPlane.Taints = tc.taints
		class.Spec.Workers.MachineDeployments[0].Taints = tc.taints
		class.Spec.Workers.MachinePools[0].Taints = tc.taints
		cluster.Spec.Topology.ControlPlane.Taints = tc.taints
		cluster.Spec.Topology.Workers.MachineDeployments[1].Taints = tc.taints
		cluster.Spec.Topology.Workers.MachinePools[0].Taints = tc.taints
		out = append(out, classFixture(t, "taint schema/ClusterClass/"+tc.name, tc.want != "", class, nil, nil),
			clusterFixture(t, "taint schema/Cluster/"+tc.name, tc.want != "", cluster, nil, class, nil))
	}
	// TestTaints_Gate.
	class, cluster := sampleV1Beta1(t)
	class.Spec.Workers.MachineDeployments[0].Taints = taints("node.kubernetes.io/unreachable", "Always")
	cluster.Spec.Topology.Workers.MachineDeployments[0].Taints = taints("example.com/a", "Always")
	for _, g := range []struct {
		name  string
		gates Gates
	}{{"off", Gates{}}, {"on", Gates{MachineTaintPropagation: true}}} {
		out = append(out,
			v1beta1Fixture{"taint gate/ClusterClass/" + g.name, !g.gates.MachineTaintPropagation, ClassTaintsV1Beta1(class, g.gates), ClassTaints(hubClass(t, class), g.gates)},
			v1beta1Fixture{"taint gate/Cluster/" + g.name, !g.gates.MachineTaintPropagation, ClusterTaintsV1Beta1(cluster, g.gates), ClusterTaints(hubCluster(t, cluster), g.gates)})
	}
	empty := &v1beta1.ClusterClass{}
	out = append(out, v1beta1Fixture{"taint gate/no taints", false, ClassTaintsV1Beta1(empty, Gates{}), ClassTaints(hubClass(t, empty), Gates{})})
	return out
}

// variablesFixtures are TestDiscoveredVariables's.
func variablesFixtures(t *testing.T) []v1beta1Fixture {
	p := field.NewPath("lb", "variables")
	fixture := func(name string, refused bool, vs []v1beta1.ClusterClassVariable) v1beta1Fixture {
		hub, err := conversion.ClusterClassVariablesToHub(vs)
		require.NoError(t, err)
		valid, errs := VariablesV1Beta1(vs, p)
		if len(errs) == 0 {
			assert.Equal(t, hub, valid, "the valid definitions, on the hub")
		}
		return v1beta1Fixture{"variables/" + name, refused, errs, Variables(hub, p)}
	}
	return []v1beta1Fixture{
		fixture("builtin", true, []v1beta1.ClusterClassVariable{
			{Name: "builtinX", Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "string"}}},
		}),
		fixture("bad default", true, []v1beta1.ClusterClassVariable{{Name: "tag", Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{
			Type: "string", MaxLength: ptr(int64(2)), Default: &apiextensionsv1.JSON{Raw: []byte(`"toolong"`)}}}}}),
		fixture("ok", false, []v1beta1.ClusterClassVariable{{Name: "tag", Schema: v1beta1.VariableSchema{OpenAPIV3Schema: v1beta1.JSONSchemaProps{Type: "string"}}}}),
	}
}

// TestV1Beta1DefaultingAgreesWithHub: the v1beta1 defaulting kept as v1beta1 code computes what
// the hub defaulting computes on the converted input, on the inputs of the tests written
// before the hub (TestDefaultClusterV1Beta1, TestDefaultClusterClassV1Beta1,
// TestDefaultVariablesV1Beta1).
func TestV1Beta1DefaultingAgreesWithHub(t *testing.T) {
	for _, edit := range []func(c *v1beta1.Cluster){
		func(c *v1beta1.Cluster) { c.Spec.Topology.Version = "1.31.2" },
		func(c *v1beta1.Cluster) {},
		func(c *v1beta1.Cluster) { c.Spec.Topology.Version = "" },
		func(c *v1beta1.Cluster) {
			c.Spec.Topology.ControlPlane.ReadinessGates = []v1beta1.MachineReadinessGate{}
			c.Spec.Topology.Workers.MachineDeployments[0].ReadinessGates = []v1beta1.MachineReadinessGate{}
		},
		func(c *v1beta1.Cluster) { c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{} },
		func(c *v1beta1.Cluster) { c.Spec.Topology.Workers.MachinePools[0].FailureDomains = []string{"a"} },
		func(c *v1beta1.Cluster) {
			c.Spec.ControlPlaneRef = &corev1.ObjectReference{Kind: "KubeadmControlPlane", Name: "cp"}
			c.Spec.Topology.Workers.MachineDeployments[0].MachineHealthCheck = &v1beta1.MachineHealthCheckTopology{
				MachineHealthCheckClass: v1beta1.MachineHealthCheckClass{RemediationTemplate: &corev1.ObjectReference{Kind: "R", Name: "r"}},
			}
		},
		func(c *v1beta1.Cluster) { c.Spec.Topology = nil },
	} {
		c := &v1beta1.Cluster{}
		c.Name, c.Namespace = "c", "ns"
		c.Spec.Topology = &v1beta1.Topology{Class: "k", Version: "v1.31.2", Workers: &v1beta1.WorkersTopology{
			MachineDeployments: []v1beta1.MachineDeploymentTopology{{Name: "md", Class: "default-worker"}},
			MachinePools:       []v1beta1.MachinePoolTopology{{Name: "mp", Class: "default-pool"}},
		}}
		edit(c)
		hub := hubCluster(t, c)
		require.NoError(t, DefaultClusterV1Beta1(c))
		require.NoError(t, DefaultCluster(hub))
		assert.Equal(t, hub, hubCluster(t, c))
	}

	class, _ := sampleV1Beta1(t)
	hub := hubClass(t, class)
	DefaultClusterClassV1Beta1(class)
	DefaultClusterClass(hub)
	assert.Equal(t, hub, hubClass(t, class), "the namespaces the v1beta1 defaulting writes do not convert")

	variablesAgree := func(name string, edit func(c *v1beta1.Cluster)) {
		class, c := sampleV1Beta1(t)
		edit(c)
		hub, hubCC := hubCluster(t, c), hubClass(t, class)
		errs, hubErrs := DefaultVariablesV1Beta1(c, class), DefaultVariables(hub, hubCC)
		assert.Equal(t, len(hubErrs) > 0, len(errs) > 0, "%s: %v %v", name, errs, hubErrs)
		assert.Equal(t, hub, hubCluster(t, c), name)
	}
	variablesAgree("the sample", func(*v1beta1.Cluster) {})
	variablesAgree("definitionFrom set", func(c *v1beta1.Cluster) {
		c.Spec.Topology.Variables[0].DefinitionFrom = "inline"
		c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].DefinitionFrom = "inline"
	})
	// An override that is not JSON: the conversion reads the values, so the Cluster no longer
	// converts; the same edit is made on the hub converted before it. Both refuse it and leave
	// the Cluster as it was.
	{
		class, c := sampleV1Beta1(t)
		hub := hubCluster(t, c)
		c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`{`)
		hub.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides[0].Value.Raw = []byte(`{`)
		before, hubBefore := c.DeepCopy(), hub.DeepCopy()
		errs, hubErrs := DefaultVariablesV1Beta1(c, class), DefaultVariables(hub, hubClass(t, class))
		assert.NotEmpty(t, hubErrs)
		if assert.Len(t, errs, 1) {
			assert.Contains(t, errs[0].Error(), "spec.topology.workers.machineDeployments[1].variables.overrides: Invalid value: does not convert to v1beta2")
		}
		assert.Equal(t, before, c, "an override that is not JSON")
		assert.Equal(t, hubBefore, hub, "an override that is not JSON")
	}
	variablesAgree("empty overrides", func(c *v1beta1.Cluster) {
		c.Spec.Topology.Workers.MachineDeployments[1].Variables.Overrides = []v1beta1.ClusterVariable{}
	})
}
