package patches

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

func tmpl(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(y), &u.Object))
	return u
}

const kcpTemplate = `
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata: {name: kcp, labels: {keep: me}}
spec:
  template:
    spec:
      kubeadmConfigSpec:
        clusterConfiguration: {}
`

const dockerMachineTemplate = `
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: DockerMachineTemplate
metadata: {name: worker}
spec:
  template:
    spec:
      extraMounts: []
`

// bookPatches are the patch examples of seed 002, joined into one list.
const bookPatches = `
- name: imageRepository
  definitions:
  - selector:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      matchResources: {controlPlane: true}
    jsonPatches:
    - op: add
      path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
      valueFrom: {variable: imageRepository}
- name: etcdImageTag
  definitions:
  - selector:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      matchResources: {controlPlane: true}
    jsonPatches:
    - op: add
      path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd
      valueFrom:
        template: |
          local:
            imageTag: {{ .etcdImageTag }}
- name: customImage
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources:
        machineDeploymentClass: {names: [default-*]}
    jsonPatches:
    - op: add
      path: /spec/template/spec/customImage
      valueFrom:
        template: "kindest/node:{{ .builtin.machineDeployment.version }}"
    - op: add
      path: /spec/template/spec/osImage
      valueFrom:
        template: "{{ (index .mdConfig .builtin.machineDeployment.class).osImage }}"
- name: httpProxy
  enabledIf: "{{ .httpProxyEnabled }}"
  definitions:
  - selector:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: DockerMachineTemplate
      matchResources:
        machineDeploymentClass: {names: ["*"]}
    jsonPatches:
    - op: add
      path: /spec/template/spec/httpProxy
      valueFrom: {variable: httpProxy.url}
    - op: add
      path: /spec/template/spec/dnsServer
      valueFrom: {variable: "dnsServers[1]"}
- name: versionAware
  enabledIf: '{{ semverCompare ">=1.30.0" .builtin.controlPlane.version }}'
  definitions:
  - selector:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      matchResources: {controlPlane: true}
    jsonPatches:
    - op: add
      path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/featureGates
      value: {NewThing: true}
- name: specLabelsAndAnnotationsAreTaken
  definitions:
  - selector:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      matchResources: {controlPlane: true}
    jsonPatches:
    - op: add
      path: /metadata/labels/patched
      value: "yes"
    - op: replace
      path: /metadata/name
      value: renamed
`

func loadPatches(t *testing.T, y string) []clusterv1.ClusterClassPatch {
	t.Helper()
	var p []clusterv1.ClusterClassPatch
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), &p))
	return p
}

func vars(cp, md string, extra map[string]any) map[string]any {
	v := map[string]any{
		"imageRepository":  "my.registry",
		"etcdImageTag":     "3.5.1-0",
		"httpProxyEnabled": true,
		"httpProxy":        map[string]any{"url": "http://proxy:3128"},
		"dnsServers":       []any{"1.1.1.1", "8.8.8.8"},
		"mdConfig":         map[string]any{"default-worker": map[string]any{"osImage": "ubuntu-24.04"}},
		"builtin": map[string]any{
			"cluster":           map[string]any{"name": "c1"},
			"controlPlane":      map[string]any{"version": cp},
			"machineDeployment": map[string]any{"version": md, "class": "default-worker"},
		},
	}
	for k, x := range extra {
		v[k] = x
	}
	return v
}

func spec(t *testing.T, u *unstructured.Unstructured, path ...string) any {
	t.Helper()
	v, _, err := unstructured.NestedFieldNoCopy(u.Object, append([]string{"spec", "template", "spec"}, path...)...)
	require.NoError(t, err)
	return v
}

