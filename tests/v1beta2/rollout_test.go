//go:build v1beta2

package v1beta2

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/stacktest"
)

// fleet is a few Clusters of the sample class, created as v1beta2 by a platform tool's field
// manager, labelled fleet=<its name>.
type fleet struct {
	t     *testing.T
	k     *kube.Client
	ctx   context.Context
	label string
	names []string
}

// platformCluster is a v1beta2 Cluster of the sample class as a platform tool applies it.
func platformCluster(name string, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels},
		"spec": map[string]any{
			"clusterNetwork": map[string]any{"pods": map[string]any{"cidrBlocks": []any{"192.168.0.0/16"}},
				"services": map[string]any{"cidrBlocks": []any{"10.128.0.0/12"}}, "serviceDomain": "cluster.local"},
			"topology": map[string]any{
				"classRef": map[string]any{"name": "quick-start"}, "version": "v1.31.2",
				"controlPlane": map[string]any{"replicas": int64(1)},
				"workers": map[string]any{"machineDeployments": []any{
					map[string]any{"class": "default-worker", "name": "md-0", "replicas": int64(1)}}},
				"variables": []any{map[string]any{"name": "region", "value": "sim-west-2"}},
			},
		},
	}}
}

// newFleet creates n Clusters labelled fleet=label and waits until each is settled. They are
// deleted when the test ends, and waited for (a class they use can go only after them).
func newFleet(t *testing.T, k *kube.Client, ctx context.Context, label string, n int) *fleet {
	f := &fleet{t: t, k: k, ctx: ctx, label: label}
	clusters := k.Dynamic.Resource(clustersV1Beta2).Namespace("default")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s-%d", f.label, i)
		_, err := clusters.Apply(ctx, name, platformCluster(name, map[string]any{"fleet": f.label}), metav1.ApplyOptions{FieldManager: "platform"})
		require.NoError(t, err)
		f.names = append(f.names, name)
	}
	t.Cleanup(func() {
		for _, name := range f.names {
			_ = clusters.Delete(context.Background(), name, metav1.DeleteOptions{})
		}
		deadline := time.Now().Add(2 * time.Minute)
		for _, name := range f.names {
			for time.Now().Before(deadline) {
				if _, err := clusters.Get(context.Background(), name, metav1.GetOptions{}); kube.IsNotFound(err) {
					break
				}
				time.Sleep(time.Second)
			}
		}
	})
	for _, name := range f.names {
		stacktest.WaitFor(t, 2*time.Minute, name+" provisioned and its topology reconciled", f.settled(name))
	}
	return f
}

// read is a Cluster of the fleet as v1beta2.
func (f *fleet) read(name string) *unstructured.Unstructured {
	f.t.Helper()
	u, err := f.k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Get(f.ctx, name, metav1.GetOptions{})
	require.NoError(f.t, err)
	return u
}

// settled: Provisioned, TopologyReconciled True for its generation, and its control plane and
// workers available and up to date at their desired replicas (what a rollout waits for).
func (f *fleet) settled(name string) func() (bool, string) {
	return func() (bool, string) {
		c := f.read(name)
		var why []string
		if phase, _, _ := unstructured.NestedString(c.Object, "status", "phase"); phase != "Provisioned" {
			why = append(why, "phase "+phase)
		}
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		if st, _ := conditionOf(conds, "TopologyReconciled"); st != "True" || observedOf(conds, "TopologyReconciled") < c.GetGeneration() {
			why = append(why, fmt.Sprintf("TopologyReconciled %s for generation %d of %d", st, observedOf(conds, "TopologyReconciled"), c.GetGeneration()))
		}
		for _, part := range []string{"controlPlane", "workers"} {
			want, _, _ := unstructured.NestedInt64(c.Object, "status", part, "desiredReplicas")
			for _, f := range []string{"availableReplicas", "upToDateReplicas"} {
				if n, _, _ := unstructured.NestedInt64(c.Object, "status", part, f); n != want || want == 0 {
					why = append(why, fmt.Sprintf("%s %s %d of %d", part, f, n, want))
				}
			}
		}
		return len(why) == 0, strings.Join(why, "; ")
	}
}

// observedOf is the observedGeneration of the condition of type t.
func observedOf(conds []any, t string) int64 {
	for _, item := range conds {
		if m, _ := item.(map[string]any); m["type"] == t {
			g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			return g
		}
	}
	return 0
}

