package conversion

import (
	"encoding/json"
	"fmt"

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
	switch kind {
	case "MachineDeployment":
		src := &capiv1beta1.MachineDeployment{}
		if err := json.Unmarshal(v1beta1JSON, src); err != nil {
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
		if err := json.Unmarshal(v1beta1JSON, src); err != nil {
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
		if err := json.Unmarshal(v1beta1JSON, src); err != nil {
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
