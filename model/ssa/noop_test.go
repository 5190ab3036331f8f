package ssa

import (
	"encoding/json"
	"os"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func widgetTypes(t *testing.T) TypeConverter {
	t.Helper()
	raw, err := os.ReadFile("testdata/widget-schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*spec.Schema{}
	if err := json.Unmarshal(raw, &schemas); err != nil {
		t.Fatal(err)
	}
	tc, err := managedfields.NewTypeConverter(schemas, false)
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

func obj(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	return u
}

// owned gives live a managedFields entry for manager; fields is FieldsV1 JSON.
func owned(u *unstructured.Unstructured, manager, subresource string, op metav1.ManagedFieldsOperationType, fields string) *unstructured.Unstructured {
	mfs := append(u.GetManagedFields(), metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, Subresource: subresource, APIVersion: "example.io/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)},
	})
	u.SetManagedFields(mfs)
	return u
}

// inVersion sets the API version of the last managedFields record.
func inVersion(u *unstructured.Unstructured, apiVersion string) *unstructured.Unstructured {
	mfs := u.GetManagedFields()
	mfs[len(mfs)-1].APIVersion = apiVersion
	u.SetManagedFields(mfs)
	return u
}

func withUID(u *unstructured.Unstructured, uid string) *unstructured.Unstructured {
	u.SetUID(types.UID(uid))
	return u
}

const (
	intent = `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
		"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`
	// What capi-topology owns after applying intent (as the API server records it).
	intentFields = `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:replicas":{},"f:tags":{},
		"f:pools":{"k:{\"name\":\"p1\"}":{".":{},"f:name":{},"f:size":{}},"k:{\"name\":\"p2\"}":{".":{},"f:name":{},"f:size":{}}}}}`
	// The live object: the intent, a field another manager set, a defaulted one, and status.
	live = `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","resourceVersion":"42","labels":{"a":"1","other":"z"}},
		"spec":{"replicas":3,"paused":false,"tags":["x","y"],"pools":[{"name":"p1","size":2,"zone":"z1"},{"name":"p2","size":5}]},
		"status":{"ready":true}}`
)

// TestUnchanged covers the decision the worker uses to skip applies; each "false" row is a case
// where the API server would have changed the object (or where there is no record to trust).
func TestUnchanged(t *testing.T) {
	tc := widgetTypes(t)
	apply := metav1.ManagedFieldsOperationApply
	tests := []struct {
		name   string
		intent string
		live   *unstructured.Unstructured
		want   bool
	}{
		{"same intent, other managers' and defaulted fields ignored", intent,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), true},
		{"no record of the manager", intent, obj(t, live), false},
		{"no record, and an intent that sets nothing", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"}}`, obj(t, live), true},
		{"a record, and an intent that sets nothing (the apply would release the fields)", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"the manager's record is an update, not an apply", intent,
			owned(obj(t, live), "capi-topology", "", metav1.ManagedFieldsOperationUpdate, intentFields), false},
		{"the record is for the status subresource", intent,
			owned(obj(t, live), "capi-topology", "status", apply, intentFields), false},
		{"another manager's record", intent,
			owned(obj(t, live), "kubectl", "", apply, intentFields), false},
		{"the record was made in another API version (the apply rewrites it: a takeover from Cluster API v1.11+, which applies v1beta2)", intent,
			inVersion(owned(obj(t, live), "capi-topology", "", apply, intentFields), "example.io/v2"), false},
		{"a value differs", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
			"spec":{"replicas":4,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"a keyed list item's value differs", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":6}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"an atomic list differs", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["y","x"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"the intent drops an owned field (the apply would remove it)", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"the intent adds a field", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1","b":"2"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"the intent sets a field another manager holds with the same value", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2,"zone":"z1"},{"name":"p2","size":5}]}}`,
			owned(obj(t, live), "capi-topology", "", apply, intentFields), false},
		{"the intent carries the live object's uid (an update of it)", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"u1","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`,
			owned(withUID(obj(t, live), "u1"), "capi-topology", "", apply, intentFields), true},
		{"the intent was computed from another object of that name (the API server refuses it)", `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","uid":"u0","labels":{"a":"1"}},
			"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`,
			owned(withUID(obj(t, live), "u1"), "capi-topology", "", apply, intentFields), false},
		{"the object is being deleted", intent,
			owned(obj(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","deletionTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"1"}},
				"spec":{"replicas":3,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`), "capi-topology", "", apply, intentFields), false},
		{"someone else changed an owned value (ownership moved)", intent,
			owned(owned(obj(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns","labels":{"a":"1"}},
				"spec":{"replicas":7,"tags":["x","y"],"pools":[{"name":"p1","size":2},{"name":"p2","size":5}]}}`),
				"capi-topology", "", apply, `{"f:metadata":{"f:labels":{"f:a":{}}},"f:spec":{"f:tags":{},
				"f:pools":{"k:{\"name\":\"p1\"}":{".":{},"f:name":{},"f:size":{}},"k:{\"name\":\"p2\"}":{".":{},"f:name":{},"f:size":{}}}}}`),
				"kubectl-edit", "", metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:replicas":{}}}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unchanged(tc, obj(t, tt.intent), tt.live, "capi-topology", "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Unchanged = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestUnchangedStatus: a status apply is compared with the status subresource's record.
func TestUnchangedStatus(t *testing.T) {
	tc := widgetTypes(t)
	in := obj(t, `{"apiVersion":"example.io/v1","kind":"Widget","metadata":{"name":"w","namespace":"ns"},"status":{"ready":true}}`)
	l := owned(obj(t, live), "topoflow", "status", metav1.ManagedFieldsOperationApply, `{"f:status":{"f:ready":{}}}`)
	if got, err := Unchanged(tc, in, l, "topoflow", "status"); err != nil || !got {
		t.Fatalf("Unchanged = %v, %v; want true", got, err)
	}
	in.Object["status"] = map[string]any{"ready": false}
	if got, err := Unchanged(tc, in, l, "topoflow", "status"); err != nil || got {
		t.Fatalf("Unchanged with a new value = %v, %v; want false", got, err)
	}
}
