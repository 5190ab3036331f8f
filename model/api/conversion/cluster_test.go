package conversion

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/deploy/samples"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

var update = flag.Bool("update", false, "rewrite golden files")

// provisioned is the sample Cluster as topoflow reads it once it runs: references, endpoint,
// readiness and conditions of both generations.
func provisioned(t *testing.T) *clusterv1.Cluster {
	t.Helper()
	_, c, err := samples.Typed()
	if err != nil {
		t.Fatal(err)
	}
	c.UID = "3f1c2b9e-0000-4000-8000-000000000001"
	c.Generation = 2
	c.Spec.InfrastructureRef = &corev1.ObjectReference{APIVersion: "infrastructure.cluster.x-k8s.io/v1beta1", Kind: "SimCluster", Name: "demo-abcde", Namespace: "default"}
	c.Spec.ControlPlaneRef = &corev1.ObjectReference{APIVersion: "controlplane.cluster.x-k8s.io/v1beta1", Kind: "SimControlPlane", Name: "demo-fghij", Namespace: "default"}
	c.Spec.ControlPlaneEndpoint = clusterv1.APIEndpoint{Host: "10.0.0.1", Port: 6443}
	c.Status.Phase = "Provisioned"
	c.Status.InfrastructureReady = true
	c.Status.ControlPlaneReady = true
	c.Status.ObservedGeneration = 2
	c.Status.Conditions = clusterv1.Conditions{{Type: "Ready", Status: corev1.ConditionTrue, LastTransitionTime: metav1.Unix(1700000000, 0).Rfc3339Copy()}}
	c.Status.V1Beta2 = &clusterv1.ClusterV1Beta2Status{Conditions: []metav1.Condition{{
		Type: "TopologyReconciled", Status: metav1.ConditionTrue, Reason: "ReconcileSucceeded", LastTransitionTime: metav1.Unix(1700000000, 0).Rfc3339Copy(),
	}}}
	return c
}

func convert(t *testing.T, c *clusterv1.Cluster) *unstructured.Unstructured {
	t.Helper()
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ClusterV1Beta2(js)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: out}
}

// The v1beta2 Cluster of a provisioned sample, field by field as Cluster API's conversion webhook
// (core/webhooks/conversion.ConvertClusterV1Beta1ToHub) serves it.
func TestClusterV1Beta2(t *testing.T) {
	u := convert(t, provisioned(t))
	for _, tc := range []struct {
		path []string
		want any
	}{
		{[]string{"apiVersion"}, "cluster.x-k8s.io/v1beta2"},
		{[]string{"kind"}, "Cluster"},
		{[]string{"spec", "topology", "classRef", "name"}, "quick-start"},
		{[]string{"spec", "topology", "version"}, "v1.31.2"},
		{[]string{"spec", "infrastructureRef", "apiGroup"}, "infrastructure.cluster.x-k8s.io"},
		{[]string{"spec", "infrastructureRef", "kind"}, "SimCluster"},
		{[]string{"spec", "infrastructureRef", "name"}, "demo-abcde"},
		{[]string{"spec", "controlPlaneRef", "apiGroup"}, "controlplane.cluster.x-k8s.io"},
		{[]string{"spec", "controlPlaneRef", "name"}, "demo-fghij"},
		{[]string{"spec", "controlPlaneEndpoint", "host"}, "10.0.0.1"},
		{[]string{"status", "initialization", "infrastructureProvisioned"}, true},
		{[]string{"status", "initialization", "controlPlaneInitialized"}, true},
		{[]string{"status", "phase"}, "Provisioned"},
		{[]string{"status", "conditions"}, []any{map[string]any{
			"type": "TopologyReconciled", "status": "True", "reason": "ReconcileSucceeded", "lastTransitionTime": "2023-11-14T22:13:20Z", "message": "",
		}}},
	} {
		got, found, err := unstructured.NestedFieldNoCopy(u.Object, tc.path...)
		if err != nil || !found {
			t.Errorf("%v: not found (%v)", tc.path, err)
			continue
		}
		if g, w := mustJSON(t, got), mustJSON(t, tc.want); g != w {
			t.Errorf("%v = %s, want %s", tc.path, g, w)
		}
	}
	for _, absent := range [][]string{
		{"spec", "topology", "class"},               // v1beta1 only
		{"spec", "infrastructureRef", "apiVersion"}, // a contract reference names no version
		{"spec", "paused"},                          // false and not known to be written: unset
		{"status", "infrastructureReady"},
	} {
		if _, found, _ := unstructured.NestedFieldNoCopy(u.Object, absent...); found {
			t.Errorf("%v is set, want it absent", absent)
		}
	}
	mds, _, _ := unstructured.NestedSlice(u.Object, "spec", "topology", "workers", "machineDeployments")
	if len(mds) != 2 || mds[1].(map[string]any)["class"] != "default-worker" || mds[1].(map[string]any)["name"] != "md-1" {
		t.Errorf("machineDeployments = %v", mds)
	}
	old, _, _ := unstructured.NestedSlice(u.Object, "status", "deprecated", "v1beta1", "conditions")
	if len(old) != 1 || old[0].(map[string]any)["type"] != "Ready" {
		t.Errorf("status.deprecated.v1beta1.conditions = %v, want the v1beta1 Ready condition", old)
	}

	golden := filepath.Join("testdata", "cluster-v1beta2.json")
	got, err := json.MarshalIndent(u.Object, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("v1beta2 Cluster differs from %s (run with -update after checking):\n%s", golden, got)
	}
}

// A false written as such in v1beta2 survives the trip through v1beta1 when Cluster API's
// conversion data says so, and the annotation that carried it is not passed on.
func TestClusterV1Beta2RestoresFromConversionData(t *testing.T) {
	c := provisioned(t)
	c.Status.InfrastructureReady = false
	c.Annotations = map[string]string{
		DataAnnotation: `{"spec":{"paused":false},"status":{"initialization":{"infrastructureProvisioned":false}}}`,
		"keep":         "me",
	}
	u := convert(t, c)
	if v, found, _ := unstructured.NestedBool(u.Object, "spec", "paused"); !found || v {
		t.Errorf("spec.paused = %v (found %v), want false", v, found)
	}
	if v, found, _ := unstructured.NestedBool(u.Object, "status", "initialization", "infrastructureProvisioned"); !found || v {
		t.Errorf("infrastructureProvisioned = %v (found %v), want false", v, found)
	}
	if got := u.GetAnnotations(); len(got) != 1 || got["keep"] != "me" {
		t.Errorf("annotations = %v, want only keep=me", got)
	}

	c.Annotations = map[string]string{DataAnnotation: "{not json"}
	js, _ := json.Marshal(c)
	if _, err := ClusterV1Beta2(js); err == nil {
		t.Error("broken conversion data accepted")
	}
}

func TestClusterV1Beta2RefusesBadReference(t *testing.T) {
	c := provisioned(t)
	c.Spec.InfrastructureRef.APIVersion = "a/b/c"
	js, _ := json.Marshal(c)
	if _, err := ClusterV1Beta2(js); err == nil || !bytes.Contains([]byte(err.Error()), []byte("spec.infrastructureRef")) {
		t.Errorf("err = %v, want one naming spec.infrastructureRef", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}