func TestBookPatches(t *testing.T) {
	cp := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.2", "", nil)}
	md := &Target{Role: MachineDeploymentInfrastructure, Class: "default-worker", Template: tmpl(t, dockerMachineTemplate), Variables: vars("v1.30.2", "v1.29.9", nil)}
	other := &Target{Role: MachineDeploymentInfrastructure, Class: "gpu", Template: tmpl(t, dockerMachineTemplate), Variables: vars("v1.30.2", "v1.29.9", nil)}
	require.NoError(t, Apply(loadPatches(t, bookPatches), []*Target{cp, md, other}, nil))

	cc := spec(t, cp.Template, "kubeadmConfigSpec", "clusterConfiguration").(map[string]any)
	assert.Equal(t, "my.registry", cc["imageRepository"])
	assert.Equal(t, map[string]any{"local": map[string]any{"imageTag": "3.5.1-0"}}, cc["etcd"], "template output parsed as YAML")
	assert.Equal(t, map[string]any{"NewThing": true}, cc["featureGates"], "version-aware enabledIf")
	assert.Equal(t, map[string]string{"keep": "me", "patched": "yes"}, cp.Template.GetLabels(), "labels are taken from a patched template (Cluster API v1.14)")
	assert.NotEqual(t, "renamed", cp.Template.GetName(), "other metadata is not")

	assert.Equal(t, "kindest/node:v1.29.9", spec(t, md.Template, "customImage"), "builtin.machineDeployment.version")
	assert.Equal(t, "ubuntu-24.04", spec(t, md.Template, "osImage"))
	assert.Equal(t, "http://proxy:3128", spec(t, md.Template, "httpProxy"), "variable .field access")
	assert.Equal(t, "8.8.8.8", spec(t, md.Template, "dnsServer"), "variable [i] access")

	assert.Nil(t, spec(t, other.Template, "customImage"), "class gpu does not match default-*")
	assert.Equal(t, "http://proxy:3128", spec(t, other.Template, "httpProxy"), "* matches every class")
}

func TestEnabledIf(t *testing.T) {
	patches := loadPatches(t, bookPatches)
	off := &Target{Role: MachineDeploymentInfrastructure, Class: "x", Template: tmpl(t, dockerMachineTemplate), Variables: vars("v1.29.0", "v1.29.0", map[string]any{"httpProxyEnabled": false})}
	oldCP := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.29.0", "", nil)}
	require.NoError(t, Apply(patches, []*Target{off, oldCP}, nil))
	assert.Nil(t, spec(t, off.Template, "httpProxy"))
	assert.Nil(t, spec(t, oldCP.Template, "kubeadmConfigSpec", "clusterConfiguration", "featureGates"))

	for _, tc := range []struct {
		tmpl string
		want bool
	}{
		{"true", true}, {" true\n", true}, {"false", false}, {"True", false}, {"{{ if .x }}true{{end}}", false},
		{`{{ semverCompare "^1.22.0" (coalesce .cp .md) }}`, true},
	} {
		got, err := IsEnabled(tc.tmpl, map[string]any{"cp": "", "md": "v1.22.3"})
		require.NoError(t, err, tc.tmpl)
		assert.Equal(t, tc.want, got, tc.tmpl)
	}
}

func TestRemoveAndReplace(t *testing.T) {
	p := loadPatches(t, `
- name: p
  definitions:
  - selector: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, matchResources: {machinePoolClass: {names: [pool]}}}
    jsonPatches:
    - {op: remove, path: /spec/template/spec/extraMounts}
    - {op: add, path: /spec/template/spec/list, value: [a]}
    - {op: add, path: /spec/template/spec/list/-, value: b}
    - {op: replace, path: /spec/template/spec/list/0, value: z}
`)
	target := &Target{Role: MachinePoolInfrastructure, Class: "pool", Template: tmpl(t, dockerMachineTemplate), Variables: map[string]any{}}
	require.NoError(t, Apply(p, []*Target{target}, nil))
	assert.Equal(t, map[string]any{"list": []any{"z", "b"}}, spec(t, target.Template))
}

