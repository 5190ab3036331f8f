package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
)

// TestClassStatusHolds: the ClusterClass status is written only when it would change, so a class
// whose status Cluster API's ClusterClass controller wrote is left as it is after a takeover.
func TestClassStatusHolds(t *testing.T) {
	vars := []clusterv1.ClusterClassStatusVariable{{Name: "region"}}
	class := func(gen, observed int64, v []clusterv1.ClusterClassStatusVariable, conds ...clusterv1.Condition) *clusterv1.ClusterClass {
		c := &clusterv1.ClusterClass{}
		c.Generation, c.Status.ObservedGeneration, c.Status.Variables, c.Status.Conditions = gen, observed, v, conds
		return c
	}
	ok := clusterv1.Condition{Type: "VariablesReconciled", Status: "True"}
	failed := clusterv1.Condition{Type: "VariablesReconciled", Status: "False", Reason: "VariableDiscoveryFailed", Severity: "Error", Message: "boom"}
	wantOK := map[string]any{"type": "VariablesReconciled", "status": "True"}
	wantFailed := map[string]any{"type": "VariablesReconciled", "status": "False", "reason": "VariableDiscoveryFailed", "severity": "Error", "message": "boom"}
	for _, tc := range []struct {
		name  string
		class *clusterv1.ClusterClass
		vars  []clusterv1.ClusterClassStatusVariable
		cond  map[string]any
		holds bool
	}{
		{"the same status", class(2, 2, vars, ok), vars, wantOK, true},
		{"the same failure", class(2, 2, vars, failed), vars, wantFailed, true},
		{"no variables either way", class(2, 2, nil, ok), []clusterv1.ClusterClassStatusVariable{}, wantOK, true},
		{"a newer generation", class(3, 2, vars, ok), vars, wantOK, false},
		{"other variables", class(2, 2, vars, ok), []clusterv1.ClusterClassStatusVariable{{Name: "zone"}}, wantOK, false},
		{"no condition yet", class(2, 2, vars), vars, wantOK, false},
		{"the condition turns", class(2, 2, vars, ok), vars, wantFailed, false},
		{"another message", class(2, 2, vars, failed), vars, map[string]any{"type": "VariablesReconciled", "status": "False", "reason": "VariableDiscoveryFailed", "severity": "Error", "message": "other"}, false},
	} {
		assert.Equal(t, tc.holds, classStatusHolds(tc.class, tc.vars, tc.cond), tc.name)
	}
}
