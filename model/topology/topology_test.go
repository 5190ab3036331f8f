package topology

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/model/api/conversion"
	v1 "github.com/topoflow/topoflow/model/api/v1beta1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/upgrade"
)

// world is the sample Cluster after its creation at v1.31.2, everything settled: a pass's input.
type world struct {
	in Input
}

func sampleWorld(t *testing.T) *world {
	t.Helper()
	d := desired.Input{Templates: map[string]*unstructured.Unstructured{}, Names: names.Source{Seed: 3}}
	for _, f := range []string{"clusterclass.yaml", "cluster.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "samples", f))
		require.NoError(t, err)
		docs, err := decode.Documents(bytes.NewReader(data))
		require.NoError(t, err)
		for _, doc := range docs {
			switch doc.GetKind() {
			case "ClusterClass":
				class := &v1.ClusterClass{}
				require.NoError(t, decode.FromUnstructured(doc, class))
				var err error
				d.Class, err = conversion.ClusterClassToHub(class)
				require.NoError(t, err)
			case "Cluster":
				cluster := &v1.Cluster{}
				require.NoError(t, decode.FromUnstructured(doc, cluster))
				cluster.UID = "uid-demo"
				var err error
				d.Cluster, err = conversion.ClusterToHub(cluster)
				require.NoError(t, err)
			default:
				d.Templates[keyOf(doc)] = doc
			}
		}
	}
	// Create, then record what was created as the current state, settled.
	first, err := desired.Compute(d)
	require.NoError(t, err)
	d.Cluster.Spec.InfrastructureRef, d.Cluster.Spec.ControlPlaneRef = hubRef(first.InfrastructureRef), hubRef(first.ControlPlaneRef)
	cp := first.ControlPlane.DeepCopy()
	require.NoError(t, unstructured.SetNestedMap(cp.Object, map[string]any{"version": "v1.31.2", "initialized": true, "ready": true, "replicas": int64(3), "updatedReplicas": int64(3), "readyReplicas": int64(3), "unavailableReplicas": int64(0)}, "status"))
	d.Current = desired.Current{
		InfrastructureCluster: first.InfrastructureCluster, ControlPlane: cp,
		MachineDeployments: map[string]*clusterv1.MachineDeployment{}, MachinePools: map[string]*clusterv1.MachinePool{},
		Templates: map[string]*unstructured.Unstructured{keyOf(first.ControlPlaneInfrastructureTemplate): first.ControlPlaneInfrastructureTemplate},
	}
	for _, md := range first.MachineDeployments {
		o := md.Object.DeepCopy()
		o.Status.Replicas = ptr(*o.Spec.Replicas)
		o.Status.Deprecated = &clusterv1.MachineDeploymentDeprecatedStatus{V1Beta1: &clusterv1.MachineDeploymentV1Beta1DeprecatedStatus{UpdatedReplicas: *o.Spec.Replicas}}
		d.Current.MachineDeployments[md.TopologyName] = o
		d.Current.Templates[keyOf(md.BootstrapTemplate)] = md.BootstrapTemplate
		d.Current.Templates[keyOf(md.InfraTemplate)] = md.InfraTemplate
		d.Current.PoolTemplates = append(d.Current.PoolTemplates, md.BootstrapTemplate, md.InfraTemplate)
		if md.MachineHealthCheck != nil {
			d.Current.MachineHealthChecks = append(d.Current.MachineHealthChecks, md.MachineHealthCheck)
		}
	}
	if mhc := first.ControlPlaneMachineHealthCheck; mhc != nil {
		d.Current.MachineHealthChecks = append(d.Current.MachineHealthChecks, mhc)
	}
	for _, mp := range first.MachinePools {
		o := mp.Object.DeepCopy()
		o.Status.Deprecated = &clusterv1.MachinePoolDeprecatedStatus{V1Beta1: &clusterv1.MachinePoolV1Beta1DeprecatedStatus{ReadyReplicas: *o.Spec.Replicas}}
		d.Current.MachinePools[mp.TopologyName] = o
	}
	return &world{in: Input{Desired: d}}
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind())
	}
	return out
}

func (w *world) decide(t *testing.T) *Decision {
	t.Helper()
	dec, err := Decide(w.in)
	require.NoError(t, err)
	return dec
}

// TestSettledClusterWritesEverything: nothing waits, every object is written.
func TestSettledClusterWritesEverything(t *testing.T) {
	dec := sampleWorld(t).decide(t)
	assert.False(t, dec.Result.InProgress)
	assert.Empty(t, dec.State.PendingObjects())
	objs, err := dec.State.Objects()
	require.NoError(t, err)
	assert.Len(t, objs, 16)
}

