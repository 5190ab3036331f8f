package ssa

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOwnedThenOver: what a manager's last apply set is read back from the live object at its
// live values (another manager's field, a defaulted one, the status left out; an associative
// list's entries by key), and a new change merged over it keeps it all but what the change
// names. Applied as it is, the new change removes nothing the manager applied before.
func TestOwnedThenOver(t *testing.T) {
	tc := widgetTypes(t)
	l := owned(obj(t, live), "rollout", "", metav1.ManagedFieldsOperationApply,
		`{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:replicas":{},"f:pools":{"k:{\"name\":\"p1\"}":{".":{},"f:name":{},"f:size":{}}}}}`)
	got, version, err := Owned(tc, l, "rollout")
	require.NoError(t, err)
	assert.Equal(t, "example.io/v1", version)
	js, _ := json.Marshal(got.Object)
	assert.JSONEq(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
		"spec":{"replicas":3,"pools":[{"name":"p1","size":2}]}}`, string(js), "what the manager set, at its live values")

	change := obj(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"},
		"spec":{"paused":true,"pools":[{"name":"p1","size":4},{"name":"p3","size":1}]}}`)
	merged, err := Over(tc, got, change)
	require.NoError(t, err)
	js, _ = json.Marshal(merged.Object)
	assert.JSONEq(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
		"spec":{"replicas":3,"paused":true,"pools":[{"name":"p1","size":4},{"name":"p3","size":1}]}}`, string(js),
		"the change wins where it names a field; the rest the manager set stays named")

	none, version, err := Owned(tc, obj(t, live), "rollout")
	require.NoError(t, err)
	assert.Nil(t, none, "no record: nothing owned")
	assert.Empty(t, version)

	other := inVersion(owned(obj(t, live), "rollout", "", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:replicas":{}}}`), "example.io/v0")
	none, version, err = Owned(tc, other, "rollout")
	require.NoError(t, err)
	assert.Nil(t, none, "a record made in another version names its fields there: read the object in that version")
	assert.Equal(t, "example.io/v0", version)

	update := owned(obj(t, live), "rollout", "", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:replicas":{}}}`)
	none, _, err = Owned(tc, update, "rollout")
	require.NoError(t, err)
	assert.Nil(t, none, "an update is not an apply: nothing of it is pruned")
}
