package conversion

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	capiv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// ClusterClassV1Beta2 converts a cluster.x-k8s.io/v1beta1 ClusterClass JSON into the v1beta2
// JSON (core/webhooks/conversion.ConvertClusterClassV1Beta1ToHub): the generated conversion,
// then the booleans v1beta2 holds as pointers (patch selectors' matchResources, the variable
// schemas' flags, status variables' definitionsConflict) set to false only where the conversion
// data says false was written.
func ClusterClassV1Beta2(v1beta1JSON []byte) (map[string]any, error) {
	in, err := parse(v1beta1JSON)
	if err != nil {
		return nil, err
	}
	return clusterClassV1Beta2(in)
}

func clusterClassV1Beta2(in map[string]any) (map[string]any, error) {
	src := &capiv1beta1.ClusterClass{}
	if err := decode(in, src); err != nil {
		return nil, fmt.Errorf("decoding the v1beta1 ClusterClass: %w", err)
	}
	dst := &capiv1beta2.ClusterClass{}
	if err := capiv1beta1.Convert_v1beta1_ClusterClass_To_v1beta2_ClusterClass(src, dst, nil); err != nil {
		return nil, fmt.Errorf("converting ClusterClass %s/%s to v1beta2: %w", src.Namespace, src.Name, err)
	}
	restored := &capiv1beta2.ClusterClass{}
	has, err := takeData(&dst.ObjectMeta, restored)
	if err != nil {
		return nil, fmt.Errorf("ClusterClass: %w", err)
	}
	restorePatchFlags(src, dst, restored, has)
	if err := restoreVariableFlags(src, dst, restored, has); err != nil {
		return nil, err
	}
	for i := range dst.Status.Variables {
		if err := restoreStatusVariableFlags(src, &dst.Status.Variables[i], restored, has); err != nil {
			return nil, err
		}
	}
	dst.APIVersion, dst.Kind = capiv1beta2.GroupVersion.String(), "ClusterClass"
	return withoutFillers(in, dst, clusterClassV1Beta2Fillers)
}

// restorePatchFlags sets the patch selectors' pointer booleans (matchResources) from the v1beta1
// values, or from the conversion data where it has them.
func restorePatchFlags(src *capiv1beta1.ClusterClass, dst, restored *capiv1beta2.ClusterClass, has bool) {
	for i := range dst.Spec.Patches {
		p := &dst.Spec.Patches[i]
		srcPatch, restoredPatch := patchNamed(src.Spec.Patches, p.Name), restoredPatchNamed(restored.Spec.Patches, p.Name)
		for j := range p.Definitions {
			in := capiv1beta1.PatchSelectorMatch{}
			if srcPatch != nil && len(srcPatch.Definitions) == len(p.Definitions) {
				in = srcPatch.Definitions[j].Selector.MatchResources
			}
			var was capiv1beta2.PatchSelectorMatch
			if restoredPatch != nil && len(restoredPatch.Definitions) == len(p.Definitions) {
				was = restoredPatch.Definitions[j].Selector.MatchResources
			}
			m := &p.Definitions[j].Selector.MatchResources
			capiv1beta2.Convert_bool_To_Pointer_bool(in.InfrastructureCluster, has, was.InfrastructureCluster, &m.InfrastructureCluster)
			capiv1beta2.Convert_bool_To_Pointer_bool(in.ControlPlane, has, was.ControlPlane, &m.ControlPlane)
		}
	}
}

// restoreVariableFlags sets the variables' schema pointer booleans.
func restoreVariableFlags(src *capiv1beta1.ClusterClass, dst, restored *capiv1beta2.ClusterClass, has bool) error {
	for i := range dst.Spec.Variables {
		v := &dst.Spec.Variables[i]
		var in *capiv1beta1.JSONSchemaProps
		for k := range src.Spec.Variables {
			if src.Spec.Variables[k].Name == v.Name {
				in = &src.Spec.Variables[k].Schema.OpenAPIV3Schema
			}
		}
		if in == nil {
			return fmt.Errorf("ClusterClass %s/%s: variable %q not in the v1beta1 object", src.Namespace, src.Name, v.Name)
		}
		var was *capiv1beta2.JSONSchemaProps
		for k := range restored.Spec.Variables {
			if restored.Spec.Variables[k].Name == v.Name {
				was = &restored.Spec.Variables[k].Schema.OpenAPIV3Schema
			}
		}
		if err := restoreSchemaFlags(in, &v.Schema.OpenAPIV3Schema, has, was); err != nil {
			return fmt.Errorf("ClusterClass %s/%s variable %s: %w", src.Namespace, src.Name, v.Name, err)
		}
	}
	return nil
}

