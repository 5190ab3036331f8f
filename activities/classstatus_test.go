package activities

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/deploy/samples"
	"github.com/topoflow/topoflow/model/api/conversion"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/variables"
)

// TestClassStatusHolds: the ClusterClass status is written only when it would change, so a class
// whose status Cluster API's ClusterClass controller wrote is left as it is after a takeover.
func TestClassStatusHolds(t *testing.T) {
	vars := []hubv1.ClusterClassStatusVariable{{Name: "region", DefinitionsConflict: ptr(false)}}
	// class is a class of generation gen whose status says observed, v and the conditions:
	// VariablesReconciled (v1beta1) and VariablesReady (v1beta2, of the generation observed).
	class := func(gen, observed int64, v []hubv1.ClusterClassStatusVariable, v1 *hubv1.V1Beta1Condition, v2 *metav1.Condition) *hubv1.ClusterClass {
		c := &hubv1.ClusterClass{}
		c.Generation, c.Status.ObservedGeneration, c.Status.Variables = gen, observed, v
		if v1 != nil {
			c.Status.Deprecated = &hubv1.V1Beta1ConditionsDeprecatedStatus{V1Beta1: &hubv1.V1Beta1ConditionsStatus{Conditions: hubv1.V1Beta1Conditions{*v1}}}
		}
		if v2 != nil {
			v2 := *v2
			v2.ObservedGeneration = observed
			c.Status.Conditions = []metav1.Condition{v2}
		}
		return c
	}
	ok := &hubv1.V1Beta1Condition{Type: "VariablesReconciled", Status: "True"}
	failed := &hubv1.V1Beta1Condition{Type: "VariablesReconciled", Status: "False", Reason: "VariableDiscoveryFailed", Severity: "Error", Message: "boom"}
	ready := &metav1.Condition{Type: "VariablesReady", Status: "True", Reason: "VariablesReady"}
	notReady := &metav1.Condition{Type: "VariablesReady", Status: "False", Reason: "VariableDiscoveryFailed", Message: "boom"}
	// want is what the activity would write for generation 2.
	want := func(v []hubv1.ClusterClassStatusVariable, v1 *hubv1.V1Beta1Condition, v2 *metav1.Condition) hubv1.ClusterClassStatus {
		return class(2, 2, v, v1, v2).Status
	}
	olderReady := class(2, 2, vars, ok, ready)
	olderReady.Status.Conditions[0].ObservedGeneration = 1
	for _, tc := range []struct {
		name  string
		class *hubv1.ClusterClass
		st    hubv1.ClusterClassStatus
		holds bool
	}{
		{"the same status", class(2, 2, vars, ok, ready), want(vars, ok, ready), true},
		{"the same failure", class(2, 2, vars, failed, notReady), want(vars, failed, notReady), true},
		{"no variables either way", class(2, 2, nil, ok, ready), want([]hubv1.ClusterClassStatusVariable{}, ok, ready), true},
		{"a newer generation", class(3, 2, vars, ok, ready), class(3, 3, vars, ok, ready).Status, false},
		{"other variables", class(2, 2, vars, ok, ready), want([]hubv1.ClusterClassStatusVariable{{Name: "zone", DefinitionsConflict: ptr(false)}}, ok, ready), false},
		{"no condition yet", class(2, 2, vars, nil, nil), want(vars, ok, ready), false},
		{"the condition turns", class(2, 2, vars, ok, ready), want(vars, failed, notReady), false},
		{"another message", class(2, 2, vars, failed, notReady), want(vars,
			&hubv1.V1Beta1Condition{Type: "VariablesReconciled", Status: "False", Reason: "VariableDiscoveryFailed", Severity: "Error", Message: "other"},
			&metav1.Condition{Type: "VariablesReady", Status: "False", Reason: "VariableDiscoveryFailed", Message: "other"}), false},
		// A status topoflow wrote in v1beta1 has no VariablesReady: written once more, with it.
		{"no VariablesReady yet", class(2, 2, vars, ok, nil), want(vars, ok, ready), false},
		{"VariablesReady of an older generation", olderReady, want(vars, ok, ready), false},
		// A v1beta1 status read on the hub has definitionsConflict unset where it is false.
		{"definitionsConflict false read from v1beta1", class(2, 2, []hubv1.ClusterClassStatusVariable{{Name: "region"}}, ok, ready), want(vars, ok, ready), true},
		{"definitionsConflict turns", class(2, 2, vars, ok, ready), want([]hubv1.ClusterClassStatusVariable{{Name: "region", DefinitionsConflict: ptr(true)}}, ok, ready), false},
	} {
		assert.Equal(t, tc.holds, classStatusHolds(tc.class, tc.st), tc.name)
	}
}