// TestPendingUpgrade_updateMachineDeployment: while the control plane takes the new version, the
// pools wait: neither they nor their templates are written, their health checks are, and their
// current templates are kept (Cluster API's updateMachineDeployment and updateMachinePool return
// early for a pool pending an upgrade).
func TestPendingUpgrade_updateMachineDeployment(t *testing.T) {
	w := sampleWorld(t)
	w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
	dec := w.decide(t)
	assert.Equal(t, "v1.32.0", dec.Result.ControlPlane, "the control plane moves first")
	assert.False(t, dec.State.ControlPlanePending)
	objs, err := dec.State.Objects()
	require.NoError(t, err)
	assert.Equal(t, []string{"SimCluster", "SimMachineTemplate", "SimControlPlane", "MachineHealthCheck", "Cluster",
		"MachineHealthCheck", "MachineHealthCheck"}, kinds(objs), "pools wait; their health checks are written")
	pending := dec.State.PendingObjects()
	for _, md := range dec.State.MachineDeployments {
		assert.Equal(t, "pending upgrade", pending["MachineDeployment "+md.Object.Name])
		cur := w.in.Desired.Current.MachineDeployments[md.TopologyName]
		assert.Contains(t, dec.State.Kept, "SimMachineTemplate/default/"+cur.Spec.Template.Spec.InfrastructureRef.Name)
	}
	assert.Equal(t, "pending upgrade", pending["MachinePool "+dec.State.MachinePools[0].Object.Name])
	all, err := dec.State.AllObjects()
	require.NoError(t, err)
	assert.Len(t, all, 16, "AllObjects still shows every desired object")
}

// TestPendingCreate_computeMachineDeploymentVersion: a new pool is not created while the control
// plane is not stable (here: still rolling out its new version).
func TestPendingCreate_computeMachineDeploymentVersion(t *testing.T) {
	w := sampleWorld(t)
	topo := &w.in.Desired.Cluster.Spec.Topology
	topo.Version = "v1.32.0"
	require.NoError(t, unstructured.SetNestedField(w.in.Desired.Current.ControlPlane.Object, "v1.32.0", "spec", "version"))
	topo.Workers.MachineDeployments = append(topo.Workers.MachineDeployments, clusterv1.MachineDeploymentTopology{Class: "default-worker", Name: "md-new"})
	dec := w.decide(t)
	var created *desired.MachineDeployment
	for i := range dec.State.MachineDeployments {
		if dec.State.MachineDeployments[i].TopologyName == "md-new" {
			created = &dec.State.MachineDeployments[i]
		}
	}
	require.NotNil(t, created)
	assert.True(t, created.PendingCreate)
	objs, err := created.Objects()
	require.NoError(t, err)
	assert.Empty(t, objs, "no templates, pool or health check")

	// Once the control plane runs the target, the pool is created.
	require.NoError(t, unstructured.SetNestedField(w.in.Desired.Current.ControlPlane.Object, "v1.32.0", "status", "version"))
	for _, md := range w.in.Desired.Current.MachineDeployments {
		v := "v1.32.0"
		md.Spec.Template.Spec.Version = v
	}
	for _, mp := range w.in.Desired.Current.MachinePools {
		v := "v1.32.0"
		mp.Spec.Template.Spec.Version = v
	}
	dec = w.decide(t)
	assert.Empty(t, dec.State.PendingObjects())
}

// TestControlPlanePending_reconcileControlPlane: a control plane held by BeforeClusterUpgrade is not
// written (nor its machine template), its health check is, and its template is kept.
func TestControlPlanePending_reconcileControlPlane(t *testing.T) {
	w := sampleWorld(t)
	w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
	w.in.Ledger = &upgrade.Ledger{}
	dec := w.decide(t)
	assert.Equal(t, "BeforeClusterUpgrade", dec.HeldBy)
	assert.True(t, dec.State.ControlPlanePending)
	assert.Equal(t, []string{"SimCluster"}, kinds(dec.State.ClusterObjects()))
	ref := w.in.Desired.Cluster.Spec.ControlPlaneRef
	require.NotNil(t, ref)
	pending := dec.State.PendingObjects()
	assert.Equal(t, "pending upgrade", pending["SimControlPlane "+ref.Name])
	assert.Len(t, dec.State.Kept, 1+2*2, "the control plane's machine template and both MachineDeployments' templates")
}

