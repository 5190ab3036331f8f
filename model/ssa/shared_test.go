package ssa

import (
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func entry(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func TestSharedFields(t *testing.T) {
	ours := func(m string) bool { return m == "capi-topology" || m == "topoflow" }
	tests := []struct {
		name string
		mfs  []metav1.ManagedFieldsEntry
		want []string
	}{
		{"apart", []metav1.ManagedFieldsEntry{
			entry("capi-topology", `{"f:spec":{"f:version":{}}}`),
			entry("capi-core", `{"f:spec":{"f:paused":{}}}`),
		}, nil},
		{"entries of one map are not shared", []metav1.ManagedFieldsEntry{
			entry("capi-topology", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`),
			entry("capi-core", `{"f:metadata":{"f:labels":{".":{},"f:b":{}}}}`),
		}, nil},
		{"items of a keyed list are not shared", []metav1.ManagedFieldsEntry{
			entry("topoflow", `{"f:status":{"f:conditions":{"k:{\"type\":\"TopologyReconciled\"}":{".":{},"f:status":{}}}}}`),
			entry("capi-core", `{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{".":{},"f:status":{}}}}}`),
		}, nil},
		{"one field, two owners", []metav1.ManagedFieldsEntry{
			entry("capi-topology", `{"f:spec":{"f:version":{},"f:replicas":{}}}`),
			entry("capi-core", `{"f:spec":{"f:replicas":{}}}`),
			entry("topoflow", `{"f:status":{"f:phase":{}}}`),
			entry("capi-core", `{"f:status":{"f:phase":{}}}`),
		}, []string{".spec.replicas", ".status.phase"}},
		{"between our own managers is not a fight", []metav1.ManagedFieldsEntry{
			entry("capi-topology", `{"f:spec":{"f:version":{}}}`),
			entry("topoflow", `{"f:spec":{"f:version":{}}}`),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SharedFields(tt.mfs, ours)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SharedFields = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := SharedFields([]metav1.ManagedFieldsEntry{entry("x", `{"f:spec":`)}, ours); err == nil || !strings.Contains(err.Error(), "managedFields of x") {
		t.Errorf("a broken record: err = %v", err)
	}
}
