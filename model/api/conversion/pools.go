package conversion

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// WorkloadKinds are the cluster.x-k8s.io kinds of the topology topoflow computes as v1beta1 types
// and Cluster API v1.11+ writes as v1beta2 (see ObjectV1Beta2).
var WorkloadKinds = []string{"MachineDeployment", "MachinePool", "MachineHealthCheck"}

// ObjectV1Beta2 converts a cluster.x-k8s.io/v1beta1 MachineDeployment, MachinePool or
// MachineHealthCheck (JSON, as an apply intent carries it) into the v1beta2 object Cluster API's
// conversion webhook makes of it (core/webhooks/conversion, Convert*V1Beta1ToHub): the generated
// conversion, the machine template's references as contract references (API group, kind,
// name), minReadySeconds moved into the machine template, and spec.paused kept only when true.
// The result is what Cluster API's own topology controller would have computed in v1beta2, so an
// apply of it owns the same fields under the same API version.
func ObjectV1Beta2(kind string, v1beta1JSON []byte) (map[string]any, error) {
	in, err := parse(v1beta1JSON)
	if err != nil {
		return nil, err
	}
	return objectV1Beta2(kind, in)
}

func objectV1Beta2(kind string, in map[string]any) (map[string]any, error) {
	switch kind {
	case "MachineDeployment":
		src := &capiv1beta1.MachineDeployment{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta1 MachineDeployment: %w", err)
		}
		dst := &capiv1beta2.MachineDeployment{}
		if err := capiv1beta1.Convert_v1beta1_MachineDeployment_To_v1beta2_MachineDeployment(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachineDeployment %s/%s to v1beta2: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplate(&src.Spec.Template.Spec, src.Spec.MinReadySeconds, &dst.Spec.Template.Spec); err != nil {
			return nil, fmt.Errorf("MachineDeployment %s/%s spec.template.spec: %w", src.Namespace, src.Name, err)
		}
		capiv1beta2.Convert_bool_To_Pointer_bool(src.Spec.Paused, false, nil, &dst.Spec.Paused)
		dst.APIVersion, dst.Kind = capiv1beta2.GroupVersion.String(), kind
		return toMap(dst)
	case "MachinePool":
		src := &capiv1beta1.MachinePool{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta1 MachinePool: %w", err)
		}
		dst := &capiv1beta2.MachinePool{}
		if err := capiv1beta1.Convert_v1beta1_MachinePool_To_v1beta2_MachinePool(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachinePool %s/%s to v1beta2: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplate(&src.Spec.Template.Spec, src.Spec.MinReadySeconds, &dst.Spec.Template.Spec); err != nil {
			return nil, fmt.Errorf("MachinePool %s/%s spec.template.spec: %w", src.Namespace, src.Name, err)
		}
		dst.APIVersion, dst.Kind = capiv1beta2.GroupVersion.String(), kind
		return toMap(dst)
	case "MachineHealthCheck":
		src := &capiv1beta1.MachineHealthCheck{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta1 MachineHealthCheck: %w", err)
		}
		dst := &capiv1beta2.MachineHealthCheck{}
		if err := capiv1beta1.Convert_v1beta1_MachineHealthCheck_To_v1beta2_MachineHealthCheck(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachineHealthCheck %s/%s to v1beta2: %w", src.Namespace, src.Name, err)
		}
		dst.APIVersion, dst.Kind = capiv1beta2.GroupVersion.String(), kind
		return toMap(dst)
	}
	return nil, fmt.Errorf("no v1beta2 conversion for kind %s", kind)
}

// machineTemplate does what the generated code leaves to the webhook for a pool's machine
// template: the bootstrap config and infrastructure references as v1beta2 holds them, and the
// pool's minReadySeconds, which v1beta2 keeps in the machine template.
func machineTemplate(src *capiv1beta1.MachineSpec, minReadySeconds *int32, dst *capiv1beta2.MachineSpec) error {
	dst.MinReadySeconds = minReadySeconds
	infra, err := contractReference(&src.InfrastructureRef)
	if err != nil {
		return fmt.Errorf("infrastructureRef: %w", err)
	}
	dst.InfrastructureRef = infra
	if src.Bootstrap.ConfigRef != nil {
		if dst.Bootstrap.ConfigRef, err = contractReference(src.Bootstrap.ConfigRef); err != nil {
			return fmt.Errorf("bootstrap.configRef: %w", err)
		}
	}
	return nil
}

// ObjectV1Beta1 converts a cluster.x-k8s.io/v1beta2 MachineDeployment, MachinePool,
// MachineHealthCheck, MachineSet or Machine (JSON) into the v1beta1 object Cluster API's conversion webhook serves for
// it (core/webhooks/conversion, Convert*HubToV1Beta1), without the conversion data: for reading
// objects written as v1beta2 (a plan file's current objects) into topoflow's v1beta1 model. The
// machine template's contract references get the version versionOf names for their group and
// kind, minReadySeconds moves back to the pool, and empty strings v1beta1 holds as pointers go.
func ObjectV1Beta1(kind string, v1beta2JSON []byte, versionOf APIVersionOf) (map[string]any, error) {
	in, err := parse(v1beta2JSON)
	if err != nil {
		return nil, err
	}
	return objectV1Beta1(kind, in, versionOf)
}

func objectV1Beta1(kind string, in map[string]any, versionOf APIVersionOf) (map[string]any, error) {
	switch kind {
	case "MachineDeployment":
		src, dst := &capiv1beta2.MachineDeployment{}, &capiv1beta1.MachineDeployment{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta2 MachineDeployment: %w", err)
		}
		if err := capiv1beta1.Convert_v1beta2_MachineDeployment_To_v1beta1_MachineDeployment(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachineDeployment %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplateV1Beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace, versionOf); err != nil {
			return nil, fmt.Errorf("MachineDeployment %s/%s spec.template.spec: %w", src.Namespace, src.Name, err)
		}
		dst.Spec.MinReadySeconds = src.Spec.Template.Spec.MinReadySeconds
		dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), kind
		return toMap(dst)
	case "MachinePool":
		src, dst := &capiv1beta2.MachinePool{}, &capiv1beta1.MachinePool{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta2 MachinePool: %w", err)
		}
		if err := capiv1beta1.Convert_v1beta2_MachinePool_To_v1beta1_MachinePool(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachinePool %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplateV1Beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace, versionOf); err != nil {
			return nil, fmt.Errorf("MachinePool %s/%s spec.template.spec: %w", src.Namespace, src.Name, err)
		}
		dst.Spec.MinReadySeconds = src.Spec.Template.Spec.MinReadySeconds
		dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), kind
		return toMap(dst)
	case "MachineHealthCheck":
		src, dst := &capiv1beta2.MachineHealthCheck{}, &capiv1beta1.MachineHealthCheck{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta2 MachineHealthCheck: %w", err)
		}
		if err := capiv1beta1.Convert_v1beta2_MachineHealthCheck_To_v1beta1_MachineHealthCheck(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachineHealthCheck %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
		}
		if dst.Spec.RemediationTemplate != nil {
			dst.Spec.RemediationTemplate.Namespace = src.Namespace
		}
		dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), kind
		return toMap(dst)
	case "MachineSet":
		src, dst := &capiv1beta2.MachineSet{}, &capiv1beta1.MachineSet{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta2 MachineSet: %w", err)
		}
		if err := capiv1beta1.Convert_v1beta2_MachineSet_To_v1beta1_MachineSet(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting MachineSet %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplateV1Beta1(&src.Spec.Template.Spec, &dst.Spec.Template.Spec, src.Namespace, versionOf); err != nil {
			return nil, fmt.Errorf("MachineSet %s/%s spec.template.spec: %w", src.Namespace, src.Name, err)
		}
		if m := src.Spec.Template.Spec.MinReadySeconds; m != nil {
			dst.Spec.MinReadySeconds = *m
		}
		dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), kind
		return toMap(dst)
	case "Machine":
		src, dst := &capiv1beta2.Machine{}, &capiv1beta1.Machine{}
		if err := decode(in, src); err != nil {
			return nil, fmt.Errorf("decoding the v1beta2 Machine: %w", err)
		}
		if err := capiv1beta1.Convert_v1beta2_Machine_To_v1beta1_Machine(src, dst, nil); err != nil {
			return nil, fmt.Errorf("converting Machine %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
		}
		if err := machineTemplateV1Beta1(&src.Spec, &dst.Spec, src.Namespace, versionOf); err != nil {
			return nil, fmt.Errorf("Machine %s/%s spec: %w", src.Namespace, src.Name, err)
		}
		dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), kind
		return toMap(dst)
	}
	return nil, fmt.Errorf("no v1beta1 conversion for kind %s", kind)
}