// TestVersionErrorsNameObjectAndField: an impossible version (here a downgrade written while no
// webhook ran) is reported with the Cluster and the field.
func TestVersionErrorsNameObjectAndField(t *testing.T) {
	w := sampleWorld(t)
	w.in.Desired.Cluster.Spec.Topology.Version = "v1.30.0"
	_, err := Decide(w.in)
	require.Error(t, err)
	assert.Equal(t, "Cluster default/demo: spec.topology.version v1.30.0: v1.30.0 is older than v1.31.2, the version the control plane was told to run: downgrades are not supported", err.Error())
}

// TestPendingCreateByControlPlane_IsControlPlaneStable: which new pools a pass holds back, by the
// control plane's state (Cluster API v1.14's computeMachineDeploymentVersion and
// computeMachinePoolVersion with ControlPlaneUpgradeTracker.IsControlPlaneStable): none when the
// control plane is created in the same pass, all while an existing one provisions or upgrades.
func TestPendingCreateByControlPlane_IsControlPlaneStable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		cp      func(w *world)
		pending []string
	}{
		{name: "created in the same pass", cp: func(w *world) {
			w.in.Desired.Current = desired.Current{MachineDeployments: map[string]*clusterv1.MachineDeployment{}, MachinePools: map[string]*clusterv1.MachinePool{},
				Templates: map[string]*unstructured.Unstructured{}}
			w.in.Desired.Cluster.Spec.InfrastructureRef, w.in.Desired.Cluster.Spec.ControlPlaneRef = clusterv1.ContractVersionedObjectReference{}, clusterv1.ContractVersionedObjectReference{}
		}},
		{name: "provisioning (no status version yet)", cp: func(w *world) {
			unstructured.RemoveNestedField(w.in.Desired.Current.ControlPlane.Object, "status", "version")
		}, pending: []string{"md-0", "md-1", "mp-0"}},
		{name: "stable", cp: func(*world) {}},
		{name: "upgrading", cp: func(w *world) {
			w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
			require.NoError(t, unstructured.SetNestedField(w.in.Desired.Current.ControlPlane.Object, "v1.32.0", "spec", "version"))
		}, pending: []string{"md-0", "md-1", "mp-0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sampleWorld(t)
			tc.cp(w)
			// Every pool is new.
			w.in.Desired.Current.MachineDeployments = map[string]*clusterv1.MachineDeployment{}
			w.in.Desired.Current.MachinePools = map[string]*clusterv1.MachinePool{}
			dec := w.decide(t)
			assert.Equal(t, tc.pending, dec.PendingCreates())
			objs, err := dec.State.Objects()
			require.NoError(t, err)
			mds := 0
			for _, o := range objs {
				if o.GetKind() == "MachineDeployment" {
					mds++
				}
			}
			if len(tc.pending) == 0 {
				assert.Equal(t, 2, mds, "both MachineDeployments are written in this pass")
			} else {
				assert.Zero(t, mds)
			}
		})
	}
}

// TestPendingCreateWhileBeforeWorkersUpgradeHolds: with the control plane upgraded and the
// existing pools held by BeforeWorkersUpgrade, a new pool waits too (Cluster API v1.14's
// computeMachineDeploymentVersion: HookResponseTracker.IsBlocking(BeforeWorkersUpgrade)).
func TestPendingCreateWhileBeforeWorkersUpgradeHolds(t *testing.T) {
	w := sampleWorld(t)
	w.in.Desired.Cluster.Spec.Topology.Version = "v1.32.0"
	cp := w.in.Desired.Current.ControlPlane.Object
	require.NoError(t, unstructured.SetNestedField(cp, "v1.32.0", "spec", "version"))
	require.NoError(t, unstructured.SetNestedField(cp, "v1.32.0", "status", "version"))
	w.in.Ledger = &upgrade.Ledger{ApprovedTarget: "v1.32.0", ControlPlaneApproved: "v1.32.0", ControlPlaneAcknowledged: "v1.32.0"}
	delete(w.in.Desired.Current.MachineDeployments, "md-1")
	dec := w.decide(t)
	require.Equal(t, "BeforeWorkersUpgrade", dec.HeldBy)
	assert.Equal(t, []string{"md-1"}, dec.PendingCreates())
}

func ptr[T any](v T) *T { return &v }

// hubRef is a computed reference as the hub's Cluster holds it (a contract reference).
func hubRef(r *corev1.ObjectReference) clusterv1.ContractVersionedObjectReference {
	if r == nil {
		return clusterv1.ContractVersionedObjectReference{}
	}
	return clusterv1.ContractVersionedObjectReference{APIGroup: r.GroupVersionKind().Group, Kind: r.Kind, Name: r.Name}
}
