//go:build realcapi

// Package realcapi runs topoflow beside Cluster API's own controllers (core with its topology
// controller off, kubeadm bootstrap, KubeadmControlPlane, the in-memory backend), as
// deploy/capi/up.sh brings them up: the test needs that stack's KUBECONFIG (tests/capi.sh).
package realcapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/ssa"
	"github.com/topoflow/topoflow/tests/stacktest"
)

const testManager = "realcapi-test"

var (
	kcps     = schema.GroupVersionResource{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta1", Resource: "kubeadmcontrolplanes"}
	devs     = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "devclusters"}
	machines = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machines"}
	// v1beta2Clusters reads Clusters as Cluster API stores them.
	v1beta2Clusters = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
)

func repoFile(rel string) string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", rel)
}

// TestLifecycleBesideClusterAPI: a Cluster of the in-memory class is created, upgraded across two
// minors (the class's kubernetesVersions) and deleted by topoflow while Cluster API's core,
// kubeadm and in-memory controllers do the rest; no field of the Cluster or of a topology object
// is owned by both topoflow and Cluster API.
func TestLifecycleBesideClusterAPI(t *testing.T) {
	k := stacktest.Client(t, "tests/capi.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ns, ext := namespaceWithExtension(t, ctx, k)
	applySamples(t, ctx, k, ns, "mem")
	versions := watchVersions(ctx, k, ns, "mem")

	start := time.Now()
	stacktest.WaitFor(t, 5*time.Minute, "the control plane and workers at v1.33.0, the Cluster Provisioned", func() (bool, string) {
		return settled(ctx, k, ns, "mem", "v1.33.0")
	})
	t.Logf("created in %s", time.Since(start).Round(time.Second))
	noSharedFields(t, ctx, k, ns, "mem")

	// topoflow's admission stands in for Cluster API's topology checks, whatever version the
	// edit is written in: a downgrade written as v1beta2 is refused, naming the field.
	_, err := k.Dynamic.Resource(v1beta2Clusters).Namespace(ns).Patch(ctx, "mem", types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.32.0"}}}`), metav1.PatchOptions{FieldManager: testManager})
	require.Error(t, err, "a downgrade is refused at admission")
	assert.Contains(t, err.Error(), "spec.topology.version")

	start = time.Now()
	_, err = k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Patch(ctx, "mem", types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.35.0"}}}`), metav1.PatchOptions{FieldManager: testManager})
	require.NoError(t, err)
	stacktest.WaitFor(t, 8*time.Minute, "the control plane and workers at v1.35.0", func() (bool, string) {
		return settled(ctx, k, ns, "mem", "v1.35.0")
	})
	t.Logf("upgraded two minors in %s", time.Since(start).Round(time.Second))
	noSharedFields(t, ctx, k, ns, "mem")

	cp, workers := versions.seen()
	assert.Equal(t, []string{"v1.33.0", "v1.34.0", "v1.35.0"}, cp, "the control plane steps through every minor, once each")
	require.NotEmpty(t, workers)
	for i := 1; i < len(workers); i++ {
		prev, next := semver.MustParse(workers[i-1]), semver.MustParse(workers[i])
		assert.True(t, prev.LessThan(next), "the workers' versions only go forward: %v", workers)
	}
	assert.Equal(t, "v1.35.0", workers[len(workers)-1])
	// The Cluster's status showed the upgrade plan as it shrank, as Cluster API v1.14 reports it
	// (reconcileUpgradePlan), and shows none once the upgrade is over. Polled: a plan that lasts
	// less than a poll may go unseen, so the first and the last are what is asserted.
	plans := versions.seenPlans()
	require.NotEmpty(t, plans)
	assert.Contains(t, plans, "cp=[v1.34.0 v1.35.0] workers=[v1.35.0]", "the whole plan at the start: %v", plans)
	assert.Equal(t, "cp=[] workers=[]", plans[len(plans)-1], "no plan after the upgrade: %v", plans)

	// Delete while BeforeClusterDelete blocks: Cluster API core's Cluster controller (its topology
	// gate off) would delete the children at once; topoflow's delete hold keeps them.
	start = time.Now()
	require.NoError(t, k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Delete(ctx, "mem", metav1.DeleteOptions{}))
	stacktest.WaitFor(t, time.Minute, "BeforeClusterDelete called", func() (bool, string) {
		return len(ext.Calls(t, hooksv1.BeforeClusterDelete)) > 0, "no call yet"
	})
	// A fact, not a wait: Cluster API core's Cluster controller has reconciled the deletion (it
	// writes phase Deleting, in the same reconcile that tries to delete the children).
	stacktest.WaitFor(t, time.Minute, "Cluster API core saw the deletion", func() (bool, string) {
		c, err := k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Get(ctx, "mem", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
		return phase == "Deleting", "phase " + phase
	})
	for _, gvr := range []schema.GroupVersionResource{kcps, devs, kube.V1Beta1MachineDeployments} {
		l, err := k.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		for _, o := range l.Items {
			assert.Nil(t, o.GetDeletionTimestamp(), "%s %s deleted while BeforeClusterDelete blocks", o.GetKind(), o.GetName())
		}
	}
	stacktest.WaitFor(t, 5*time.Minute, "the Cluster and its topology gone", func() (bool, string) {
		left := []string{}
		for _, gvr := range []schema.GroupVersionResource{kube.V1Beta1Clusters, kcps, devs, kube.V1Beta1MachineDeployments, machines, kube.V1Beta1MachineHealthChecks} {
			l, err := k.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, o := range l.Items {
				left = append(left, o.GetKind()+" "+o.GetName())
			}
		}
		return len(left) == 0, fmt.Sprint(left)
	})
	t.Logf("deleted in %s (the hook held it 10 s)", time.Since(start).Round(time.Second))

	// The hooks passed in Cluster API's order: per control plane step Before/After
	// ControlPlaneUpgrade, the workers once at the end (the class's chain lets them skip
	// v1.34.0), each once (Cluster API v1.14's topology controller and hooks tracking).
	want := []string{
		"BeforeClusterCreate", "AfterControlPlaneInitialized",
		"BeforeClusterUpgrade(v1.35.0)",
		"BeforeControlPlaneUpgrade(v1.34.0)", "AfterControlPlaneUpgrade(v1.34.0)",
		"BeforeControlPlaneUpgrade(v1.35.0)", "AfterControlPlaneUpgrade(v1.35.0)",
		"BeforeWorkersUpgrade(v1.35.0)", "AfterWorkersUpgrade(v1.35.0)",
		"AfterClusterUpgrade(v1.35.0)",
		"BeforeClusterDelete",
	}
	var passed []string
	calls := ext.Calls(t, "")
	for _, c := range calls {
		if !c.Passed() {
			continue
		}
		assert.NotContains(t, passed, c.key(), "%s passed twice", c.key())
		passed = append(passed, c.key())
	}
	assert.Equal(t, want, passed, "the hooks that passed, in order")
	for _, h := range []string{hooksv1.BeforeClusterCreate, hooksv1.BeforeClusterUpgrade, hooksv1.BeforeControlPlaneUpgrade, hooksv1.BeforeWorkersUpgrade, hooksv1.BeforeClusterDelete} {
		assert.Greater(t, len(ext.Calls(t, h)), 1, "%s blocked first, then passed", h)
	}

	// What the SDK decoded: the Cluster as v1beta2, as Cluster API v1.13+ sends it (a v1beta1
	// body decodes into these types with an empty classRef and empty references), trimmed as
	// Cluster API trims it (no status).
	for _, c := range calls {
		assert.Equal(t, ns+"/mem", c.Cluster, c.key())
		assert.Equal(t, "cluster.x-k8s.io/v1beta2", c.ClusterAPIVersion, c.key())
		assert.Equal(t, "sim-memory", c.ClassRef, "%s: spec.topology.classRef.name", c.key())
		assert.NotEmpty(t, c.TopologyVersion, c.key())
		assert.False(t, c.HasStatus, "%s: the Cluster is sent without its status", c.key())
		if c.Hook != hooksv1.BeforeClusterCreate {
			assert.Regexp(t, `^controlplane\.cluster\.x-k8s\.io/KubeadmControlPlane/mem-`, c.ControlPlaneRef, c.key())
			assert.Regexp(t, `^infrastructure\.cluster\.x-k8s\.io/DevCluster/mem-`, c.InfrastructureRef, c.key())
		}
		if c.Hook == hooksv1.BeforeClusterUpgrade {
			assert.Equal(t, "v1.33.0", c.FromVersion)
			assert.Equal(t, "v1.35.0", c.TopologyVersion)
			assert.Equal(t, []string{"v1.34.0", "v1.35.0"}, c.ControlPlaneUpgrades)
			assert.Equal(t, []string{"v1.35.0"}, c.WorkersUpgrades)
		}
	}
}

// namespaceWithExtension makes a test namespace and registers for it a Runtime Extension built on
// Cluster API v1.14.2's own Runtime SDK, answering every lifecycle hook, each blocking hook
// "retry" once per Cluster and version and BeforeClusterDelete for 10 s.
func namespaceWithExtension(t *testing.T, ctx context.Context, k *kube.Client) (string, *sdkExtension) {
	t.Helper()
	ns := "rc-" + strings.ToLower(rand.String(5))
	_, err := k.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
		&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	ext := startSDKExtension(t)
	_, err = k.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Patch(ctx, ns, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"topoflow.dev/realcapi":"`+ns+`"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	_, err = k.Apply(ctx, ext.Config("ext-"+ns, "topoflow.dev/realcapi", ns), testManager)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = k.Dynamic.Resource(runtimev1.GroupVersion.WithResource("extensionconfigs")).Delete(context.Background(), "ext-"+ns, metav1.DeleteOptions{})
	})
	return ns, ext
}

// applySamples applies the in-memory class and one sample Cluster per name.
func applySamples(t *testing.T, ctx context.Context, k *kube.Client, ns string, clusters ...string) {
	t.Helper()
	apply := func(f string, name string) {
		data, err := os.ReadFile(repoFile(f))
		require.NoError(t, err)
		docs, err := decode.Documents(strings.NewReader(string(data)))
		require.NoError(t, err)
		for _, d := range docs {
			d.SetNamespace(ns)
			if name != "" && d.GetKind() == "Cluster" {
				d.SetName(name)
			}
			_, err := k.Apply(ctx, d, testManager)
			require.NoError(t, err, "applying %s %s", d.GetKind(), d.GetName())
		}
	}
	apply("deploy/capi/samples/clusterclass.yaml", "")
	for _, c := range clusters {
		apply("deploy/capi/samples/cluster.yaml", c)
	}
}

// createSettled applies the in-memory class and the sample Clusters, and waits until each has
// settled at the sample's version (v1.33.0).
func createSettled(t *testing.T, ctx context.Context, k *kube.Client, ns string, clusters ...string) {
	t.Helper()
	applySamples(t, ctx, k, ns, clusters...)
	for _, c := range clusters {
		stacktest.WaitFor(t, 5*time.Minute, c+" at v1.33.0, Provisioned", func() (bool, string) {
			return settled(ctx, k, ns, c, "v1.33.0")
		})
	}
}

// settled: the control plane and the MachineDeployments run version with every replica up to
// date and ready, the Cluster is Provisioned (Cluster API's Cluster controller says so) and
// topoflow's TopologyReconciled is True.
func settled(ctx context.Context, k *kube.Client, ns, name, version string) (bool, string) {
	c, err := k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	phase, _, _ := unstructured.NestedString(c.Object, "status", "phase")
	topo := "absent"
	conds, _, _ := unstructured.NestedSlice(c.Object, "status", "v1beta2", "conditions")
	for _, x := range conds {
		if m, _ := x.(map[string]any); m["type"] == "TopologyReconciled" {
			topo = fmt.Sprintf("%v(%v: %v)", m["status"], m["reason"], m["message"])
		}
	}
	state := []string{"phase=" + phase, "TopologyReconciled=" + topo}
	ok := phase == "Provisioned" && strings.HasPrefix(topo, "True")

	cpName, _, _ := unstructured.NestedString(c.Object, "spec", "controlPlaneRef", "name")
	if cpName == "" {
		return false, strings.Join(append(state, "no control plane yet"), " ")
	}
	cp, err := k.Dynamic.Resource(kcps).Namespace(ns).Get(ctx, cpName, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	ok = ok && ready(cp, "spec", "version", version) && statusString(cp, "version") == version
	state = append(state, fmt.Sprintf("KCP %s: version=%s ready=%d/%d updated=%d", cpName, statusString(cp, "version"),
		statusInt(cp, "readyReplicas"), statusInt(cp, "replicas"), statusInt(cp, "updatedReplicas")))

	mds, err := k.Dynamic.Resource(kube.V1Beta1MachineDeployments).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/cluster-name=" + name})
	if err != nil {
		return false, err.Error()
	}
	ok = ok && len(mds.Items) > 0
	for i := range mds.Items {
		md := &mds.Items[i]
		ok = ok && ready(md, "spec", "template", "spec", "version", version)
		v, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "version")
		state = append(state, fmt.Sprintf("MD %s: version=%s ready=%d/%d updated=%d", md.GetName(), v,
			statusInt(md, "readyReplicas"), statusInt(md, "replicas"), statusInt(md, "updatedReplicas")))
	}
	return ok, strings.Join(state, "; ")
}

// ready: the object's version (at path) is want and every desired replica is updated and ready.
func ready(o *unstructured.Unstructured, pathAndWant ...string) bool {
	path, want := pathAndWant[:len(pathAndWant)-1], pathAndWant[len(pathAndWant)-1]
	v, _, _ := unstructured.NestedString(o.Object, path...)
	desired, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas")
	return v == want && desired > 0 && statusInt(o, "readyReplicas") == desired && statusInt(o, "updatedReplicas") == desired &&
		statusInt(o, "replicas") == desired
}

func statusInt(o *unstructured.Unstructured, field string) int64 {
	v, _, _ := unstructured.NestedInt64(o.Object, "status", field)
	return v
}

func statusString(o *unstructured.Unstructured, field string) string {
	v, _, _ := unstructured.NestedString(o.Object, "status", field)
	return v
}

// noSharedFields checks the Cluster and every topology object: no field owned by both one of
// topoflow's field managers and one of Cluster API's (the test's own edits aside).
func noSharedFields(t *testing.T, ctx context.Context, k *kube.Client, ns, cluster string) {
	t.Helper()
	ours := map[string]bool{}
	for _, m := range activities.FieldManagers() {
		ours[m] = true
	}
	check := func(o *unstructured.Unstructured) {
		var mfs []metav1.ManagedFieldsEntry
		for _, mf := range o.GetManagedFields() {
			if mf.Manager != testManager {
				mfs = append(mfs, mf)
			}
		}
		shared, err := ssa.SharedFields(mfs, func(m string) bool { return ours[m] })
		require.NoError(t, err)
		assert.Empty(t, shared, "%s %s: fields owned by topoflow and Cluster API (managers %v)", o.GetKind(), o.GetName(), managers(o))
	}
	c, err := k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
	require.NoError(t, err)
	check(c)
	for _, gvr := range []schema.GroupVersionResource{kcps, devs, kube.V1Beta1MachineDeployments, kube.V1Beta1MachineHealthChecks} {
		l, err := k.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/cluster-name=" + cluster})
		require.NoError(t, err)
		for i := range l.Items {
			check(&l.Items[i])
		}
	}
}

func managers(o *unstructured.Unstructured) []string {
	var out []string
	for _, mf := range o.GetManagedFields() {
		out = append(out, mf.Manager+"/"+string(mf.Operation)+"/"+mf.Subresource)
	}
	return out
}

// versionLog records each version the control plane and the MachineDeployments were given, in
// order (polled: a step lasts tens of seconds, far longer than the poll).
type versionLog struct {
	mu          sync.Mutex
	cp, workers []string
	// plans are the Cluster's v1beta2 status.controlPlane.upgradePlan and status.workers.upgradePlan
	// as they changed ("cp=[...] workers=[...]").
	plans []string
}

func (v *versionLog) seen() (cp, workers []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.cp), slices.Clone(v.workers)
}

func (v *versionLog) seenPlans() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.plans)
}

