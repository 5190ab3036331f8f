package adapt

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// ClusterToHub is the v1beta2 Cluster Cluster API holds for a v1beta1 one
// (Convert_v1beta1_Cluster_To_v1beta2_Cluster and ConvertClusterV1Beta1ToHub): the references
// become contract references (API group, kind, name), the topology its v1beta2 shape
// (TopologyToHub), the readiness flags status.initialization, the failure domains a list sorted by
// name, and the v1beta1 conditions and failure move to status.deprecated. Nil is nil. The error is
// a reference whose apiVersion does not parse, as Cluster API's.
func ClusterToHub(in *v1beta1.Cluster) (*v1beta2.Cluster, error) {
	if in == nil {
		return nil, nil
	}
	out := &v1beta2.Cluster{ObjectMeta: in.ObjectMeta}
	out.APIVersion, out.Kind = v1beta2.GroupVersion.String(), "Cluster"
	s := &in.Spec
	out.Spec = v1beta2.ClusterSpec{
		Paused:               trueOrNil(s.Paused),
		ControlPlaneEndpoint: v1beta2.APIEndpoint{Host: s.ControlPlaneEndpoint.Host, Port: s.ControlPlaneEndpoint.Port},
		Topology:             TopologyToHub(s.Topology),
		AvailabilityGates:    availabilityGatesToHub(s.AvailabilityGates),
	}
	if n := s.ClusterNetwork; n != nil {
		out.Spec.ClusterNetwork = v1beta2.ClusterNetwork{APIServerPort: deref(n.APIServerPort), ServiceDomain: n.ServiceDomain}
		if n.Services != nil {
			out.Spec.ClusterNetwork.Services.CIDRBlocks = n.Services.CIDRBlocks
		}
		if n.Pods != nil {
			out.Spec.ClusterNetwork.Pods.CIDRBlocks = n.Pods.CIDRBlocks
		}
	}
	var err error
	if out.Spec.InfrastructureRef, err = contractRefToHub(s.InfrastructureRef); err != nil {
		return nil, fmt.Errorf("Cluster %s/%s spec.infrastructureRef: %w", in.Namespace, in.Name, err)
	}
	if out.Spec.ControlPlaneRef, err = contractRefToHub(s.ControlPlaneRef); err != nil {
		return nil, fmt.Errorf("Cluster %s/%s spec.controlPlaneRef: %w", in.Namespace, in.Name, err)
	}

	st := &in.Status
	out.Status = v1beta2.ClusterStatus{
		Initialization: v1beta2.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(st.InfrastructureReady),
			ControlPlaneInitialized: trueOrNil(st.ControlPlaneReady)},
		Phase:              st.Phase,
		ObservedGeneration: st.ObservedGeneration,
	}
	if v := st.V1Beta2; v != nil {
		out.Status.Conditions = v.Conditions
		if cp := v.ControlPlane; cp != nil {
			out.Status.ControlPlane = &v1beta2.ClusterReplicasStatus{DesiredReplicas: cp.DesiredReplicas, Replicas: cp.Replicas,
				UpToDateReplicas: cp.UpToDateReplicas, ReadyReplicas: cp.ReadyReplicas, AvailableReplicas: cp.AvailableReplicas,
				Versions: statusVersionsToHub(cp.Versions), UpgradePlan: statusUpgradePlanToHub(cp.UpgradePlan)}
		}
		if w := v.Workers; w != nil {
			out.Status.Workers = &v1beta2.ClusterReplicasStatus{DesiredReplicas: w.DesiredReplicas, Replicas: w.Replicas,
				UpToDateReplicas: w.UpToDateReplicas, ReadyReplicas: w.ReadyReplicas, AvailableReplicas: w.AvailableReplicas,
				Versions: statusVersionsToHub(w.Versions), UpgradePlan: statusUpgradePlanToHub(w.UpgradePlan)}
		}
	}
	if st.FailureDomains != nil {
		names := make([]string, 0, len(st.FailureDomains))
		for n := range st.FailureDomains {
			names = append(names, n)
		}
		sort.Strings(names)
		out.Status.FailureDomains = make([]v1beta2.FailureDomain, 0, len(names))
		for _, n := range names {
			fd := st.FailureDomains[n]
			out.Status.FailureDomains = append(out.Status.FailureDomains, v1beta2.FailureDomain{Name: n, ControlPlane: ptrTo(fd.ControlPlane), Attributes: fd.Attributes})
		}
	}
	if st.Conditions != nil || st.FailureReason != nil || st.FailureMessage != nil {
		d := &v1beta2.ClusterV1Beta1DeprecatedStatus{FailureReason: st.FailureReason, FailureMessage: st.FailureMessage}
		if st.Conditions != nil {
			d.Conditions = conditionsToHub(st.Conditions)
		}
		out.Status.Deprecated = &v1beta2.ClusterDeprecatedStatus{V1Beta1: d}
	}
	return out, nil
}

// contractRefToHub is the conversion webhook's convertToContractVersionedObjectReference: a
// reference's API group (not its version), kind and name. Nil is the zero reference.
func contractRefToHub(ref *corev1.ObjectReference) (v1beta2.ContractVersionedObjectReference, error) {
	if ref == nil {
		return v1beta2.ContractVersionedObjectReference{}, nil
	}
	var group string
	if ref.APIVersion != "" {
		gv, err := schema.ParseGroupVersion(ref.APIVersion)
		if err != nil {
			return v1beta2.ContractVersionedObjectReference{}, fmt.Errorf("apiVersion %q: %w", ref.APIVersion, err)
		}
		group = gv.Group
	}
	return v1beta2.ContractVersionedObjectReference{APIGroup: group, Kind: ref.Kind, Name: ref.Name}, nil
}

