package desired

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

func intentOf(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// TestUIDsStamp: an intent for an object the pass read carries that object's uid (Cluster API's
// structuredmerge.NewServerSidePatchHelper does the same), anything else carries none, so only
// objects that did not exist are created.
func TestUIDsStamp(t *testing.T) {
	var noCluster *clusterv1.Cluster
	read := &unstructured.Unstructured{}
	read.SetKind("SimCluster")
	read.SetNamespace("ns")
	read.SetName("c1-abcde")
	read.SetUID("u-infra")
	uids := UIDs{}
	uids.Add("SimCluster", read)
	uids.Add("Cluster", &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1", UID: "u-cluster"}})
	uids.Add("MachineDeployment", &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1-md"}}) // no uid: not stored
	uids.Add("Cluster", noCluster)                                                                                             // typed nil
	uids.Add("SimCluster", nil)

	tests := []struct {
		name   string
		intent *unstructured.Unstructured
		want   types.UID
	}{
		{"object read", intentOf("SimCluster", "ns", "c1-abcde"), "u-infra"},
		{"typed object read", intentOf("Cluster", "ns", "c1"), "u-cluster"},
		{"same name, other kind", intentOf("SimMachineTemplate", "ns", "c1-abcde"), ""},
		{"same name, other namespace", intentOf("SimCluster", "other", "c1-abcde"), ""},
		{"object read without uid", intentOf("MachineDeployment", "ns", "c1-md"), ""},
		{"new object", intentOf("MachineDeployment", "ns", "c1-md-2"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.intent.SetUID("stale") // Stamp decides alone: whatever the intent held is replaced
			uids.Stamp(tt.intent)
			if got := tt.intent.GetUID(); got != tt.want {
				t.Errorf("uid = %q, want %q", got, tt.want)
			}
		})
	}
	if len(uids) != 2 {
		t.Errorf("UIDs holds %d entries, want 2 (nil and uid-less objects skipped): %v", len(uids), uids)
	}
}

// TestInServedVersion: the pools and their health checks are computed as the v1beta2 objects
// Cluster API v1.14's own topology controller applies (its computeMachineDeployment and
// computeMachineHealthCheck build v1beta2 types): where v1beta2 is served they go out as computed
// (references as contract references, the same labels, owner references and uid); where v1beta1
// is served, as Cluster API's conversion serves them in v1beta1, references at the versions of the
// state's objects, or at the current pool's where group and kind agree. Everything else goes out
// as computed.
func TestInServedVersion(t *testing.T) {
	const v1beta2 = "cluster.x-k8s.io/v1beta2"
	in := sample(t)
	in.ClusterAPIVersion = v1beta2
	s, err := Compute(in)
	require.NoError(t, err)
	require.NotEmpty(t, s.MachineDeployments)
	md := s.MachineDeployments[0]
	objs, err := md.allObjects()
	require.NoError(t, err)
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byKind[o.GetKind()] = o
	}

	intent := byKind["MachineDeployment"]
	intent.SetUID("md-uid")
	out, err := s.InServedVersion(intent, v1beta2)
	require.NoError(t, err)
	assert.Equal(t, v1beta2, out.GetAPIVersion())
	assert.Equal(t, types.UID("md-uid"), out.GetUID())
	assert.Equal(t, intent.GetLabels(), out.GetLabels())
	assert.Equal(t, intent.GetName(), out.GetName())
	assert.NotContains(t, out.Object, "status")
	ref, _, _ := unstructured.NestedMap(out.Object, "spec", "template", "spec", "bootstrap", "configRef")
	assert.Equal(t, map[string]any{"apiGroup": "bootstrap.cluster.x-k8s.io", "kind": md.BootstrapTemplate.GetKind(), "name": md.BootstrapTemplate.GetName()}, ref)
	infra, _, _ := unstructured.NestedMap(out.Object, "spec", "template", "spec", "infrastructureRef")
	assert.Equal(t, md.InfraTemplate.GetKind(), infra["kind"])
	assert.Equal(t, md.InfraTemplate.GetName(), infra["name"])
	assert.NotContains(t, infra, "apiVersion")
	version, _, _ := unstructured.NestedString(out.Object, "spec", "template", "spec", "version")
	assert.Equal(t, md.Object.Spec.Template.Spec.Version, version)
	_, hasTimestamp, _ := unstructured.NestedFieldNoCopy(out.Object, "metadata", "creationTimestamp")
	assert.False(t, hasTimestamp, "no server-set metadata in the intent")

	if mhc := byKind["MachineHealthCheck"]; mhc != nil {
		out, err := s.InServedVersion(mhc, v1beta2)
		require.NoError(t, err)
		assert.Equal(t, v1beta2, out.GetAPIVersion())
		assert.Equal(t, mhc.GetOwnerReferences(), out.GetOwnerReferences())
		checks, _, _ := unstructured.NestedMap(out.Object, "spec", "checks")
		assert.NotEmpty(t, checks, "v1beta2 keeps the conditions under spec.checks")

		old, err := s.InServedVersion(mhc, "")
		require.NoError(t, err)
		assert.Equal(t, "cluster.x-k8s.io/v1beta1", old.GetAPIVersion())
		conds, _, _ := unstructured.NestedSlice(old.Object, "spec", "unhealthyConditions")
		assert.NotEmpty(t, conds, "v1beta1 holds the conditions under spec.unhealthyConditions")
	}

	// Where v1beta1 is served: the v1beta1 MachineDeployment, its references at the templates'
	// versions, or at the current pool's version of the same group and kind.
	old, err := s.InServedVersion(intent, "")
	require.NoError(t, err)
	assert.Equal(t, "cluster.x-k8s.io/v1beta1", old.GetAPIVersion())
	assert.Equal(t, types.UID("md-uid"), old.GetUID())
	ref, _, _ = unstructured.NestedMap(old.Object, "spec", "template", "spec", "bootstrap", "configRef")
	assert.Equal(t, md.BootstrapTemplate.GetAPIVersion(), ref["apiVersion"])
	assert.Equal(t, md.BootstrapTemplate.GetName(), ref["name"])
	oldVersion, _, _ := unstructured.NestedString(old.Object, "spec", "template", "spec", "version")
	assert.Equal(t, md.Object.Spec.Template.Spec.Version, oldVersion)
	s.refVersions = RefVersions{}
	s.refVersions.Add("MachineDeployment", intent.GetName(),
		&corev1.ObjectReference{APIVersion: "bootstrap.cluster.x-k8s.io/v1alpha9", Kind: md.BootstrapTemplate.GetKind()},
		&corev1.ObjectReference{APIVersion: "infra.example.com/v1", Kind: md.InfraTemplate.GetKind()})
	old, err = s.InServedVersion(intent, "")
	require.NoError(t, err)
	ref, _, _ = unstructured.NestedMap(old.Object, "spec", "template", "spec", "bootstrap", "configRef")
	assert.Equal(t, "bootstrap.cluster.x-k8s.io/v1alpha9", ref["apiVersion"], "the current pool's version of the same group and kind")
	infra, _, _ = unstructured.NestedMap(old.Object, "spec", "template", "spec", "infrastructureRef")
	assert.Equal(t, md.InfraTemplate.GetAPIVersion(), infra["apiVersion"], "another group: the template's version")

	for _, tc := range []struct {
		name    string
		obj     *unstructured.Unstructured
		version string
	}{
		{"a template", md.BootstrapTemplate, v1beta2},
		{"a template where v1beta1 is served", md.BootstrapTemplate, ""},
		{"the Cluster's intent", s.Cluster, v1beta2},
	} {
		got, err := s.InServedVersion(tc.obj, tc.version)
		require.NoError(t, err, tc.name)
		assert.Same(t, tc.obj, got, tc.name)
	}
}
