package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReplicaFacts: the facts digested for Provisioning.Counters are what the v1beta2 counters,
// versions and conditions are computed from; a status write that changes something else (the
// observed generation, the phase) leaves them as they were.
func TestReplicaFacts(t *testing.T) {
	md := func(ready int64, phase string, generation int64) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"kind": "MachineDeployment", "metadata": map[string]any{"name": "md-0"},
			"spec": map[string]any{"replicas": int64(2)},
			"status": map[string]any{"replicas": int64(2), "readyReplicas": ready, "phase": phase, "observedGeneration": generation,
				"v1beta2": map[string]any{"availableReplicas": ready}},
		}}
	}
	assert.Equal(t, map[string]any{"kind": "MachineDeployment", "name": "md-0", "spec.replicas": int64(2), "replicas": int64(2),
		"readyReplicas": int64(1), "v1beta2": map[string]any{"availableReplicas": int64(1)}}, replicaFacts(md(1, "ScalingUp", 1)))
	assert.Equal(t, replicaFacts(md(2, "ScalingUp", 1)), replicaFacts(md(2, "Running", 2)), "phase and observed generation do not count")
	assert.NotEqual(t, replicaFacts(md(1, "Running", 2)), replicaFacts(md(2, "Running", 2)), "a counter does")
	assert.Nil(t, replicaFacts(nil), "an object not there")
}
