// Package labels holds the label and annotation keys Cluster API (and so topoflow) puts on
// topology objects. They are wire format: change none of them.
package labels

const (
	// ClusterName is set on every object that belongs to a Cluster.
	ClusterName = "cluster.x-k8s.io/cluster-name"
	// TopologyOwned marks objects generated from a Cluster topology (value is empty).
	TopologyOwned = "topology.cluster.x-k8s.io/owned"
	// MachineDeploymentName is the topology name of the MachineDeployment an object belongs to.
	MachineDeploymentName = "topology.cluster.x-k8s.io/deployment-name"
	// MachineDeploymentObject names the MachineDeployment (object) a MachineSet or Machine belongs
	// to; Cluster API's MachineDeployment selects its Machines by it.
	MachineDeploymentObject = "cluster.x-k8s.io/deployment-name"
	// MachinePoolName is the topology name of the MachinePool an object belongs to.
	MachinePoolName = "topology.cluster.x-k8s.io/pool-name"
	// ControlPlane marks control plane Machines (and the control plane MachineHealthCheck selector).
	ControlPlane = "cluster.x-k8s.io/control-plane"

	// ClonedFromName and ClonedFromGroupKind record the template an object was cloned from.
	ClonedFromName      = "cluster.x-k8s.io/cloned-from-name"
	ClonedFromGroupKind = "cluster.x-k8s.io/cloned-from-groupkind"

	// Paused stops all reconciliation of the annotated Cluster.
	Paused = "cluster.x-k8s.io/paused"
	// UpgradeConcurrency on a Cluster raises how many worker pools upgrade at once (default 1).
	UpgradeConcurrency = "topology.cluster.x-k8s.io/upgrade-concurrency"
	// DeferUpgrade on a MachineDeployment/MachinePool keeps it from starting an upgrade.
	DeferUpgrade = "topology.cluster.x-k8s.io/defer-upgrade"
	// HoldUpgradeSequence on a pool holds it and every pool after it.
	HoldUpgradeSequence = "topology.cluster.x-k8s.io/hold-upgrade-sequence"
	// UpgradeStep on a Cluster is the control plane version of the current upgrade step, while an
	// upgrade runs (Cluster API v1.14's ClusterTopologyUpgradeStepAnnotation). KubeadmControlPlane's
	// and the MachineSet controller's preflight checks let machines of that version be created
	// although spec.topology.version is further on; without it a chained upgrade stops at its
	// first intermediate step.
	UpgradeStep = "topology.internal.cluster.x-k8s.io/upgrade-step"
)

// The cluster autoscaler's node group size annotations on a MachineDeployment.
const (
	AutoscalerMinSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
	AutoscalerMaxSize = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
)

// FieldManager is the server-side apply field manager for topology objects; Cluster API uses the
// same, so switching a Cluster between the two causes no ownership conflicts.
const FieldManager = "capi-topology"

// Finalizer is put on Clusters whose topology topoflow manages, so deletion waits for the
// ordered teardown.
const Finalizer = "topology.cluster.x-k8s.io/topoflow"
