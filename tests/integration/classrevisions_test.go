//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
)

// TestClassRevisions runs the recording of ClusterClass revisions (issue #38) on a real stack: an
// opted-in class with two Clusters gets revision 1, both pinned to it; an edit of a template in
// place records revision 2, which a Cluster created afterwards is pinned to, while revision 1
// keeps its Clusters; with a history of 1, unused revisions beyond the newest go while those in
// use stay; deleting the class deletes its revisions. topoflow runs as the ServiceAccount of
// deploy/rbac: the rules shipped are enough for all of it.
func TestClassRevisions(t *testing.T) {
	e := newEnv(t, envOptions{kube: leastPrivilege(t)})
	e.applyFile(classFile, func(u *unstructured.Unstructured) {
		if u.GetKind() == "ClusterClass" {
			u.SetAnnotations(map[string]string{revision.EnabledAnnotation: revision.Enabled})
		}
	})
	e.createClusterNamed("rev-a")
	e.createClusterNamed("rev-b")

	e.waitRevision("quick-start-1", true, 2)
	e.waitPinned("quick-start-1", "rev-a", "rev-b")

	// A template edited in place: a new revision, the Clusters stay where they are.
	e.editWorkerMachine("sim.xlarge")
	e.waitRevision("quick-start-2", true, 0)
	e.waitRevision("quick-start-1", false, 2)
	rev2 := e.classRevision("quick-start-2")
	require.Len(t, rev2.Spec.Templates, 6)
	require.Contains(t, templateOf(t, rev2, "quick-start-default-worker-machine"), `"instanceType":"sim.xlarge"`)

	// A Cluster created now gets the newest revision.
	e.createClusterNamed("rev-c")
	e.waitPinned("quick-start-2", "rev-c")
	e.waitRevision("quick-start-2", true, 1)
	e.waitPinned("quick-start-1", "rev-a", "rev-b")

	// The hand-back's check names the two Clusters behind the newest revision, and only them.
	refusals, err := activities.New(kc, nil).HandBackRefusals(e.ctx, e.ns)
	require.NoError(t, err)
	require.Len(t, refusals, 2, "%q", refusals)
	for i, c := range []string{"rev-a", "rev-b"} {
		assert.Contains(t, refusals[i], "Cluster "+e.ns+"/"+c+" is on revision quick-start-1", refusals[i])
		assert.Contains(t, refusals[i], "behind the newest, quick-start-2", refusals[i])
	}

	// History 1: of the unused revisions only the newest stays; those in use stay too.
	e.patchClassAnnotations(map[string]any{revision.HistoryAnnotation: "1"})
	e.editWorkerMachine("sim.large")
	e.waitRevision("quick-start-3", true, 0)
	e.editWorkerMachine("sim.small")
	e.waitRevision("quick-start-4", true, 0)
	e.eventually(30*time.Second, "unused revision 3 pruned", func() (bool, string) {
		names := e.revisionNames()
		return slices.Equal(names, []string{"quick-start-1", "quick-start-2", "quick-start-4"}), fmt.Sprint(names)
	})
	e.waitRevision("quick-start-1", false, 2)
	e.waitRevision("quick-start-2", false, 1)

	// The class goes, and its revisions with it.
	require.NoError(t, kc.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(e.ns).Delete(e.ctx, "quick-start", metav1.DeleteOptions{}))
	e.eventually(30*time.Second, "revisions deleted with their class", func() (bool, string) {
		names := e.revisionNames()
		return len(names) == 0, fmt.Sprint(names)
	})
}

// createClusterNamed applies the sample Cluster under another name.
func (e *env) createClusterNamed(name string) {
	e.t.Helper()
	e.applyFile(clusterFile, onlyKinds("Cluster"), func(u *unstructured.Unstructured) { u.SetName(name) })
}

// editWorkerMachine edits the workers' machine template in place.
func (e *env) editWorkerMachine(instanceType string) {
	e.t.Helper()
	e.applyFile(classFile, onlyKinds("SimMachineTemplate"), func(u *unstructured.Unstructured) {
		if u.GetName() != "quick-start-default-worker-machine" {
			u.SetKind("")
			return
		}
		require.NoError(e.t, unstructured.SetNestedField(u.Object, instanceType, "spec", "template", "spec", "instanceType"))
	})
}

// patchClassAnnotations merges annotations into the class's.
func (e *env) patchClassAnnotations(annotations map[string]any) {
	e.t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	require.NoError(e.t, err)
	_, err = kc.MergePatch(e.ctx, kube.V1Beta1ClusterClasses, e.ns, "quick-start", patch, "integration-test")
	require.NoError(e.t, err)
}

// classRevision reads a ClusterClassRevision (zero when it does not exist).
func (e *env) classRevision(name string) *rolloutv1.ClusterClassRevision {
	e.t.Helper()
	rev := &rolloutv1.ClusterClassRevision{}
	u, err := kc.GetUncached(e.ctx, kube.ClusterClassRevisions, e.ns, name)
	if kube.IsNotFound(err) {
		return rev
	}
	require.NoError(e.t, err)
	require.NoError(e.t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, rev))
	return rev
}

// waitRevision waits until a revision exists whose status says latest and clusters as given, and
// checks what it records of itself.
func (e *env) waitRevision(name string, latest bool, clusters int32) {
	e.t.Helper()
	e.eventually(30*time.Second, fmt.Sprintf("revision %s latest=%v clusters=%d", name, latest, clusters), func() (bool, string) {
		rev := e.classRevision(name)
		return rev.Name == name && rev.Status.Latest == latest && rev.Status.Clusters == clusters,
			fmt.Sprintf("exists=%v status=%+v; revisions %v", rev.Name != "", rev.Status, e.revisionNames())
	})
	rev := e.classRevision(name)
	require.Equal(e.t, "quick-start", rev.Spec.ClusterClassName)
	require.Equal(e.t, name, revision.Name("quick-start", rev.Spec.Revision))
	require.Equal(e.t, "quick-start", rev.Labels[revision.ClassLabel])
	require.NoError(e.t, revision.Verify(rev.Spec))
	require.Len(e.t, rev.OwnerReferences, 1)
	require.Equal(e.t, "ClusterClass", rev.OwnerReferences[0].Kind)
}

// waitPinned waits until every Cluster named is pinned to the revision.
func (e *env) waitPinned(rev string, clusters ...string) {
	e.t.Helper()
	for _, c := range clusters {
		e.eventually(30*time.Second, "Cluster "+c+" pinned to "+rev, func() (bool, string) {
			pin := e.cluster(c).Annotations[revision.PinAnnotation]
			return pin == rev, "pinned to " + pin
		})
	}
}

// revisionNames lists the class's revisions, sorted.
func (e *env) revisionNames() []string {
	e.t.Helper()
	var names []string
	for _, u := range e.list(kube.ClusterClassRevisions, revision.ClassLabel+"=quick-start") {
		names = append(names, u.GetName())
	}
	slices.Sort(names)
	return names
}

// templateOf is what a revision records of the template named (its JSON).
func templateOf(t *testing.T, rev *rolloutv1.ClusterClassRevision, name string) string {
	t.Helper()
	for _, tmpl := range rev.Spec.Templates {
		if strings.Contains(string(tmpl.Raw), `"name":"`+name+`"`) {
			return string(tmpl.Raw)
		}
	}
	t.Fatalf("revision %s records no template %s", rev.Name, name)
	return ""
}
