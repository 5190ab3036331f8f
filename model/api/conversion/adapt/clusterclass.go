package adapt

import (
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// ClusterClassToHub is the v1beta2 ClusterClass Cluster API holds for a v1beta1 one
// (Convert_v1beta1_ClusterClass_To_v1beta2_ClusterClass and ConvertClusterClassV1Beta1ToHub): the
// templates' references become template references (apiVersion, kind, name: the class's namespace
// is implied), naming strategies, health checks, timeouts and strategies their v1beta2 shapes, and
// the v1beta1 conditions move to status.deprecated. Nil is nil.
func ClusterClassToHub(in *v1beta1.ClusterClass) *v1beta2.ClusterClass {
	if in == nil {
		return nil
	}
	out := &v1beta2.ClusterClass{ObjectMeta: in.ObjectMeta}
	out.APIVersion, out.Kind = v1beta2.GroupVersion.String(), "ClusterClass"
	s := &in.Spec
	out.Spec = v1beta2.ClusterClassSpec{
		AvailabilityGates:  availabilityGatesToHub(s.AvailabilityGates),
		ControlPlane:       controlPlaneClassToHub(&s.ControlPlane),
		Variables:          ClusterClassVariablesToHub(s.Variables),
		Patches:            ClusterClassPatchesToHub(s.Patches),
		KubernetesVersions: s.KubernetesVersions,
	}
	if s.Infrastructure != nil {
		out.Spec.Infrastructure.TemplateRef = templateRefToHub(s.Infrastructure)
	}
	if n := s.InfrastructureNamingStrategy; n != nil {
		out.Spec.Infrastructure.Naming.Template = deref(n.Template)
	}
	if s.Workers.MachineDeployments != nil {
		out.Spec.Workers.MachineDeployments = make([]v1beta2.MachineDeploymentClass, len(s.Workers.MachineDeployments))
		for i := range s.Workers.MachineDeployments {
			out.Spec.Workers.MachineDeployments[i] = machineDeploymentClassToHub(&s.Workers.MachineDeployments[i])
		}
	}
	if s.Workers.MachinePools != nil {
		out.Spec.Workers.MachinePools = make([]v1beta2.MachinePoolClass, len(s.Workers.MachinePools))
		for i := range s.Workers.MachinePools {
			out.Spec.Workers.MachinePools[i] = machinePoolClassToHub(&s.Workers.MachinePools[i])
		}
	}
	if u := s.Upgrade; u != nil && u.External != nil {
		out.Spec.Upgrade.External.GenerateUpgradePlanExtension = u.External.GenerateUpgradePlanExtension
	}

	st := &in.Status
	out.Status = v1beta2.ClusterClassStatus{Variables: ClusterClassStatusVariablesToHub(st.Variables), ObservedGeneration: st.ObservedGeneration}
	if st.V1Beta2 != nil {
		out.Status.Conditions = st.V1Beta2.Conditions
	}
	if st.Conditions != nil {
		out.Status.Deprecated = &v1beta2.V1Beta1ConditionsDeprecatedStatus{V1Beta1: &v1beta2.V1Beta1ConditionsStatus{Conditions: conditionsToHub(st.Conditions)}}
	}
	return out
}

// templateRefToHub is convert_v1beta1_LocalObjectTemplate_To_v1beta2_ClusterClassTemplateReference:
// the reference's apiVersion, kind and name (its namespace is the class's, and dropped).
func templateRefToHub(in *v1beta1.LocalObjectTemplate) v1beta2.ClusterClassTemplateReference {
	if in == nil || in.Ref == nil {
		return v1beta2.ClusterClassTemplateReference{}
	}
	return v1beta2.ClusterClassTemplateReference{Kind: in.Ref.Kind, Name: in.Ref.Name, APIVersion: in.Ref.APIVersion}
}

// controlPlaneClassToHub is Convert_v1beta1_ControlPlaneClass_To_v1beta2_ControlPlaneClass.
func controlPlaneClassToHub(in *v1beta1.ControlPlaneClass) v1beta2.ControlPlaneClass {
	out := v1beta2.ControlPlaneClass{
		Metadata:       objectMetaToHub(in.Metadata),
		TemplateRef:    templateRefToHub(&in.LocalObjectTemplate),
		Deletion:       deletionToHub(in.NodeDrainTimeout, in.NodeVolumeDetachTimeout, in.NodeDeletionTimeout),
		Taints:         taintsToHub(in.Taints),
		ReadinessGates: readinessGatesToHub(in.ReadinessGates),
	}
	if in.MachineInfrastructure != nil {
		out.MachineInfrastructure.TemplateRef = templateRefToHub(in.MachineInfrastructure)
	}
	if in.MachineHealthCheck != nil {
		out.HealthCheck.Checks, out.HealthCheck.Remediation.TriggerIf, out.HealthCheck.Remediation.TemplateRef = healthCheckToHub(in.MachineHealthCheck)
	}
	if n := in.NamingStrategy; n != nil {
		out.Naming.Template = deref(n.Template)
	}
	return out
}

// machineDeploymentClassToHub is Convert_v1beta1_MachineDeploymentClass_To_v1beta2_MachineDeploymentClass:
// the template's parts move up, the strategy splits into rollout.strategy, deletion.order (from
// rollingUpdate.deletePolicy) and healthCheck.remediation.maxInFlight.
func machineDeploymentClassToHub(in *v1beta1.MachineDeploymentClass) v1beta2.MachineDeploymentClass {
	out := v1beta2.MachineDeploymentClass{
		Metadata:        objectMetaToHub(in.Template.Metadata),
		Class:           in.Class,
		Bootstrap:       v1beta2.ClassTemplate{TemplateRef: templateRefToHub(&in.Template.Bootstrap)},
		Infrastructure:  v1beta2.ClassTemplate{TemplateRef: templateRefToHub(&in.Template.Infrastructure)},
		FailureDomain:   deref(in.FailureDomain),
		Taints:          taintsToHub(in.Taints),
		MinReadySeconds: in.MinReadySeconds,
		ReadinessGates:  readinessGatesToHub(in.ReadinessGates),
	}
	out.Rollout.Strategy, out.Deletion.Order, out.HealthCheck.Remediation.MaxInFlight = strategyToHub(in.Strategy)
	d := deletionToHub(in.NodeDrainTimeout, in.NodeVolumeDetachTimeout, in.NodeDeletionTimeout)
	out.Deletion.NodeDrainTimeoutSeconds, out.Deletion.NodeVolumeDetachTimeoutSeconds, out.Deletion.NodeDeletionTimeoutSeconds =
		d.NodeDrainTimeoutSeconds, d.NodeVolumeDetachTimeoutSeconds, d.NodeDeletionTimeoutSeconds
	if in.MachineHealthCheck != nil {
		out.HealthCheck.Checks, out.HealthCheck.Remediation.TriggerIf, out.HealthCheck.Remediation.TemplateRef = healthCheckToHub(in.MachineHealthCheck)
	}
	if n := in.NamingStrategy; n != nil {
		out.Naming.Template = deref(n.Template)
	}
	return out
}

// strategyToHub splits a MachineDeployment strategy (of a class or a topology) as Cluster API does.
func strategyToHub(in *v1beta1.MachineDeploymentStrategy) (v1beta2.MachineDeploymentRolloutStrategy, v1beta2.MachineSetDeletionOrder, *intstr.IntOrString) {
	var strategy v1beta2.MachineDeploymentRolloutStrategy
	var order v1beta2.MachineSetDeletionOrder
	var maxInFlight *intstr.IntOrString
	if in == nil {
		return strategy, order, maxInFlight
	}
	strategy.Type = v1beta2.MachineDeploymentRolloutStrategyType(in.Type)
	if ru := in.RollingUpdate; ru != nil {
		strategy.RollingUpdate.MaxUnavailable = ru.MaxUnavailable
		strategy.RollingUpdate.MaxSurge = ru.MaxSurge
		if ru.DeletePolicy != nil {
			order = v1beta2.MachineSetDeletionOrder(*ru.DeletePolicy)
		}
	}
	if r := in.Remediation; r != nil && r.MaxInFlight != nil {
		maxInFlight = r.MaxInFlight
	}
	return strategy, order, maxInFlight
}

// machinePoolClassToHub is Convert_v1beta1_MachinePoolClass_To_v1beta2_MachinePoolClass.
func machinePoolClassToHub(in *v1beta1.MachinePoolClass) v1beta2.MachinePoolClass {
	out := v1beta2.MachinePoolClass{
		Metadata:        objectMetaToHub(in.Template.Metadata),
		Class:           in.Class,
		Bootstrap:       v1beta2.ClassTemplate{TemplateRef: templateRefToHub(&in.Template.Bootstrap)},
		Infrastructure:  v1beta2.ClassTemplate{TemplateRef: templateRefToHub(&in.Template.Infrastructure)},
		FailureDomains:  in.FailureDomains,
		Deletion:        deletionToHub(in.NodeDrainTimeout, in.NodeVolumeDetachTimeout, in.NodeDeletionTimeout),
		Taints:          taintsToHub(in.Taints),
		MinReadySeconds: in.MinReadySeconds,
	}
	if n := in.NamingStrategy; n != nil {
		out.Naming.Template = deref(n.Template)
	}
	return out
}

// ClusterClassPatchesToHub converts a class's patches (Convert_v1beta1_ClusterClassPatch_To_v1beta2_ClusterClassPatch
// and ConvertClusterClassV1Beta1ToHub): the optional strings (enabledIf, valueFrom's variable and
// template, the external handlers) become plain strings, empty meaning unset, and matchResources'
// booleans are true or unset. The external handlers take their v1beta2 names
// (generatePatchesExtension, validateTopologyExtension).
func ClusterClassPatchesToHub(in []v1beta1.ClusterClassPatch) []v1beta2.ClusterClassPatch {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.ClusterClassPatch, len(in))
	for i, p := range in {
		o := v1beta2.ClusterClassPatch{Name: p.Name, Description: p.Description, EnabledIf: deref(p.EnabledIf)}
		if p.Definitions != nil {
			o.Definitions = make([]v1beta2.PatchDefinition, len(p.Definitions))
		}
		for j, d := range p.Definitions {
			m := d.Selector.MatchResources
			od := v1beta2.PatchDefinition{Selector: v1beta2.PatchSelector{APIVersion: d.Selector.APIVersion, Kind: d.Selector.Kind,
				MatchResources: v1beta2.PatchSelectorMatch{ControlPlane: trueOrNil(m.ControlPlane), InfrastructureCluster: trueOrNil(m.InfrastructureCluster)}}}
			if c := m.MachineDeploymentClass; c != nil {
				od.Selector.MatchResources.MachineDeploymentClass = &v1beta2.PatchSelectorMatchClasses{Names: c.Names}
			}
			if c := m.MachinePoolClass; c != nil {
				od.Selector.MatchResources.MachinePoolClass = &v1beta2.PatchSelectorMatchClasses{Names: c.Names}
			}
			if d.JSONPatches != nil {
				od.JSONPatches = make([]v1beta2.JSONPatch, len(d.JSONPatches))
			}
			for k, jp := range d.JSONPatches {
				od.JSONPatches[k] = v1beta2.JSONPatch{Op: jp.Op, Path: jp.Path, Value: jp.Value}
				if vf := jp.ValueFrom; vf != nil {
					od.JSONPatches[k].ValueFrom = &v1beta2.JSONPatchValue{Variable: deref(vf.Variable), Template: deref(vf.Template)}
				}
			}
			o.Definitions[j] = od
		}
		if e := p.External; e != nil {
			o.External = &v1beta2.ExternalPatchDefinition{GeneratePatchesExtension: deref(e.GenerateExtension),
				ValidateTopologyExtension: deref(e.ValidateExtension), DiscoverVariablesExtension: deref(e.DiscoverVariablesExtension),
				Settings: e.Settings}
		}
		out[i] = o
	}
	return out
}