func TestErrorsNamePatchAndTemplate(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		want        []string
	}{
		{"missing variable", `
- name: needsRegion
  definitions:
  - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, matchResources: {controlPlane: true}}
    jsonPatches: [{op: add, path: /spec/template/spec/region, valueFrom: {variable: region}}]`,
			[]string{`patch "needsRegion" on KubeadmControlPlaneTemplate kcp (ControlPlane)`, `jsonPatches[0] (add /spec/template/spec/region)`, `variable "region" is not set`}},
		{"missing parent on add", `
- name: deep
  definitions:
  - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, matchResources: {controlPlane: true}}
    jsonPatches: [{op: add, path: /spec/template/spec/a/b/c, value: 1}]`,
			[]string{`patch "deep"`, "applying JSON patch"}},
		{"bad template", `
- name: tpl
  definitions:
  - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, matchResources: {controlPlane: true}}
    jsonPatches: [{op: add, path: /spec/template/spec/x, valueFrom: {template: "{{ .a "}}]`,
			[]string{"valueFrom.template: parsing template"}},
		{"non-hermetic function", `
- name: tpl
  definitions:
  - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, matchResources: {controlPlane: true}}
    jsonPatches: [{op: add, path: /spec/template/spec/x, valueFrom: {template: "{{ now }}"}}]`,
			[]string{`function "now" not defined`}},
		{"field of a string", `
- name: f
  definitions:
  - selector: {apiVersion: controlplane.cluster.x-k8s.io/v1beta1, kind: KubeadmControlPlaneTemplate, matchResources: {controlPlane: true}}
    jsonPatches: [{op: add, path: /spec/template/spec/x, valueFrom: {variable: imageRepository.host}}]`,
			[]string{`variable "imageRepository.host": imageRepository is a string, it has no fields`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.0", "", nil)}
			err := Apply(loadPatches(t, tc.patch), []*Target{target}, nil)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	v := map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": "x"}, []any{1.0, 2.0}}}}
	for path, want := range map[string]any{"a.b[0].c": "x", "a.b[1][1]": 2.0, "a": v["a"]} {
		got, err := Lookup(v, path)
		require.NoError(t, err, path)
		assert.Equal(t, want, got, path)
	}
	for path, want := range map[string]string{
		"a.b[5]": "index 5 out of range", "a.z": `has no field "z"`, "a[0]": "is an object, not a list",
		"a..b": "empty segment", "a.b[x]": "not a non-negative integer", "[0]": "must start with a name", "a.b.c": "is a list",
	} {
		_, err := Lookup(v, path)
		require.Error(t, err, path)
		assert.Contains(t, err.Error(), want, path)
	}
}

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"*", "anything", true}, {"default-*", "default-worker", true}, {"default-*", "gpu", false},
		{"*-worker", "default-worker", true}, {"a*b*c", "axxbyyc", true}, {"a*b*c", "axxcyyb", false}, {"exact", "exact", true}, {"exact", "exactly", false},
	} {
		assert.Equal(t, tc.want, wildcard(tc.p, tc.s), "%s ~ %s", tc.p, tc.s)
	}
}

// FuzzApply: arbitrary patch paths, ops and values never panic the engine.
func FuzzApply(f *testing.F) {
	f.Add("add", "/spec/template/spec/x", `"v"`, "a.b[0]")
	f.Add("remove", "/spec/template/spec/kubeadmConfigSpec", `null`, "builtin.cluster.name")
	f.Add("replace", "/spec/~1weird/0", `{"a":[1,2]}`, "x[")
	f.Fuzz(func(t *testing.T, op, path, value, variable string) {
		target := &Target{Role: ControlPlane, Template: tmpl(t, kcpTemplate), Variables: vars("v1.30.0", "", nil)}
		jp := clusterv1.JSONPatch{Op: op, Path: path}
		if json.Valid([]byte(value)) {
			jp.Value = &apiextensionsv1.JSON{Raw: []byte(value)}
		} else {
			jp.ValueFrom = &clusterv1.JSONPatchValue{Variable: variable}
		}
		p := []clusterv1.ClusterClassPatch{{Name: "f", Definitions: []clusterv1.PatchDefinition{{
			Selector:    clusterv1.PatchSelector{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "KubeadmControlPlaneTemplate", MatchResources: clusterv1.PatchSelectorMatch{ControlPlane: new(true)}},
			JSONPatches: []clusterv1.JSONPatch{jp},
		}}}}
		_ = Apply(p, []*Target{target}, nil)
		_, _ = Lookup(target.Variables, variable)
	})
}