// machineTemplateV1Beta1 is machineTemplate's inverse: contract references become object
// references in the pool's namespace, with the version versionOf names.
func machineTemplateV1Beta1(src *capiv1beta2.MachineSpec, dst *capiv1beta1.MachineSpec, ns string, versionOf APIVersionOf) error {
	ref := func(r capiv1beta2.ContractVersionedObjectReference) (*corev1.ObjectReference, error) {
		v, err := versionOf(r.APIGroup, r.Kind)
		if err != nil {
			return nil, err
		}
		return &corev1.ObjectReference{APIVersion: schema.GroupVersion{Group: r.APIGroup, Version: v}.String(),
			Kind: r.Kind, Namespace: ns, Name: r.Name}, nil
	}
	if src.InfrastructureRef.IsDefined() {
		r, err := ref(src.InfrastructureRef)
		if err != nil {
			return fmt.Errorf("infrastructureRef: %w", err)
		}
		dst.InfrastructureRef = *r
	}
	if src.Bootstrap.ConfigRef.IsDefined() {
		r, err := ref(src.Bootstrap.ConfigRef)
		if err != nil {
			return fmt.Errorf("bootstrap.configRef: %w", err)
		}
		dst.Bootstrap.ConfigRef = r
	}
	for _, s := range []**string{&dst.Version, &dst.ProviderID, &dst.FailureDomain} {
		dropEmpty(s)
	}
	return nil
}
