package topology

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
)

// TestUnobserved: an update wakes the Cluster's workflow only when it changes what a pass reads.
// The status facts are those of the reads the pass makes: contract.ReadInfraCluster and
// ReadControlPlane for provider objects (v1beta1 and v1beta2 contracts), upgrade.ObservedPool
// for MachineDeployments and MachinePools.
func TestUnobserved(t *testing.T) {
	infra := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1", "kind": "DockerCluster",
			"metadata": map[string]any{"name": "c1", "namespace": "ns", "generation": int64(1),
				"labels": map[string]any{"cluster.x-k8s.io/cluster-name": "c1"}},
			"spec": map[string]any{},
		}}
	}
	cp := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
			"metadata": map[string]any{"name": "c1-cp", "namespace": "ns", "generation": int64(1)},
			"spec":     map[string]any{"replicas": int64(3), "version": "v1.31.2"},
			"status": map[string]any{"initialization": map[string]any{"controlPlaneInitialized": true},
				"replicas": int64(3), "upToDateReplicas": int64(3), "availableReplicas": int64(2), "readyReplicas": int64(2),
				"version": "v1.31.2", "observedGeneration": int64(1)},
		}}
	}
	md := func() *unstructured.Unstructured {
		return (&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachineDeployment",
			"metadata": map[string]any{"name": "c1-md-0", "namespace": "ns", "generation": int64(2)},
			"spec": map[string]any{"clusterName": "c1", "replicas": int64(2),
				"template": map[string]any{"spec": map[string]any{"clusterName": "c1", "version": "v1.31.2"}}},
			"status": map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
				"readyReplicas": int64(1), "unavailableReplicas": int64(1)},
		}})
	}
	mp := func() *unstructured.Unstructured {
		return (&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "MachinePool",
			"metadata": map[string]any{"name": "c1-mp-0", "namespace": "ns", "generation": int64(1)},
			"spec": map[string]any{"clusterName": "c1", "replicas": int64(2),
				"template": map[string]any{"spec": map[string]any{"clusterName": "c1", "version": "v1.31.2"}}},
			"status": map[string]any{"observedGeneration": int64(1), "readyReplicas": int64(2), "phase": "Running"},
		}})
	}
	set := func(u *unstructured.Unstructured, v any, path ...string) *unstructured.Unstructured {
		if err := unstructured.SetNestedField(u.Object, v, path...); err != nil {
			t.Fatal(err)
		}
		return u
	}
	condition := []any{map[string]any{"type": "Ready", "status": "False", "reason": "Waiting"}}
	now := metav1.Now()

	tests := []struct {
		name       string
		old, cur   *unstructured.Unstructured
		unobserved bool
	}{
		{"a provider adds its finalizer", infra(), func() *unstructured.Unstructured {
			u := infra()
			u.SetFinalizers([]string{"dockercluster.infrastructure.cluster.x-k8s.io"})
			return u
		}(), true},
		{"a condition is set", infra(), set(infra(), condition, "status", "conditions"), true},
		{"not ready, said again", infra(), set(infra(), false, "status", "ready"), true},
		{"ready", infra(), set(infra(), true, "status", "ready"), false},
		{"the endpoint", infra(), set(infra(), map[string]any{"host": "h", "port": int64(6443)}, "spec", "controlPlaneEndpoint"), false},
		{"a failure", infra(), set(infra(), "quota exceeded", "status", "failureMessage"), false},
		{"a label", infra(), set(infra(), "x", "metadata", "labels", "team"), false},
		{"an annotation", infra(), set(infra(), "x", "metadata", "annotations", "note"), false},
		{"a new generation", infra(), set(infra(), int64(2), "metadata", "generation"), false},
		// Served as v1beta1, an object Cluster API stores as v1beta2 keeps the rest of it in an
		// annotation, status conditions included: a status write changes only that.
		{"Cluster API's conversion data (a v1beta2 condition)", set(md(), `{"status":{"conditions":[]}}`, "metadata", "annotations", conversion.DataAnnotation),
			set(md(), `{"status":{"conditions":[{"type":"Available"}]}}`, "metadata", "annotations", conversion.DataAnnotation), true},
		{"Cluster API's conversion data first written", md(), set(md(), `{"status":{}}`, "metadata", "annotations", conversion.DataAnnotation), true},
		{"an annotation beside the conversion data", set(md(), "{}", "metadata", "annotations", conversion.DataAnnotation),
			set(set(md(), "{}", "metadata", "annotations", conversion.DataAnnotation), "x", "metadata", "annotations", "note"), false},
		{"an owner", infra(), func() *unstructured.Unstructured {
			u := infra()
			u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Cluster", Name: "c1", UID: "u1"}})
			return u
		}(), false},
		{"deleting", infra(), func() *unstructured.Unstructured {
			u := infra()
			u.SetDeletionTimestamp(&now)
			return u
		}(), false},

		{"control plane: a condition", cp(), set(cp(), condition, "status", "conditions"), true},
		{"control plane: a replica becomes available", cp(), set(cp(), int64(3), "status", "availableReplicas"), false},
		{"control plane: a replica ready, still scaling", set(cp(), int64(1), "status", "readyReplicas"), cp(), true},
		{"control plane: scaled", set(cp(), int64(3), "status", "availableReplicas"),
			set(set(cp(), int64(3), "status", "availableReplicas"), int64(3), "status", "readyReplicas"), false},
		{"control plane: its version reached", set(cp(), "v1.31.1", "status", "version"), cp(), false},
		{"control plane: initialized (v1beta2 contract)", set(cp(), false, "status", "initialization", "controlPlaneInitialized"), cp(), false},

		{"MachineDeployment: a replica more, still converging", set(set(set(md(), int64(0), "status", "updatedReplicas"), int64(0), "status", "readyReplicas"), int64(2), "status", "unavailableReplicas"), md(), true},
		{"MachineDeployment: converged", md(), set(set(md(), int64(0), "status", "unavailableReplicas"), int64(2), "status", "updatedReplicas"), false},
		{"MachineDeployment: a condition", md(), set(md(), condition, "status", "conditions"), true},
		{"MachinePool: scaling up", mp(), set(mp(), "ScalingUp", "status", "phase"), false},
		{"MachinePool: a condition", mp(), set(mp(), condition, "status", "conditions"), true},
		{"MachinePool: a Node replaced", set(mp(), []any{map[string]any{"kind": "Node", "name": "n1"}}, "status", "nodeRefs"),
			set(mp(), []any{map[string]any{"kind": "Node", "name": "n2"}}, "status", "nodeRefs"), false},
		{"an object that cannot be read", infra(), set(infra(), int64(1), "status", "ready"), false},
	}
	// Pools are watched on the hub: written above as v1beta1, they are read as Cluster API's
	// conversion serves them in v1beta2.
	hub := func(u *unstructured.Unstructured) *unstructured.Unstructured {
		out, _, err := conversion.ToV1Beta2(u)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.unobserved, Unobserved(hub(tt.old), hub(tt.cur)))
		})
	}
	assert.False(t, Unobserved(md(), md()), "a v1beta1 pool is not read: it counts as changed")
}
