package contract

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A control plane provider declares, with a label on its CRD, which contract each of its API
// versions follows: "cluster.x-k8s.io/<contract>: <version>[_<version>...]" (Cluster API's
// contract.GetContractVersionForVersion). The v1beta2 contract (Cluster API v1.11+) moved the
// machine template's fields under spec.machineTemplate.spec: the infrastructure reference as a
// contract reference ({apiGroup, kind, name}), the node timeouts as whole seconds under deletion,
// readiness gates and taints (ControlPlaneMachineTemplate's InfrastructureRef,
// NodeDrainTimeoutSeconds, ReadinessGates(contractVersion), Taints(contractVersion)).

// Contracts a provider version follows.
const (
	V1Beta1 = "v1beta1"
	V1Beta2 = "v1beta2"
)

// The control plane's v1beta2-contract paths.
var (
	ControlPlaneInfrastructureRefV1Beta2 = Path{"spec", "machineTemplate", "spec", "infrastructureRef"}
	ControlPlaneMachineTaintsV1Beta2     = Path{"spec", "machineTemplate", "spec", "taints"}
	ControlPlaneReadinessGatesV1Beta2    = Path{"spec", "machineTemplate", "spec", "readinessGates"}
	ControlPlaneDeletionV1Beta2          = Path{"spec", "machineTemplate", "spec", "deletion"}
)

// labelPrefix starts the contract labels of a provider CRD.
const labelPrefix = "cluster.x-k8s.io/"

// VersionOf is the contract a provider's API version follows, from its CRD's labels ("" when no
// label names the version: Cluster API refuses such a provider; topoflow's simulated providers
// carry no labels and are read by the v1beta1 contract).
func VersionOf(crdLabels map[string]string, apiVersion string) string {
	for k, v := range crdLabels {
		contract, ok := strings.CutPrefix(k, labelPrefix)
		if !ok {
			continue
		}
		for _, served := range strings.Split(v, "_") {
			if served == apiVersion {
				return contract
			}
		}
	}
	return ""
}

// ControlPlaneMachineInfrastructureRef is the control plane's reference to its machine template,
// by either contract (nil: none). A v1beta2-contract reference names no version: its APIVersion
// is the API group alone.
func ControlPlaneMachineInfrastructureRef(cp *unstructured.Unstructured) (*corev1.ObjectReference, error) {
	if cp == nil {
		return nil, nil
	}
	if ref, err := ObjectRef(cp, ControlPlaneInfrastructureRef); err != nil || ref != nil {
		return ref, err
	}
	m, ok, _ := unstructured.NestedStringMap(cp.Object, ControlPlaneInfrastructureRefV1Beta2...)
	if !ok || m["kind"] == "" || m["name"] == "" {
		return nil, nil
	}
	return &corev1.ObjectReference{APIVersion: m["apiGroup"], Kind: m["kind"], Name: m["name"]}, nil
}