func (f *fleet) createRollout(name string, spec map[string]any) {
	f.t.Helper()
	r := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
	rollouts := f.k.Dynamic.Resource(kube.Rollouts).Namespace("default")
	_, err := rollouts.Create(f.ctx, r, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.t.Cleanup(func() { _ = rollouts.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

func (f *fleet) rollout(name string) *rolloutv1.Rollout {
	f.t.Helper()
	u, err := f.k.Dynamic.Resource(kube.Rollouts).Namespace("default").Get(f.ctx, name, metav1.GetOptions{})
	require.NoError(f.t, err)
	r := &rolloutv1.Rollout{}
	require.NoError(f.t, runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, r))
	return r
}

// completed waits for the Rollout Completed with every Cluster done.
func (f *fleet) completed(name string, timeout time.Duration) *rolloutv1.Rollout {
	f.t.Helper()
	stacktest.WaitFor(f.t, timeout, "Rollout "+name+" completed", func() (bool, string) {
		st := f.rollout(name).Status
		var cond string
		for _, c := range st.Conditions {
			if c.Type == "Progressing" && c.Reason == "NotStarted" {
				cond = ": " + c.Message
			}
		}
		return st.Phase == rollout.PhaseCompleted, fmt.Sprintf("phase %q %+v%s", st.Phase, st.Counts, cond)
	})
	r := f.rollout(name)
	assert.Equal(f.t, rolloutv1.Counts{Total: int32(len(f.names)), Done: int32(len(f.names))}, r.Status.Counts, "every Cluster done")
	return r
}

// stagesInOrder checks that the Rollout's two stages each ran, the second after the first.
func stagesInOrder(t *testing.T, r *rolloutv1.Rollout) {
	t.Helper()
	require.Len(t, r.Status.Stages, 2, "%+v", r.Status.Stages)
	first, second := r.Status.Stages[0], r.Status.Stages[1]
	require.NotNil(t, first.FinishedAt, "stage %s finished", first.Name)
	require.NotNil(t, second.StartedAt, "stage %s started", second.Name)
	assert.False(t, second.StartedAt.Before(first.FinishedAt), "stage %s started %s, before stage %s was through at %s",
		second.Name, second.StartedAt, first.Name, first.FinishedAt)
}

// copyClass creates a copy of the sample ClusterClass under a new name (a compatible class to
// rebase onto) and waits until topoflow reconciled it.
func copyClass(t *testing.T, k *kube.Client, ctx context.Context, name string) {
	t.Helper()
	classes := k.Dynamic.Resource(classesV1Beta2).Namespace("default")
	sample, err := classes.Get(ctx, "quick-start", metav1.GetOptions{})
	require.NoError(t, err)
	spec, _, _ := unstructured.NestedMap(sample.Object, "spec")
	cp := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "ClusterClass",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
	_, err = classes.Create(ctx, cp, metav1.CreateOptions{FieldManager: "platform"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = classes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	stacktest.WaitFor(t, time.Minute, "ClusterClass "+name+" reconciled", func() (bool, string) {
		c, err := classes.Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		vars, _, _ := unstructured.NestedSlice(c.Object, "status", "variables")
		obs, _, _ := unstructured.NestedInt64(c.Object, "status", "observedGeneration")
		return len(vars) > 0 && obs >= c.GetGeneration(), fmt.Sprintf("%d status variables, observed generation %d of %d", len(vars), obs, c.GetGeneration())
	})
}

// managerOwns says whether a managedFields record of manager (an apply) names the field (its
// FieldsV1 key, such as `"f:classRef"`).
func managerOwns(u *unstructured.Unstructured, manager, field string) bool {
	return slices.ContainsFunc(u.GetManagedFields(), func(m metav1.ManagedFieldsEntry) bool {
		return m.Manager == manager && m.Operation == metav1.ManagedFieldsOperationApply && m.FieldsV1 != nil &&
			strings.Contains(string(m.FieldsV1.Raw), field)
	})
}

// TestRolloutsOnV1Beta2Storage: on v1beta2 storage, Rollouts move three Clusters that a platform
// tool created as v1beta2, each in two stages:
//   - a rebase onto a compatible class (a copy of the sample class under a new name): every
//     Cluster ends on the new class, version and variables unchanged, its topology reconciled;
//   - then a variable change to a value the class allows, over the same Clusters. The first
//     Cluster holds the value already and its own maintenance window is closed: it is done
//     without a write and without waiting for the window. The second's window opens in a minute
//     or two: it waits, counted as waiting (not changing) with OutsideWindow naming it, and is
//     written when the window opens. The third has a record of the rollout's field manager made
//     in v1beta1 (as an older topoflow wrote them). Every Cluster keeps the class the first
//     Rollout wrote: both Rollouts write as topoflow-rollout, and server-side apply would remove
//     a field its manager applied before and no longer names.
func TestRolloutsOnV1Beta2Storage(t *testing.T) {
	k := stacktest.Client(t, "tests/v1beta2.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	label := "rf-" + strings.ToLower(rand.String(5))
	class := label + "-class"
	copyClass(t, k, ctx, class) // first: deleted after the Clusters that use it
	f := newFleet(t, k, ctx, label, 3)
	twoStages := []any{map[string]any{"name": "first", "count": int64(1)}, map[string]any{"name": "rest", "maxConcurrent": int64(2)}}
	selector := map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"fleet": f.label}}}

	// The rebase.
	rebase := f.label + "-rebase"
	f.createRollout(rebase, map[string]any{"clusters": selector, "change": map[string]any{"class": class}, "stages": twoStages})
	r := f.completed(rebase, 4*time.Minute)
	stagesInOrder(t, r)
	for _, name := range f.names {
		stacktest.WaitFor(t, time.Minute, name+" settled on the new class", f.settled(name))
		c := f.read(name)
		got, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "classRef", "name")
		assert.Equal(t, class, got, "%s rebased", name)
		version, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "version")
		assert.Equal(t, "v1.31.2", version, "%s keeps its version", name)
		assert.Equal(t, "default/"+rebase, c.GetAnnotations()[rollout.ClaimAnnotation])
		assert.True(t, managerOwns(c, rollout.FieldManager, `"f:classRef"`), "%s: the class is the rollout's field", name)
		assert.True(t, managerOwns(c, "platform", `"f:version"`), "%s: the version stays the platform tool's", name)
	}

	// The variable change. The first Cluster holds the value already (a hand change), and its own
	// window opens only in twelve hours.
	holding, waiting, older := f.names[0], f.names[1], f.names[2]
	_, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Apply(ctx, holding, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": map[string]any{"name": holding, "namespace": "default"},
		"spec": map[string]any{"topology": map[string]any{"variables": []any{map[string]any{"name": "region", "value": "sim-east-1"}}}},
	}}, metav1.ApplyOptions{FieldManager: "hand", Force: true})
	require.NoError(t, err)
	stacktest.WaitFor(t, 2*time.Minute, holding+" settled in sim-east-1", f.settled(holding))
	later := time.Now().UTC().Add(12 * time.Hour)
	annotate(t, k, ctx, holding, rollout.WindowsAnnotation, fmt.Sprintf("* %s-%s UTC", later.Format("15:04"), later.Add(time.Minute).Format("15:04")))
	// The second's window opens at a full minute at least a minute away (time to see it wait).
	opens := time.Now().UTC().Truncate(time.Minute).Add(2 * time.Minute)
	annotate(t, k, ctx, waiting, rollout.WindowsAnnotation, fmt.Sprintf("* %s-%s UTC", opens.Format("15:04"), opens.Add(time.Hour).Format("15:04")))
	// The third: the rollout's manager's record made in v1beta1 (class and claim as the rebase
	// wrote them, and the version): an older topoflow wrote Clusters as v1beta1.
	_, err = k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace("default").Apply(ctx, older, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"name": older, "namespace": "default", "annotations": map[string]any{rollout.ClaimAnnotation: "default/" + rebase}},
		"spec":     map[string]any{"topology": map[string]any{"class": class, "version": "v1.31.2"}},
	}}, metav1.ApplyOptions{FieldManager: rollout.FieldManager, Force: true})
	require.NoError(t, err)
	c := f.read(older)
	i := slices.IndexFunc(c.GetManagedFields(), func(m metav1.ManagedFieldsEntry) bool { return m.Manager == rollout.FieldManager })
	require.GreaterOrEqual(t, i, 0)
	require.Equal(t, "cluster.x-k8s.io/v1beta1", c.GetManagedFields()[i].APIVersion, "the rollout's record made in v1beta1")

	region := f.label + "-region"
	f.createRollout(region, map[string]any{"clusters": selector, "stages": twoStages,
		"change": map[string]any{"topology": map[string]any{"variables": []any{map[string]any{"name": "region", "value": "sim-east-1"}}}}})
	stacktest.WaitFor(t, 2*time.Minute, waiting+" waiting for its window, counted as waiting", func() (bool, string) {
		st := f.rollout(region).Status
		states := map[string]string{}
		for _, c := range st.Clusters {
			states[c.Name] = c.State
		}
		outside := slices.ContainsFunc(st.Conditions, func(c metav1.Condition) bool {
			return c.Type == "OutsideWindow" && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, waiting) && strings.Contains(c.Message, opens.Format(time.RFC3339))
		})
		return states[waiting] == string(rollout.WaitingForWindow) && st.Counts.Waiting == 1 && outside,
			fmt.Sprintf("states %v, counts %+v, OutsideWindow naming it %v", states, st.Counts, outside)
	})
	st := f.rollout(region).Status
	assert.Equal(t, int32(3), st.Counts.Done+st.Counts.Changing+st.Counts.Waiting+st.Counts.Pending, "each Cluster counted once: %+v", st.Counts)
	assert.Equal(t, string(rollout.Done), st.Clusters[0].State, "%s holds the value: done without waiting for its window (%s)", holding, st.Clusters[0].Message)
	assert.True(t, time.Now().Before(opens), "seen waiting before its window opened")
	c = f.read(waiting)
	v := variable(c, "region")
	assert.Equal(t, "sim-west-2", v, "%s not written outside its window", waiting)

	r = f.completed(region, 4*time.Minute)
	stagesInOrder(t, r)
	for _, cs := range r.Status.Clusters {
		if cs.Name == waiting {
			assert.False(t, cs.StartedAt.Time.Before(opens), "%s started %s, before its window opened at %s", waiting, cs.StartedAt, opens)
		}
	}
	for _, name := range f.names {
		stacktest.WaitFor(t, time.Minute, name+" settled in sim-east-1", f.settled(name))
		c := f.read(name)
		assert.Equal(t, "sim-east-1", variable(c, "region"), "%s: the variable changed", name)
		got, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "classRef", "name")
		assert.Equal(t, class, got, "%s keeps the class the rebase wrote", name)
		version, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "version")
		assert.Equal(t, "v1.31.2", version, "%s keeps its version", name)
	}
	assert.Equal(t, "default/"+rebase, f.read(holding).GetAnnotations()[rollout.ClaimAnnotation], "%s was not written", holding)
	for _, name := range []string{waiting, older} {
		c := f.read(name)
		assert.Equal(t, "default/"+region, c.GetAnnotations()[rollout.ClaimAnnotation], "%s written by the variable change", name)
		assert.True(t, managerOwns(c, rollout.FieldManager, `"f:classRef"`) && managerOwns(c, rollout.FieldManager, `"k:{\"name\":\"region\"}"`),
			"%s: the rollout's manager owns the class it wrote before and the variable it wrote now", name)
	}
}

