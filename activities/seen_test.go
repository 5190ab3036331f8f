package activities

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestMergeSeen(t *testing.T) {
	ref := func(name, rv string) corev1.ObjectReference {
		return corev1.ObjectReference{APIVersion: "cluster.x-k8s.io/v1beta1", Kind: "Cluster", Namespace: "ns", Name: name, ResourceVersion: rv}
	}
	got := MergeSeen(nil, ref("a", "5"), ref("b", "3"))
	got = MergeSeen(got, ref("a", "4"), ref("b", "9"))
	if len(got) != 2 || got[0].ResourceVersion != "5" || got[1].ResourceVersion != "9" {
		t.Fatalf("merged %v: want one entry per object, the newer version", got)
	}
	for i := range 40 {
		got = MergeSeen(got, ref(fmt.Sprint("x", i), "1"))
	}
	if len(got) != maxSeen || got[len(got)-1].Name != "x39" {
		t.Fatalf("bounded list has %d entries ending at %s", len(got), got[len(got)-1].Name)
	}
}