// classStatusNow is the clock of classStatusCases.
var classStatusNow = time.Date(2026, 11, 28, 1, 2, 3, 400_000_000, time.UTC)

// classAnswer is one external patch's DiscoverVariables answer.
type classAnswer struct {
	patch string
	vars  []clusterv1.ClusterClassVariable
}

// classStatusCase is a ClusterClass as read in v1beta1, and the DiscoverVariables answers and
// failures of its external patches.
type classStatusCase struct {
	name     string
	class    func() *clusterv1.ClusterClass
	answers  []classAnswer
	failures []string
}

// sampleClass is the sample ClusterClass (deploy/samples) at generation 3.
func sampleClass() *clusterv1.ClusterClass {
	class, _, err := samples.Typed()
	if err != nil {
		panic(err)
	}
	class.Generation, class.UID = 3, "uid-1"
	return class
}

// withExternalPatch adds the external patch "images", which discovers variables.
func withExternalPatch(class *clusterv1.ClusterClass) *clusterv1.ClusterClass {
	class.Spec.Patches = append(class.Spec.Patches, clusterv1.ClusterClassPatch{Name: "images", External: &clusterv1.ExternalPatchDefinition{
		GenerateExtension: ptr("generatepatches-handler.ext"), DiscoverVariablesExtension: ptr("discovervariables-handler.ext"),
		Settings: map[string]string{"a": "b"}}})
	return class
}

// stringSchema is a string variable's schema, changed by extra.
func stringSchema(extra func(*clusterv1.JSONSchemaProps)) clusterv1.VariableSchema {
	s := clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "string"}}
	if extra != nil {
		extra(&s.OpenAPIV3Schema)
	}
	return s
}

var classStatusCases = []classStatusCase{
	{name: "inline variables, first write", class: sampleClass},
	{name: "inline and discovered", class: func() *clusterv1.ClusterClass { return withExternalPatch(sampleClass()) },
		answers: []classAnswer{{patch: "images", vars: []clusterv1.ClusterClassVariable{
			{Name: "nodeImageTag", Required: false, Metadata: clusterv1.ClusterClassVariableMetadata{Labels: map[string]string{"team": "nodes"}},
				Schema: stringSchema(func(s *clusterv1.JSONSchemaProps) {
					s.Default = &apiextensionsv1.JSON{Raw: []byte(`"v1"`)}
					s.XPreserveUnknownFields = false
				})},
			{Name: "extra", Required: true, Schema: clusterv1.VariableSchema{OpenAPIV3Schema: clusterv1.JSONSchemaProps{Type: "object",
				XPreserveUnknownFields: true, Properties: map[string]clusterv1.JSONSchemaProps{"n": {Type: "integer", Minimum: ptr(int64(1)), ExclusiveMinimum: false}}}}},
		}}}},
	{name: "discovered definitions that conflict", class: func() *clusterv1.ClusterClass { return withExternalPatch(sampleClass()) },
		answers: []classAnswer{{patch: "images", vars: []clusterv1.ClusterClassVariable{{Name: "region", Required: false, Schema: stringSchema(nil)}}}}},
	{name: "discovery failed: the variables stay", class: func() *clusterv1.ClusterClass {
		class := withExternalPatch(sampleClass())
		class.Status.ObservedGeneration = 2
		class.Status.Variables = []clusterv1.ClusterClassStatusVariable{{Name: "region", Definitions: []clusterv1.ClusterClassStatusVariableDefinition{
			{From: "inline", Required: true, Schema: stringSchema(nil)}}}}
		class.Status.Conditions = clusterv1.Conditions{{Type: "VariablesReconciled", Status: "True", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}}
		return class
	}, failures: []string{"failed to call DiscoverVariables for patch images: boom"}},
	{name: "an invalid class without extensions has no variables", class: func() *clusterv1.ClusterClass {
		class := sampleClass()
		class.Spec.Patches[0].Definitions[0].JSONPatches[0].Path = "/metadata/labels/region"
		return class
	}},
	{name: "the condition keeps its transition time", class: func() *clusterv1.ClusterClass {
		class := sampleClass()
		class.Status.ObservedGeneration = 2
		class.Status.Conditions = clusterv1.Conditions{{Type: "VariablesReconciled", Status: "True", LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}}
		return class
	}},
}