// restoreStatusVariableFlags sets a status variable's definitionsConflict and its definitions'
// schema pointer booleans.
func restoreStatusVariableFlags(src *capiv1beta1.ClusterClass, v *capiv1beta2.ClusterClassStatusVariable, restored *capiv1beta2.ClusterClass, has bool) error {
	var in *capiv1beta1.ClusterClassStatusVariable
	for k := range src.Status.Variables {
		if src.Status.Variables[k].Name == v.Name {
			in = &src.Status.Variables[k]
		}
	}
	if in == nil {
		return fmt.Errorf("ClusterClass %s/%s: status variable %q not in the v1beta1 object", src.Namespace, src.Name, v.Name)
	}
	var was *capiv1beta2.ClusterClassStatusVariable
	for k := range restored.Status.Variables {
		if restored.Status.Variables[k].Name == v.Name {
			was = &restored.Status.Variables[k]
		}
	}
	var wasConflict *bool
	if was != nil {
		wasConflict = was.DefinitionsConflict
	}
	capiv1beta2.Convert_bool_To_Pointer_bool(in.DefinitionsConflict, has, wasConflict, &v.DefinitionsConflict)
	for j := range v.Definitions {
		d := &v.Definitions[j]
		var inDef *capiv1beta1.JSONSchemaProps
		for k := range in.Definitions {
			if in.Definitions[k].From == d.From {
				inDef = &in.Definitions[k].Schema.OpenAPIV3Schema
			}
		}
		if inDef == nil {
			return fmt.Errorf("ClusterClass %s/%s: status variable %s definition from %s not in the v1beta1 object", src.Namespace, src.Name, v.Name, d.From)
		}
		var wasDef *capiv1beta2.JSONSchemaProps
		if was != nil {
			for k := range was.Definitions {
				if was.Definitions[k].From == d.From {
					wasDef = &was.Definitions[k].Schema.OpenAPIV3Schema
				}
			}
		}
		if err := restoreSchemaFlags(inDef, &d.Schema.OpenAPIV3Schema, has, wasDef); err != nil {
			return fmt.Errorf("ClusterClass %s/%s status variable %s: %w", src.Namespace, src.Name, v.Name, err)
		}
	}
	return nil
}