// variable is the value of the Cluster's topology variable (v1beta2), as a string.
func variable(c *unstructured.Unstructured, name string) string {
	vars, _, _ := unstructured.NestedSlice(c.Object, "spec", "topology", "variables")
	for _, v := range vars {
		if m, _ := v.(map[string]any); m["name"] == name {
			s, _ := m["value"].(string)
			return s
		}
	}
	return ""
}

func annotate(t *testing.T, k *kube.Client, ctx context.Context, name, key, value string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, key, value)
	_, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "hand"})
	require.NoError(t, err)
}

// kubectl runs the stack's kubectl ($KUBECTL) with stdin, returning its stdout and stderr.
func kubectl(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		t.Fatal("this test runs kubectl: set KUBECTL (tests/v1beta2.sh does)")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

// warnings are the lines of kubectl's stderr other than the deprecation of v1beta1 (which the
// CRD declares, as Cluster API's does).
func warnings(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.Contains(l, "cluster.x-k8s.io/v1beta1 Cluster is deprecated") {
			out = append(out, l)
		}
	}
	return out
}

// TestKubectlServerSideApplyOfV1Beta1Replicas: on v1beta2 storage, `kubectl apply --server-side`
// of a v1beta1 Cluster that names only its control plane's replicas, on a Cluster a platform tool
// created as v1beta2, changes the replicas and nothing else: kubectl prints no warning (but
// v1beta1's deprecation), the control plane scales, the class and version stay as the platform
// tool wrote them, and kubectl now owns the replicas. Applying it again is a no-op.
func TestKubectlServerSideApplyOfV1Beta1Replicas(t *testing.T) {
	k := stacktest.Client(t, "tests/v1beta2.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	f := newFleet(t, k, ctx, "kc-"+strings.ToLower(rand.String(5)), 1)
	name := f.names[0]
	before := f.read(name)

	manifest := fmt.Sprintf(`apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: %s
  namespace: default
spec:
  topology:
    controlPlane:
      replicas: 3
`, name)
	var generations []int64
	for _, pass := range []string{"first", "again"} {
		// --force-conflicts: the replicas are the platform tool's; the operator takes them over.
		out, stderr, err := kubectl(t, manifest, "apply", "--server-side", "--force-conflicts", "-f", "-")
		require.NoError(t, err, "kubectl apply (%s): %s%s", pass, out, stderr)
		assert.Empty(t, warnings(stderr), "kubectl apply (%s) warned:\n%s", pass, stderr)
		assert.Contains(t, out, "serverside-applied")
		generations = append(generations, f.read(name).GetGeneration())
	}
	assert.Equal(t, generations[0], generations[1], "applying the same file again changes nothing")
	stacktest.WaitFor(t, 2*time.Minute, name+" at 3 control plane replicas", func() (bool, string) {
		c := f.read(name)
		desired, _, _ := unstructured.NestedInt64(c.Object, "status", "controlPlane", "desiredReplicas")
		ok, why := f.settled(name)()
		return ok && desired == 3, fmt.Sprintf("desired %d; %s", desired, why)
	})
	c := f.read(name)
	replicas, _, _ := unstructured.NestedInt64(c.Object, "spec", "topology", "controlPlane", "replicas")
	assert.EqualValues(t, 3, replicas)
	for _, field := range [][]string{{"spec", "topology", "classRef", "name"}, {"spec", "topology", "version"}} {
		was, _, _ := unstructured.NestedString(before.Object, field...)
		now, _, _ := unstructured.NestedString(c.Object, field...)
		assert.Equal(t, was, now, "%v untouched", field)
	}
	assert.True(t, managerOwns(c, "kubectl", `"f:replicas"`), "kubectl owns the replicas")
	assert.True(t, managerOwns(c, "platform", `"f:classRef"`) && managerOwns(c, "platform", `"f:version"`), "the class and version stay the platform tool's")
}

// TestKubectlPartialApplyAfterClientSideApply: a Cluster created with `kubectl apply` (client
// side) and then applied server-side with a file naming only its replicas: kubectl moves what its
// client-side apply owned to its server-side manager and applies the file again, which removes
// what the file no longer names (server-side apply's rule, as a client-side apply of that file
// would); admission refuses a Cluster without its class. The same, in v1beta1 and in v1beta2
// alike: the conversion adds no class, version or other value the partial object does not have
// (before, v1beta1 kept the class and version, an empty string the conversion made up having
// counted as set, and lost only the variables). The Cluster is left as the first apply made it.
func TestKubectlPartialApplyAfterClientSideApply(t *testing.T) {
	k := stacktest.Client(t, "tests/v1beta2.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, version := range []string{"v1beta1", "v1beta2"} {
		name := "csa-" + version + "-" + strings.ToLower(rand.String(4))
		classField := "classRef:\n      name: quick-start"
		if version == "v1beta1" {
			classField = "class: quick-start"
		}
		whole := fmt.Sprintf(`apiVersion: cluster.x-k8s.io/%s
kind: Cluster
metadata:
  name: %s
  namespace: default
spec:
  clusterNetwork:
    pods:
      cidrBlocks: ["192.168.0.0/16"]
    services:
      cidrBlocks: ["10.128.0.0/12"]
  topology:
    %s
    version: v1.31.2
    controlPlane:
      replicas: 1
    variables:
    - name: region
      value: sim-west-2
`, version, name, classField)
		out, stderr, err := kubectl(t, whole, "apply", "-f", "-")
		require.NoError(t, err, "%s%s", out, stderr)
		t.Cleanup(func() {
			_ = k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		partial := fmt.Sprintf("apiVersion: cluster.x-k8s.io/%s\nkind: Cluster\nmetadata:\n  name: %s\n  namespace: default\nspec:\n  topology:\n    controlPlane:\n      replicas: 2\n", version, name)
		_, stderr, err = kubectl(t, partial, "apply", "--server-side", "-f", "-")
		require.NoError(t, err, stderr)
		w := strings.Join(warnings(stderr), "\n")
		assert.Contains(t, w, "failed to re-apply configuration after performing Server-Side Apply migration", version)
		assert.Contains(t, w, "spec.topology.class: Required value: class cannot be empty", "%s: the file's re-apply removes the class", version)
		c := readCluster(t, k, ctx, name)
		class, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "classRef", "name")
		v, _, _ := unstructured.NestedString(c.Object, "spec", "topology", "version")
		replicas, _, _ := unstructured.NestedInt64(c.Object, "spec", "topology", "controlPlane", "replicas")
		assert.Equal(t, []any{"quick-start", "v1.31.2", int64(2)}, []any{class, v, replicas}, "%s: as the first server-side apply left it", version)
	}
}

func readCluster(t *testing.T, k *kube.Client, ctx context.Context, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := k.Dynamic.Resource(clustersV1Beta2).Namespace("default").Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	return u
}