// planOf reads an upgrade plan of a v1beta2 Cluster's status ("controlPlane" or "workers").
func planOf(c *unstructured.Unstructured, part string) []string {
	items, _, _ := unstructured.NestedSlice(c.Object, "status", part, "upgradePlan")
	out := []string{}
	for _, it := range items {
		m, _ := it.(map[string]any)
		out = append(out, fmt.Sprint(m["version"]))
	}
	return out
}

func appendNew(list []string, v string) []string {
	if v == "" || (len(list) > 0 && list[len(list)-1] == v) {
		return list
	}
	return append(list, v)
}

func watchVersions(ctx context.Context, k *kube.Client, ns, cluster string) *versionLog {
	v := &versionLog{}
	sel := metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/cluster-name=" + cluster}
	go func() {
		for ctx.Err() == nil {
			if l, err := k.Dynamic.Resource(kcps).Namespace(ns).List(ctx, sel); err == nil {
				for _, o := range l.Items {
					s, _, _ := unstructured.NestedString(o.Object, "spec", "version")
					v.mu.Lock()
					v.cp = appendNew(v.cp, s)
					v.mu.Unlock()
				}
			}
			if l, err := k.Dynamic.Resource(kube.V1Beta1MachineDeployments).Namespace(ns).List(ctx, sel); err == nil {
				for _, o := range l.Items {
					s, _, _ := unstructured.NestedString(o.Object, "spec", "template", "spec", "version")
					v.mu.Lock()
					v.workers = appendNew(v.workers, s)
					v.mu.Unlock()
				}
			}
			if c, err := k.Dynamic.Resource(v1beta2Clusters).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{}); err == nil {
				p := fmt.Sprintf("cp=%v workers=%v", planOf(c, "controlPlane"), planOf(c, "workers"))
				v.mu.Lock()
				v.plans = appendNew(v.plans, p)
				v.mu.Unlock()
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	return v
}
