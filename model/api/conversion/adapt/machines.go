package adapt

import (
	"fmt"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// MachineDeploymentToHub is the v1beta2 MachineDeployment Cluster API holds for a v1beta1 one
// (Convert_v1beta1_MachineDeployment_To_v1beta2_MachineDeployment and
// ConvertMachineDeploymentV1Beta1ToHub): the machine template's references become contract
// references and it takes the pool's minReadySeconds, the strategy splits into rollout, deletion
// and remediation, and the status keeps the v1beta2 counters and conditions, the v1beta1 ones
// (updatedReplicas, unavailableReplicas, ...) moving to status.deprecated.v1beta1. Nil is nil.
// The error is a reference whose apiVersion does not parse.
func MachineDeploymentToHub(in *v1beta1.MachineDeployment) (*v1beta2.MachineDeployment, error) {
	if in == nil {
		return nil, nil
	}
	out := &v1beta2.MachineDeployment{ObjectMeta: in.ObjectMeta}
	out.APIVersion, out.Kind = v1beta2.GroupVersion.String(), "MachineDeployment"
	s := &in.Spec
	out.Spec = v1beta2.MachineDeploymentSpec{ClusterName: s.ClusterName, Replicas: s.Replicas, Selector: s.Selector, Paused: trueOrNil(s.Paused)}
	var err error
	if out.Spec.Template, err = machineTemplateToHub(&s.Template, s.MinReadySeconds); err != nil {
		return nil, fmt.Errorf("MachineDeployment %s/%s spec.template.spec: %w", in.Namespace, in.Name, err)
	}
	out.Spec.Rollout.Strategy, out.Spec.Deletion.Order, out.Spec.Remediation.MaxInFlight = strategyToHub(s.Strategy)
	if s.RolloutAfter != nil && !s.RolloutAfter.IsZero() {
		out.Spec.Rollout.After = *s.RolloutAfter
	}
	if n := s.MachineNamingStrategy; n != nil {
		out.Spec.MachineNaming.Template = deref(n.Template)
	}

	st := &in.Status
	out.Status = v1beta2.MachineDeploymentStatus{
		ObservedGeneration: st.ObservedGeneration,
		Selector:           st.Selector,
		Replicas:           ptrTo(st.Replicas),
		Versions:           statusVersionsToHub(st.Versions),
		Phase:              st.Phase,
	}
	if v := st.V1Beta2; v != nil {
		out.Status.Conditions, out.Status.ReadyReplicas, out.Status.AvailableReplicas, out.Status.UpToDateReplicas =
			v.Conditions, v.ReadyReplicas, v.AvailableReplicas, v.UpToDateReplicas
	}
	d := &v1beta2.MachineDeploymentV1Beta1DeprecatedStatus{UpdatedReplicas: st.UpdatedReplicas, ReadyReplicas: st.ReadyReplicas,
		AvailableReplicas: st.AvailableReplicas, UnavailableReplicas: st.UnavailableReplicas}
	if st.Conditions != nil {
		d.Conditions = conditionsToHub(st.Conditions)
	}
	out.Status.Deprecated = &v1beta2.MachineDeploymentDeprecatedStatus{V1Beta1: d}
	return out, nil
}

// machineTemplateToHub is the machine template of a pool: Convert_v1beta1_MachineSpec_To_v1beta2_MachineSpec
// and what the webhook adds (convertMachineSpecToContractVersionedObjectReference, the pool's
// minReadySeconds).
func machineTemplateToHub(in *v1beta1.MachineTemplateSpec, minReadySeconds *int32) (v1beta2.MachineTemplateSpec, error) {
	s := &in.Spec
	out := v1beta2.MachineTemplateSpec{ObjectMeta: objectMetaToHub(in.ObjectMeta), Spec: v1beta2.MachineSpec{
		ClusterName:     s.ClusterName,
		Bootstrap:       v1beta2.Bootstrap{DataSecretName: s.Bootstrap.DataSecretName},
		Version:         deref(s.Version),
		ProviderID:      deref(s.ProviderID),
		FailureDomain:   deref(s.FailureDomain),
		MinReadySeconds: minReadySeconds,
		ReadinessGates:  readinessGatesToHub(s.ReadinessGates),
		Deletion:        deletionToHub(s.NodeDrainTimeout, s.NodeVolumeDetachTimeout, s.NodeDeletionTimeout),
		Taints:          taintsToHub(s.Taints),
	}}
	var err error
	if out.Spec.InfrastructureRef, err = contractRefToHub(&s.InfrastructureRef); err != nil {
		return out, fmt.Errorf("infrastructureRef: %w", err)
	}
	if out.Spec.Bootstrap.ConfigRef, err = contractRefToHub(s.Bootstrap.ConfigRef); err != nil {
		return out, fmt.Errorf("bootstrap.configRef: %w", err)
	}
	return out, nil
}