// TestClassStatusAsBefore: the status ReconcileClusterClassStatus writes on the hub, read in
// v1beta1 (conversion.ToV1Beta1 of the status apply, as the worker's client sends it to a server
// that serves only v1beta1), is what it wrote in v1beta1 before for the same class and answers
// (testdata/classstatus-v1beta1-before.json: recorded from ReconcileClusterClassStatus as it
// was at 40e459f, with the same clock), with one field more: status.v1beta2.conditions, where a
// v1beta1 client reads the VariablesReady condition Cluster API v1.14 writes. The apply stays
// partial: no spec, no other metadata.
func TestClassStatusAsBefore(t *testing.T) {
	js, err := os.ReadFile("testdata/classstatus-v1beta1-before.json")
	require.NoError(t, err)
	before := map[string]map[string]any{}
	require.NoError(t, json.Unmarshal(js, &before))
	require.Len(t, before, len(classStatusCases))
	for _, tc := range classStatusCases {
		t.Run(tc.name, func(t *testing.T) {
			class, err := conversion.ClusterClassToHub(tc.class())
			require.NoError(t, err)
			var discovered []variables.Discovered
			var failures []error
			for _, f := range tc.failures {
				failures = append(failures, errors.New(f))
			}
			for _, a := range tc.answers {
				d, err := discoveredOf(a.patch, a.vars)
				if err != nil {
					failures = append(failures, err)
					continue
				}
				discovered = append(discovered, d)
			}
			st := classStatus(class, discovered, failures, classStatusNow)
			obj, err := classStatusObject(class, st)
			require.NoError(t, err)
			v1, err := conversion.ToV1Beta1(obj, nil)
			require.NoError(t, err)
			// Sent to v1beta1 without the conversion data (kube.Client.toWire).
			ann := v1.GetAnnotations()
			assert.Contains(t, ann, conversion.DataAnnotation)
			delete(ann, conversion.DataAnnotation)
			assert.Empty(t, ann)
			unstructured.RemoveNestedField(v1.Object, "metadata", "annotations")
			assert.Equal(t, "cluster.x-k8s.io/v1beta1", v1.GetAPIVersion())
			assert.Equal(t, map[string]any{"name": "quick-start", "namespace": "default"}, v1.Object["metadata"])
			assert.NotContains(t, v1.Object, "spec")

			var got map[string]any
			js, err := json.Marshal(v1.Object["status"])
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(js, &got))
			want := before[tc.name]
			require.NotNil(t, want, "recorded before")
			// VariablesReady says what VariablesReconciled says, with Cluster API's v1beta2 reason.
			was := want["conditions"].([]any)[0].(map[string]any)
			ready := map[string]any{"type": "VariablesReady", "status": was["status"], "reason": "VariablesReady", "message": "",
				"observedGeneration": float64(3), "lastTransitionTime": "2026-11-28T01:02:03Z"}
			if was["status"] == "False" {
				ready["reason"], ready["message"] = "VariableDiscoveryFailed", was["message"]
			}
			assert.Equal(t, map[string]any{"conditions": []any{ready}}, got["v1beta2"])
			delete(got, "v1beta2")
			// Two spellings of the same v1beta1 values: a definition's metadata, empty, was written
			// as {} and is now left out (v1beta2 has no deprecatedV1Beta1Metadata to convert); a
			// variable's definitionsConflict, false, was left out (a v1beta1 bool, omitempty) and
			// is now written, as Cluster API v1.14 writes it on the hub (ptr.To(false)), for the
			// variables computed (those kept from before a failed discovery stay as read).
			for _, v := range variablesOf(got) {
				if len(tc.failures) == 0 {
					assert.Contains(t, v, "definitionsConflict", "every variable computed says whether its definitions conflict")
				}
				if v["definitionsConflict"] == false {
					delete(v, "definitionsConflict")
				}
			}
			for _, v := range variablesOf(want) {
				for _, d := range v["definitions"].([]any) {
					if m, ok := d.(map[string]any)["metadata"].(map[string]any); ok && len(m) == 0 {
						delete(d.(map[string]any), "metadata")
					}
				}
			}
			assert.Equal(t, want, got)

			// Read back, on the hub from either version, the status holds: nothing is written
			// again until something changes.
			later := classStatusNow.Add(time.Hour)
			class.Status = st
			assert.True(t, classStatusHolds(class, classStatus(class, discovered, failures, later)), "read back from v1beta2")
			hub, _, err := conversion.ToV1Beta2(v1)
			require.NoError(t, err)
			readBack := &hubv1.ClusterClass{}
			require.NoError(t, runtime.DefaultUnstructuredConverter.FromUnstructured(hub.Object, readBack))
			class.Status = readBack.Status
			assert.True(t, classStatusHolds(class, classStatus(class, discovered, failures, later)), "read back from v1beta1")
		})
	}
}

