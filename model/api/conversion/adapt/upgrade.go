package adapt

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/upgrade"
)

// UpgradeInputFrom is upgrade.InputFrom of v1beta1 objects: the Cluster, its class and the
// current pools converted (ClusterToHub, ClusterClassToHub, MachineDeploymentToHub,
// MachinePoolToHub) right before the call. The control plane is a provider object, read as it is.
func UpgradeInputFrom(cluster *v1beta1.Cluster, class *v1beta1.ClusterClass, cp *unstructured.Unstructured,
	mds map[string]*v1beta1.MachineDeployment, mps map[string]*v1beta1.MachinePool, machines upgrade.MachineVersions, nodes upgrade.NodeVersions) (upgrade.Input, error) {
	c, err := ClusterToHub(cluster)
	if err != nil {
		return upgrade.Input{}, err
	}
	hubMDs, err := MachineDeploymentsToHub(mds)
	if err != nil {
		return upgrade.Input{}, err
	}
	hubMPs, err := MachinePoolsToHub(mps)
	if err != nil {
		return upgrade.Input{}, err
	}
	return upgrade.InputFrom(c, ClusterClassToHub(class), cp, hubMDs, hubMPs, machines, nodes)
}

// UpgradePending is upgrade.Pending of a v1beta1 Cluster. Pending reads the Cluster's annotations,
// which the conversion copies as they are, so it is given the Cluster's metadata alone: a Cluster
// whose references would not convert still answers, as it did in v1beta1.
func UpgradePending(c *v1beta1.Cluster, hook string) bool {
	return upgrade.Pending(&v1beta2.Cluster{ObjectMeta: c.ObjectMeta}, hook)
}

// PoolObjectToHub is a cluster.x-k8s.io/v1beta1 MachineDeployment or MachinePool object (as the
// topology's objects are read) as its v1beta2 object, for upgrade.ObservedPool: read as the
// v1beta1 type (leniently, as ObservedPool reads), converted (MachineDeploymentToHub,
// MachinePoolToHub) and written back as an unstructured object. Any other object, a v1beta2 one
// included, is returned as it is.
func PoolObjectToHub(u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if u.GetAPIVersion() != v1beta1.GroupVersion.String() {
		return u, nil
	}
	var hub any
	switch u.GetKind() {
	case "MachineDeployment":
		var md v1beta1.MachineDeployment
		if _, err := decode.Lenient(u, &md); err != nil {
			return nil, err
		}
		h, err := MachineDeploymentToHub(&md)
		if err != nil {
			return nil, err
		}
		hub = h
	case "MachinePool":
		var mp v1beta1.MachinePool
		if _, err := decode.Lenient(u, &mp); err != nil {
			return nil, err
		}
		h, err := MachinePoolToHub(&mp)
		if err != nil {
			return nil, err
		}
		hub = h
	default:
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hub)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