// TopologyToHub is a Cluster's topology in v1beta2 (Convert_v1beta1_Topology_To_v1beta2_Topology):
// the class is a reference (name and namespace), health checks, timeouts and strategies take their
// v1beta2 shapes, and the variables lose definitionFrom (ClusterVariablesToHub). rolloutAfter,
// which Cluster API does not use, is dropped. Nil is the zero topology (a Cluster without one).
func TopologyToHub(in *v1beta1.Topology) v1beta2.Topology {
	if in == nil {
		return v1beta2.Topology{}
	}
	out := v1beta2.Topology{
		ClassRef:  v1beta2.ClusterClassRef{Name: in.Class, Namespace: in.ClassNamespace},
		Version:   in.Version,
		Variables: ClusterVariablesToHub(in.Variables),
	}
	cp := &in.ControlPlane
	out.ControlPlane = v1beta2.ControlPlaneTopology{
		Metadata:       objectMetaToHub(cp.Metadata),
		Replicas:       cp.Replicas,
		Deletion:       deletionToHub(cp.NodeDrainTimeout, cp.NodeVolumeDetachTimeout, cp.NodeDeletionTimeout),
		Taints:         taintsToHub(cp.Taints),
		ReadinessGates: readinessGatesToHub(cp.ReadinessGates),
	}
	if r := cp.Rollout; r != nil && r.After != nil {
		out.ControlPlane.Rollout.After = *r.After
	}
	if m := cp.MachineHealthCheck; m != nil {
		out.ControlPlane.HealthCheck.Enabled = m.Enable
		out.ControlPlane.HealthCheck.Checks, out.ControlPlane.HealthCheck.Remediation.TriggerIf, out.ControlPlane.HealthCheck.Remediation.TemplateRef =
			healthCheckToHub(&m.MachineHealthCheckClass)
	}
	if v := cp.Variables; v != nil {
		out.ControlPlane.Variables.Overrides = ClusterVariablesToHub(v.Overrides)
	}
	if w := in.Workers; w != nil {
		if w.MachineDeployments != nil {
			out.Workers.MachineDeployments = make([]v1beta2.MachineDeploymentTopology, len(w.MachineDeployments))
			for i := range w.MachineDeployments {
				out.Workers.MachineDeployments[i] = machineDeploymentTopologyToHub(&w.MachineDeployments[i])
			}
		}
		if w.MachinePools != nil {
			out.Workers.MachinePools = make([]v1beta2.MachinePoolTopology, len(w.MachinePools))
			for i := range w.MachinePools {
				out.Workers.MachinePools[i] = machinePoolTopologyToHub(&w.MachinePools[i])
			}
		}
	}
	return out
}

// machineDeploymentTopologyToHub is Convert_v1beta1_MachineDeploymentTopology_To_v1beta2_MachineDeploymentTopology.
func machineDeploymentTopologyToHub(in *v1beta1.MachineDeploymentTopology) v1beta2.MachineDeploymentTopology {
	out := v1beta2.MachineDeploymentTopology{
		Metadata:        objectMetaToHub(in.Metadata),
		Class:           in.Class,
		Name:            in.Name,
		FailureDomain:   deref(in.FailureDomain),
		Replicas:        in.Replicas,
		Taints:          taintsToHub(in.Taints),
		MinReadySeconds: in.MinReadySeconds,
		ReadinessGates:  readinessGatesToHub(in.ReadinessGates),
	}
	if r := in.Rollout; r != nil && r.After != nil {
		out.Rollout.After = *r.After
	}
	out.Rollout.Strategy, out.Deletion.Order, out.HealthCheck.Remediation.MaxInFlight = strategyToHub(in.Strategy)
	d := deletionToHub(in.NodeDrainTimeout, in.NodeVolumeDetachTimeout, in.NodeDeletionTimeout)
	out.Deletion.NodeDrainTimeoutSeconds, out.Deletion.NodeVolumeDetachTimeoutSeconds, out.Deletion.NodeDeletionTimeoutSeconds =
		d.NodeDrainTimeoutSeconds, d.NodeVolumeDetachTimeoutSeconds, d.NodeDeletionTimeoutSeconds
	if m := in.MachineHealthCheck; m != nil {
		out.HealthCheck.Enabled = m.Enable
		out.HealthCheck.Checks, out.HealthCheck.Remediation.TriggerIf, out.HealthCheck.Remediation.TemplateRef = healthCheckToHub(&m.MachineHealthCheckClass)
	}
	if v := in.Variables; v != nil {
		out.Variables.Overrides = ClusterVariablesToHub(v.Overrides)
	}
	return out
}

// machinePoolTopologyToHub is Convert_v1beta1_MachinePoolTopology_To_v1beta2_MachinePoolTopology.
func machinePoolTopologyToHub(in *v1beta1.MachinePoolTopology) v1beta2.MachinePoolTopology {
	out := v1beta2.MachinePoolTopology{
		Metadata:        objectMetaToHub(in.Metadata),
		Class:           in.Class,
		Name:            in.Name,
		FailureDomains:  in.FailureDomains,
		Deletion:        deletionToHub(in.NodeDrainTimeout, in.NodeVolumeDetachTimeout, in.NodeDeletionTimeout),
		Taints:          taintsToHub(in.Taints),
		MinReadySeconds: in.MinReadySeconds,
		Replicas:        in.Replicas,
	}
	if v := in.Variables; v != nil {
		out.Variables.Overrides = ClusterVariablesToHub(v.Overrides)
	}
	return out
}