func patchNamed(ps []capiv1beta1.ClusterClassPatch, name string) *capiv1beta1.ClusterClassPatch {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

func restoredPatchNamed(ps []capiv1beta2.ClusterClassPatch, name string) *capiv1beta2.ClusterClassPatch {
	for i := range ps {
		if ps[i].Name == name {
			return &ps[i]
		}
	}
	return nil
}

// restoreSchemaFlags sets the schema's boolean flags (uniqueItems, exclusiveMaximum,
// exclusiveMinimum, x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string) by the
// pointer rule, through every nested schema (core/webhooks/conversion.restoreBoolIntentJSONSchemaProps).
func restoreSchemaFlags(in *capiv1beta1.JSONSchemaProps, out *capiv1beta2.JSONSchemaProps, has bool, was *capiv1beta2.JSONSchemaProps) error {
	if was == nil {
		was = &capiv1beta2.JSONSchemaProps{}
	}
	capiv1beta2.Convert_bool_To_Pointer_bool(in.UniqueItems, has, was.UniqueItems, &out.UniqueItems)
	capiv1beta2.Convert_bool_To_Pointer_bool(in.ExclusiveMaximum, has, was.ExclusiveMaximum, &out.ExclusiveMaximum)
	capiv1beta2.Convert_bool_To_Pointer_bool(in.ExclusiveMinimum, has, was.ExclusiveMinimum, &out.ExclusiveMinimum)
	capiv1beta2.Convert_bool_To_Pointer_bool(in.XPreserveUnknownFields, has, was.XPreserveUnknownFields, &out.XPreserveUnknownFields)
	capiv1beta2.Convert_bool_To_Pointer_bool(in.XIntOrString, has, was.XIntOrString, &out.XIntOrString)

	for name, prop := range out.Properties {
		inProp, ok := in.Properties[name]
		if !ok {
			return fmt.Errorf("property %s not in the v1beta1 object", name)
		}
		var wasProp *capiv1beta2.JSONSchemaProps
		if p, ok := was.Properties[name]; ok {
			wasProp = &p
		}
		if err := restoreSchemaFlags(&inProp, &prop, has, wasProp); err != nil {
			return err
		}
		out.Properties[name] = prop
	}
	for _, nested := range []struct {
		in       *capiv1beta1.JSONSchemaProps
		out, was *capiv1beta2.JSONSchemaProps
	}{
		{in.AdditionalProperties, out.AdditionalProperties, was.AdditionalProperties},
		{in.Items, out.Items, was.Items},
		{in.Not, out.Not, was.Not},
	} {
		if nested.in == nil || nested.out == nil {
			continue
		}
		if err := restoreSchemaFlags(nested.in, nested.out, has, nested.was); err != nil {
			return err
		}
	}
	for _, list := range []struct {
		in       []capiv1beta1.JSONSchemaProps
		out, was []capiv1beta2.JSONSchemaProps
	}{
		{in.AllOf, out.AllOf, was.AllOf},
		{in.OneOf, out.OneOf, was.OneOf},
		{in.AnyOf, out.AnyOf, was.AnyOf},
	} {
		if len(list.in) != len(list.out) {
			return fmt.Errorf("schema lists differ in length after conversion")
		}
		for i := range list.out {
			var w *capiv1beta2.JSONSchemaProps
			if len(list.was) == len(list.out) {
				w = &list.was[i]
			}
			if err := restoreSchemaFlags(&list.in[i], &list.out[i], has, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// ClusterClassV1Beta1 converts a cluster.x-k8s.io/v1beta2 ClusterClass JSON into the v1beta1
// JSON (core/webhooks/conversion.ConvertClusterClassHubToV1Beta1), with the v1beta2 object kept
// in DataAnnotation; a partial object stays partial (see dropFillers).
func ClusterClassV1Beta1(v1beta2JSON []byte) (map[string]any, error) {
	in, err := parse(v1beta2JSON)
	if err != nil {
		return nil, err
	}
	return clusterClassV1Beta1(in)
}

func clusterClassV1Beta1(in map[string]any) (map[string]any, error) {
	src := &capiv1beta2.ClusterClass{}
	if err := decode(in, src); err != nil {
		return nil, fmt.Errorf("decoding the v1beta2 ClusterClass: %w", err)
	}
	dst := &capiv1beta1.ClusterClass{}
	if err := capiv1beta1.Convert_v1beta2_ClusterClass_To_v1beta1_ClusterClass(src, dst, nil); err != nil {
		return nil, fmt.Errorf("converting ClusterClass %s/%s to v1beta1: %w", src.Namespace, src.Name, err)
	}
	if m := dst.Spec.ControlPlane.MachineHealthCheck; m != nil && m.RemediationTemplate != nil {
		m.RemediationTemplate.Namespace = dst.Namespace
	}
	if s := dst.Spec.InfrastructureNamingStrategy; s != nil {
		dropEmpty(&s.Template)
	}
	if s := dst.Spec.ControlPlane.NamingStrategy; s != nil {
		dropEmpty(&s.Template)
	}
	for i := range dst.Spec.Workers.MachineDeployments {
		md := &dst.Spec.Workers.MachineDeployments[i]
		if md.MachineHealthCheck != nil && md.MachineHealthCheck.RemediationTemplate != nil {
			md.MachineHealthCheck.RemediationTemplate.Namespace = dst.Namespace
		}
		if md.NamingStrategy != nil {
			dropEmpty(&md.NamingStrategy.Template)
		}
		dropEmpty(&md.FailureDomain)
	}
	for i := range dst.Spec.Workers.MachinePools {
		if s := dst.Spec.Workers.MachinePools[i].NamingStrategy; s != nil {
			dropEmpty(&s.Template)
		}
	}
	for i := range dst.Spec.Patches {
		p := &dst.Spec.Patches[i]
		dropEmpty(&p.EnabledIf)
		if e := p.External; e != nil {
			dropEmpty(&e.GenerateExtension)
			dropEmpty(&e.ValidateExtension)
			dropEmpty(&e.DiscoverVariablesExtension)
		}
		for j := range p.Definitions {
			for k := range p.Definitions[j].JSONPatches {
				if vf := p.Definitions[j].JSONPatches[k].ValueFrom; vf != nil {
					dropEmpty(&vf.Variable)
					dropEmpty(&vf.Template)
				}
			}
		}
	}
	hub := src.DeepCopy()
	hub.ObjectMeta = metav1.ObjectMeta{}
	if err := putData(hub, &dst.ObjectMeta); err != nil {
		return nil, err
	}
	dst.APIVersion, dst.Kind = capiv1beta1.GroupVersion.String(), "ClusterClass"
	return withoutFillers(in, dst, clusterClassFillers)
}
