package upgrade

import (
	"fmt"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/model/pools"
)

// InputFrom reads a Cluster's upgrade state from the Cluster, its class and its current objects:
// the control plane (nil before creation) and the topology-owned pools by topology name. It is
// the one place that decides what "stable", "rolling out", "deferred" and "held" mean, for the
// apply activity, the plan and the version checks alike. External is left for the caller.
func InputFrom(cluster *clusterv1.Cluster, class *clusterv1.ClusterClass, cp *unstructured.Unstructured,
	mds map[string]*clusterv1.MachineDeployment, mps map[string]*clusterv1.MachinePool, machines MachineVersions, nodes NodeVersions) (Input, error) {
	topo := &cluster.Spec.Topology
	in := Input{Target: topo.Version, KubernetesVersions: class.Spec.KubernetesVersions}
	if n, err := strconv.Atoi(cluster.Annotations[labels.UpgradeConcurrency]); err == nil {
		in.Concurrency = n
	}
	if cp != nil {
		st, err := contract.ReadControlPlane(cp)
		if err != nil {
			return in, err
		}
		in.ControlPlane = ControlPlane{
			Exists:        true,
			SpecVersion:   st.DesiredVersion,
			StatusVersion: st.Version,
			Stable:        st.Stable(),
		}
		if in.ControlPlane.SpecVersion == "" {
			in.ControlPlane.SpecVersion = topo.Version
		}
	}
	// defer-upgrade and hold-upgrade-sequence are read from the pool's topology alone, the user's
	// point of control, as Cluster API's isMachineDeploymentDeferred and isMachinePoolDeferred do
	// (not from the class's pool metadata, nor the object's own annotations, which may be stale
	// while the pool is held back). What "rolling out" means differs by kind (mdPool, mpPool).
	for _, t := range pools.Topologies(topo) {
		var p Pool
		if t.MachinePool {
			p = mpPool(t.Name, mps[t.Name], machines != nil, nodes)
		} else {
			p = mdPool(t.Name, mds[t.Name], machines)
		}
		_, p.Defer = t.Metadata.Annotations[labels.DeferUpgrade]
		_, p.Hold = t.Metadata.Annotations[labels.HoldUpgradeSequence]
		in.Pools = append(in.Pools, p)
	}
	return in, nil
}

// ObservedPool reads a MachineDeployment or MachinePool object alone as InputFrom does (its
// Machines and Nodes aside): whether it exists, its version, and whether it converges or rolls out
// by its status.
func ObservedPool(u *unstructured.Unstructured) (Pool, error) {
	switch u.GetKind() {
	case "MachineDeployment":
		var md clusterv1.MachineDeployment
		if _, err := decode.Lenient(u, &md); err != nil {
			return Pool{}, err
		}
		return mdPool(u.GetName(), &md, nil), nil
	case "MachinePool":
		var mp clusterv1.MachinePool
		if _, err := decode.Lenient(u, &mp); err != nil {
			return Pool{}, err
		}
		return mpPool(u.GetName(), &mp, false, nil), nil
	}
	return Pool{}, fmt.Errorf("%s %s is not a pool", u.GetKind(), u.GetName())
}

// MachineVersions are the versions the Machines of each MachineDeployment run, by the
// MachineDeployment's name: each Machine's spec.version and, once its Node reports one, the
// kubelet's. A nil map means Machines are not known (not served, as with the simulated providers,
// or not read, as in a plan from files).
type MachineVersions map[string][]string

// mdPool reads a MachineDeployment. It rolls out (upgrades) while one of its Machines, or its
// Node, runs another version than the MachineDeployment's: Cluster API's
// IsMachineDeploymentUpgrading, so one without Machines yet, or without a status, is not
// upgrading. Where Machines are not known, the replica counts stand in.
func mdPool(name string, md *clusterv1.MachineDeployment, machines MachineVersions) Pool {
	p := Pool{Name: name}
	if md == nil {
		return p
	}
	p.Exists = true
	p.Version = md.Spec.Template.Spec.Version
	want := int32(1)
	if md.Spec.Replicas != nil {
		want = *md.Spec.Replicas
	}
	// The v1beta1 counters (updatedReplicas, unavailableReplicas), which v1beta2 keeps under
	// status.deprecated.v1beta1; replicas is the same counter in both.
	s := md.Status
	var counters clusterv1.MachineDeploymentV1Beta1DeprecatedStatus
	if s.Deprecated != nil && s.Deprecated.V1Beta1 != nil {
		counters = *s.Deprecated.V1Beta1
	}
	p.Converging = s.ObservedGeneration < md.Generation || counters.UpdatedReplicas != want || deref(s.Replicas) != want || counters.UnavailableReplicas != 0
	p.RollingOut = p.Converging
	if machines != nil {
		p.RollingOut = p.Version != "" && slices.ContainsFunc(machines[md.Name], func(v string) bool { return v != "" && v != p.Version })
	}
	return p
}

// NodeVersions are the kubelet versions of each MachinePool's Nodes (its status.nodeRefs, read
// from the workload cluster), by the MachinePool's name. A nil map means they were not read: no
// MachinePool has Nodes yet (Cluster API connects to the workload cluster only then), or a plan
// from files.
type NodeVersions map[string][]string

// mpPool reads a MachinePool. Where its Nodes are known it rolls out (upgrades) while one of them
// runs another kubelet version than the MachinePool's, one not reporting a version included:
// Cluster API's IsMachinePoolUpgrading. Beside Cluster API (machinesServed) one without Nodes is
// not upgrading. With neither, as with the simulated providers, the replica counts and phase stand
// in.
func mpPool(name string, mp *clusterv1.MachinePool, machinesServed bool, nodes NodeVersions) Pool {
	p := Pool{Name: name, MachinePool: true}
	if mp == nil {
		return p
	}
	p.Exists = true
	p.Version = mp.Spec.Template.Spec.Version
	want := int32(1)
	if mp.Spec.Replicas != nil {
		want = *mp.Spec.Replicas
	}
	// The v1beta1 readyReplicas, which v1beta2 keeps under status.deprecated.v1beta1 (its own
	// readyReplicas counts Machines by the v1beta2 Ready condition).
	var ready int32
	if d := mp.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		ready = d.V1Beta1.ReadyReplicas
	}
	p.Converging = mp.Status.ObservedGeneration < mp.Generation || ready != want || mp.Status.Phase == "ScalingUp"
	kubelets, known := nodes[mp.Name]
	switch {
	case known && len(mp.Status.NodeRefs) > 0:
		p.RollingOut = p.Version != "" && slices.ContainsFunc(kubelets, func(v string) bool { return v != p.Version })
	case machinesServed:
		p.RollingOut = false
	default:
		p.RollingOut = p.Converging
	}
	return p
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
