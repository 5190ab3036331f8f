//go:build realcapi

package realcapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/tests/stacktest"
	"github.com/topoflow/topoflow/workflows"
)

// quietFor is how long the takeover and the hand-back are watched for changes (the issue's
// measure: the two minutes after the new owner's first pass over every Cluster).
const quietFor = 2 * time.Minute

// takeoverResources are the Cluster and every object of its topology, read in the version
// Cluster API stores (v1beta2), so no conversion adds or drops anything between two reads.
var takeoverResources = []schema.GroupVersionResource{
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"},
	{Group: "controlplane.cluster.x-k8s.io", Version: "v1beta2", Resource: "kubeadmcontrolplanes"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devclusters"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devmachinetemplates"},
	{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devmachines"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Resource: "kubeadmconfigtemplates"},
	{Group: "bootstrap.cluster.x-k8s.io", Version: "v1beta2", Resource: "kubeadmconfigs"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinesets"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"},
	{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinehealthchecks"},
}

// topoflowManager says whether a field manager is one of topoflow's own, besides Cluster API's
// capi-topology (whose record must stay exactly as Cluster API left it).
func topoflowManager(m string) bool {
	return m != labels.FieldManager && slices.Contains(activities.FieldManagers(), m)
}

// objectFacts is what a takeover must not change about one object.
type objectFacts struct {
	UID             string            `json:"uid"`
	Generation      int64             `json:"generation"`
	Spec            string            `json:"spec"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
	OwnerReferences string            `json:"ownerReferences,omitempty"`
	// Topology is capi-topology's managedFields record (API version and fields) on the object.
	Topology string `json:"topology,omitempty"`
	// Topoflow lists the records of topoflow's own managers.
	Topoflow []string `json:"topoflow,omitempty"`
	// Conditions are the Cluster's topology conditions, type=status/reason.
	Conditions []string `json:"conditions,omitempty"`
}

// snapshot reads the facts of every object in ns, keyed by kind/name.
func snapshot(t *testing.T, ctx context.Context, k *kube.Client, ns string) map[string]objectFacts {
	t.Helper()
	out := map[string]objectFacts{}
	for _, gvr := range takeoverResources {
		list, err := k.Dynamic.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err, "listing %s", gvr.Resource)
		for _, o := range list.Items {
			out[o.GetKind()+"/"+o.GetName()] = factsOf(&o)
		}
	}
	return out
}

func factsOf(o *unstructured.Unstructured) objectFacts {
	js := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	// A Cluster of a class with revisions is pinned to one (docs/class-revisions.md): topoflow's
	// record of what its topology is computed from, not a change of it. Those two annotations are
	// all the revisions' field manager (revision.FieldManager, not among topoflowManager's) writes.
	annotations := maps.Clone(o.GetAnnotations())
	delete(annotations, revision.PinAnnotation)
	delete(annotations, revision.AppliedAnnotation)
	f := objectFacts{UID: string(o.GetUID()), Generation: o.GetGeneration(), Spec: js(o.Object["spec"]),
		Labels: o.GetLabels(), Annotations: annotations}
	if refs := o.GetOwnerReferences(); len(refs) > 0 {
		f.OwnerReferences = js(refs)
	}
	for _, mf := range o.GetManagedFields() {
		switch {
		case mf.Manager == labels.FieldManager:
			f.Topology += fmt.Sprintf("%s %s %s %s;", mf.Operation, mf.Subresource, mf.APIVersion, js(mf.FieldsV1))
		case topoflowManager(mf.Manager):
			f.Topoflow = append(f.Topoflow, fmt.Sprintf("%s %s %s", mf.Manager, mf.Operation, mf.Subresource))
		}
	}
	if o.GetKind() == "Cluster" {
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if typ, _ := m["type"].(string); typ == "TopologyReconciled" || typ == "ClusterUpgrading" {
				f.Conditions = append(f.Conditions, fmt.Sprintf("%s=%v/%v", typ, m["status"], m["reason"]))
			}
		}
		sort.Strings(f.Conditions)
	}
	return f
}

// changes lists how now differs from was: objects created, deleted or replaced, and every fact
// that moved.
func changes(was, now map[string]objectFacts) []string {
	var out []string
	for key, w := range was {
		n, ok := now[key]
		switch {
		case !ok:
			out = append(out, key+" deleted")
		case n.UID != w.UID:
			out = append(out, key+" replaced")
		default:
			wj, _ := json.Marshal(w)
			nj, _ := json.Marshal(n)
			if string(wj) != string(nj) {
				out = append(out, fmt.Sprintf("%s changed:\n  was %s\n  now %s", key, wj, nj))
			}
		}
	}
	for key := range now {
		if _, ok := was[key]; !ok {
			out = append(out, key+" created")
		}
	}
	sort.Strings(out)
	return out
}

// staysQuiet samples the namespace every few seconds for d and fails with every change against
// was it saw (a change undone within a sample's interval may go unseen; generation never goes back).
func staysQuiet(t *testing.T, ctx context.Context, k *kube.Client, ns string, was map[string]objectFacts, d time.Duration, what string) {
	t.Helper()
	seen := map[string]bool{}
	var found []string
	for end := time.Now().Add(d); ; {
		for _, c := range changes(was, snapshot(t, ctx, k, ns)) {
			if !seen[c] {
				seen[c] = true
				found = append(found, c)
			}
		}
		if time.Now().After(end) {
			break
		}
		time.Sleep(5 * time.Second)
	}
	require.Empty(t, found, "%s: %d objects compared, changes found", what, len(was))
	t.Logf("%s: %d objects compared over %s, changes found: 0", what, len(was), d)
}

// switchTopology hands the stack's topology to owner (deploy/capi/switch.sh).
func switchTopology(t *testing.T, owner string) {
	t.Helper()
	cmd := exec.Command(repoFile("deploy/capi/switch.sh"), owner)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "deploy/capi/switch.sh %s:\n%s", owner, out)
}

// TestTakeoverAndHandBack: Clusters created by Cluster API v1.14.2's own topology controller are
// taken over by topoflow and handed back, and neither move changes anything of them (the
// issue's measure: no object created, deleted or replaced; no generation, spec, label,
// annotation or owner reference change on the Cluster or any object of its topology, MachineSets
// and Machines included; capi-topology's managedFields record unchanged and no new record of a
// topoflow manager; the topology conditions keep their status and reason). In between topoflow
// upgrades one of them by a minor with the hooks answered.
func TestTakeoverAndHandBack(t *testing.T) {
	k := stacktest.Client(t, "tests/capi.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()

	// Cluster API runs the topology; the Clusters are its own.
	switchTopology(t, "clusterapi")
	t.Cleanup(func() { switchTopology(t, "topoflow") }) // as the other tests expect the stack
	ns, ext := namespaceWithExtension(t, ctx, k)
	clusters := []string{"take-a", "take-b"}
	start := time.Now()
	createSettled(t, ctx, k, ns, clusters...)
	t.Logf("created by Cluster API in %s", time.Since(start).Round(time.Second))
	require.NotEmpty(t, ext.Calls(t, "AfterControlPlaneInitialized"), "Cluster API called the extension")
	before := snapshot(t, ctx, k, ns)
	// The class opts in to revisions (Cluster API ignores the annotation): the takeover records
	// its first revision from the class as it is and pins both Clusters to it, changing nothing
	// of their topology; the hand-back (switch.sh runs `starter revisions check`) finds them on
	// the newest revision.
	_, err := k.Dynamic.Resource(kube.V1Beta1ClusterClasses).Namespace(ns).Patch(ctx, "sim-memory", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"`+revision.EnabledAnnotation+`":"`+revision.Enabled+`"}}}`), metav1.PatchOptions{FieldManager: testManager})
	require.NoError(t, err)

	// The way in.
	switchTopology(t, "topoflow")
	tc := temporalClient(t, ctx)
	for _, c := range clusters {
		id := workflows.WorkflowID(ns, c)
		stacktest.WaitFor(t, 2*time.Minute, "topoflow's first pass over "+c, func() (bool, string) {
			st, err := clusterstatus.QueryState(ctx, tc, id)
			if err != nil {
				return false, err.Error()
			}
			return st.Passes >= 1, fmt.Sprintf("passes %d", st.Passes)
		})
		stacktest.WaitFor(t, 2*time.Minute, c+" on the class's first revision", func() (bool, string) {
			u, err := k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Get(ctx, c, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			a := u.GetAnnotations()
			return a[revision.PinAnnotation] == "sim-memory-1" && a[revision.AppliedAnnotation] == "sim-memory-1", fmt.Sprint(a)
		})
	}
	staysQuiet(t, ctx, k, ns, before, quietFor, "the way in")

	// topoflow upgrades one Cluster by a minor, the extension answering its hooks.
	start = time.Now()
	_, err = k.Dynamic.Resource(kube.V1Beta1Clusters).Namespace(ns).Patch(ctx, clusters[0], types.MergePatchType,
		[]byte(`{"spec":{"topology":{"version":"v1.34.0"}}}`), metav1.PatchOptions{FieldManager: testManager})
	require.NoError(t, err)
	stacktest.WaitFor(t, 6*time.Minute, clusters[0]+" upgraded by topoflow", func() (bool, string) {
		if len(ext.Calls(t, "AfterClusterUpgrade")) == 0 {
			return false, "AfterClusterUpgrade not called yet"
		}
		return settled(ctx, k, ns, clusters[0], "v1.34.0")
	})
	t.Logf("upgraded by topoflow in %s", time.Since(start).Round(time.Second))
	for _, hook := range []string{"BeforeClusterUpgrade", "BeforeControlPlaneUpgrade", "AfterControlPlaneUpgrade", "BeforeWorkersUpgrade", "AfterWorkersUpgrade", "AfterClusterUpgrade"} {
		require.NotEmpty(t, ext.Calls(t, hook), "topoflow called %s", hook)
	}
	// The rollout's old MachineSet is deleted once scaled down. It carries Cluster API's topology
	// finalizer, whose controller is off while topoflow runs the topology: topoflow lets it go,
	// or it would stay in deletion until the hand-back.
	machineSets := schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinesets"}
	stacktest.WaitFor(t, 3*time.Minute, "no MachineSet left in deletion after the upgrade", func() (bool, string) {
		list, err := k.Dynamic.Resource(machineSets).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var deleting []string
		for _, ms := range list.Items {
			if ms.GetDeletionTimestamp() != nil {
				deleting = append(deleting, fmt.Sprintf("%s %v", ms.GetName(), ms.GetFinalizers()))
			}
		}
		return len(deleting) == 0, fmt.Sprintf("deleting: %v", deleting)
	})
	// What the upgrade wrote is the new baseline; the hand-back must keep it.
	upgraded := snapshot(t, ctx, k, ns)

	// The way back.
	switchTopology(t, "clusterapi")
	hooksBefore := len(ext.Calls(t, ""))
	staysQuiet(t, ctx, k, ns, upgraded, quietFor, "the way back")
	var again []string
	for _, c := range ext.Calls(t, "")[hooksBefore:] {
		again = append(again, c.key())
	}
	require.Empty(t, again, "Cluster API called no hook again after the hand-back")
}

// temporalClient dials the stack's Temporal (the env file's TEMPORAL_ADDRESS).
func temporalClient(t *testing.T, ctx context.Context) client.Client {
	t.Helper()
	if os.Getenv("TEMPORAL_ADDRESS") == "" {
		t.Skip("TEMPORAL_ADDRESS is not set: run through tests/capi.sh")
	}
	tc, err := temporalx.Dial(ctx, temporalx.Options{}.FromEnv(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	return tc
}
