package activities

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
)

// maxSeen bounds the objects one event (and one pass) carries: the newest win.
const maxSeen = 32

// SeenObject names an object a watch event was about and the resourceVersion the event showed;
// a pass started by that event reads the object no older than that (kube.Client.AwaitSeen).
func SeenObject(u *unstructured.Unstructured) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), ResourceVersion: u.GetResourceVersion()}
}

// MergeSeen adds objects to a seen list, one entry per object with its newest resourceVersion,
// at most maxSeen entries (the most recently added kept).
func MergeSeen(list []corev1.ObjectReference, add ...corev1.ObjectReference) []corev1.ObjectReference {
	for _, a := range add {
		replaced := false
		for i := range list {
			l := &list[i]
			if l.APIVersion == a.APIVersion && l.Kind == a.Kind && l.Namespace == a.Namespace && l.Name == a.Name {
				if kube.ResourceVersionOf(a.ResourceVersion) >= kube.ResourceVersionOf(l.ResourceVersion) {
					*l = a
				}
				replaced = true
				break
			}
		}
		if !replaced {
			list = append(list, a)
		}
	}
	if len(list) > maxSeen {
		list = append(list[:0:0], list[len(list)-maxSeen:]...)
	}
	return list
}