// variablesOf are the status variables of a v1beta1 status.
func variablesOf(st map[string]any) []map[string]any {
	var out []map[string]any
	vs, _ := st["variables"].([]any)
	for _, v := range vs {
		out = append(out, v.(map[string]any))
	}
	return out
}

// TestClassOwned_reconcileExternal: a template of the class gets the class as owner as Cluster
// API v1.14.2's ClusterClass controller sets it (core/reconcilers/clusterclass reconcileExternal:
// util.HasExactOwnerRef with a cluster.x-k8s.io/v1beta2 reference, else
// controllerutil.SetOwnerReference, which replaces a reference to the same group, kind and name),
// in the version the API server serves ClusterClasses in.
func TestClassOwned_reconcileExternal(t *testing.T) {
	class := &hubv1.ClusterClass{}
	class.Name, class.UID = "quick-start", "uid-1"
	want := metav1.OwnerReference{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "ClusterClass", Name: "quick-start", UID: "uid-1"}
	other := metav1.OwnerReference{APIVersion: "example.io/v1", Kind: "Thing", Name: "x", UID: "uid-9"}
	yes := true
	tests := []struct {
		name        string
		owners      []metav1.OwnerReference
		wantOwners  []metav1.OwnerReference
		wantChanged bool
	}{
		{"none: added", nil, []metav1.OwnerReference{want}, true},
		{"other owners kept, the class added", []metav1.OwnerReference{other}, []metav1.OwnerReference{other, want}, true},
		{"already exactly: unchanged", []metav1.OwnerReference{other, want}, []metav1.OwnerReference{other, want}, false},
		{"a v1beta1 reference is replaced", []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "ClusterClass", Name: "quick-start", UID: "uid-1"}, other},
			[]metav1.OwnerReference{want, other}, true},
		{"a class of the same name recreated (new uid) is replaced", []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "ClusterClass", Name: "quick-start", UID: "old"}},
			[]metav1.OwnerReference{want}, true},
		{"as controller it is not exact: replaced by the plain reference", []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "ClusterClass", Name: "quick-start", UID: "uid-1", Controller: &yes}},
			[]metav1.OwnerReference{want}, true},
		{"another class is another owner", []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "ClusterClass", Name: "other", UID: "uid-2"}},
			[]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "ClusterClass", Name: "other", UID: "uid-2"}, want}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.owners)
			got, changed := classOwned(tc.owners, class, "cluster.x-k8s.io/v1beta2")
			assert.Equal(t, tc.wantOwners, got)
			assert.Equal(t, tc.wantChanged, changed)
			assert.Equal(t, before, tc.owners, "the template's references are not changed in place")
		})
	}
	// Where only v1beta1 is served, the reference is v1beta1 (and a v1beta2 one is replaced).
	got, changed := classOwned([]metav1.OwnerReference{want}, class, "cluster.x-k8s.io/v1beta1")
	assert.True(t, changed)
	assert.Equal(t, []metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "ClusterClass", Name: "quick-start", UID: "uid-1"}}, got)
}
