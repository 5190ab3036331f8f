package adapt

import (
	"reflect"

	"github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/api/v1beta2"
)

// ClusterVariablesToHub converts variable values (Convert_v1beta1_ClusterVariable_To_v1beta2_ClusterVariable):
// name and value. definitionFrom has no place in v1beta2 and is dropped, as Cluster API drops it;
// topoflow still refuses it on v1beta1 input (DeprecatedDefinitionFrom).
func ClusterVariablesToHub(in []v1beta1.ClusterVariable) []v1beta2.ClusterVariable {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.ClusterVariable, len(in))
	for i, v := range in {
		out[i] = v1beta2.ClusterVariable{Name: v.Name, Value: v.Value}
	}
	return out
}

// ClusterVariablesFromHub converts variable values back (Convert_v1beta2_ClusterVariable_To_v1beta1_ClusterVariable)
// for a caller that keeps them as v1beta1: in is the answer computed from was (defaulted values:
// was's values in was's order, then the added ones). A value at the same index and with the same
// name as in was gets was's definitionFrom back, so that converting for a computation does not
// clear what the user wrote.
func ClusterVariablesFromHub(in []v1beta2.ClusterVariable, was []v1beta1.ClusterVariable) []v1beta1.ClusterVariable {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.ClusterVariable, len(in))
	for i, v := range in {
		out[i] = v1beta1.ClusterVariable{Name: v.Name, Value: v.Value}
		if i < len(was) && was[i].Name == v.Name {
			out[i].DefinitionFrom = was[i].DefinitionFrom
		}
	}
	return out
}

// ClusterClassVariablesToHub converts variable definitions (Convert_v1beta1_ClusterClassVariable_To_v1beta2_ClusterClassVariable
// and ConvertClusterClassV1Beta1ToHub): required becomes a pointer (always set), the deprecated
// metadata moves to deprecatedV1Beta1Metadata and the schema converts as JSONSchemaPropsToHub.
func ClusterClassVariablesToHub(in []v1beta1.ClusterClassVariable) []v1beta2.ClusterClassVariable {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.ClusterClassVariable, len(in))
	for i, v := range in {
		out[i] = v1beta2.ClusterClassVariable{
			Name:                      v.Name,
			Required:                  ptrTo(v.Required),
			DeprecatedV1Beta1Metadata: v1beta2.ClusterClassVariableMetadata(v.Metadata),
			Schema:                    v1beta2.VariableSchema{OpenAPIV3Schema: JSONSchemaPropsToHub(&v.Schema.OpenAPIV3Schema)},
		}
	}
	return out
}

// ClusterClassStatusVariablesToHub converts status variables (Convert_v1beta1_ClusterClassStatusVariable_To_v1beta2_ClusterClassStatusVariable
// and ConvertClusterClassV1Beta1ToHub): definitionsConflict set only when true, each definition's
// required always a pointer, its metadata under deprecatedV1Beta1Metadata.
func ClusterClassStatusVariablesToHub(in []v1beta1.ClusterClassStatusVariable) []v1beta2.ClusterClassStatusVariable {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.ClusterClassStatusVariable, len(in))
	for i, v := range in {
		out[i] = v1beta2.ClusterClassStatusVariable{Name: v.Name, DefinitionsConflict: trueOrNil(v.DefinitionsConflict)}
		if v.Definitions != nil {
			out[i].Definitions = make([]v1beta2.ClusterClassStatusVariableDefinition, len(v.Definitions))
		}
		for j, d := range v.Definitions {
			out[i].Definitions[j] = v1beta2.ClusterClassStatusVariableDefinition{
				From:                      d.From,
				Required:                  ptrTo(d.Required),
				DeprecatedV1Beta1Metadata: v1beta2.ClusterClassVariableMetadata(d.Metadata),
				Schema:                    v1beta2.VariableSchema{OpenAPIV3Schema: JSONSchemaPropsToHub(&d.Schema.OpenAPIV3Schema)},
			}
		}
	}
	return out
}

// ClusterClassStatusVariablesFromHub converts status variables back (Convert_v1beta2_ClusterClassStatusVariable_To_v1beta1_ClusterClassStatusVariable),
// for a caller that writes them to a v1beta1 ClusterClass: the pointers read as their values (nil
// as false), deprecatedV1Beta1Metadata as metadata.
func ClusterClassStatusVariablesFromHub(in []v1beta2.ClusterClassStatusVariable) []v1beta1.ClusterClassStatusVariable {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.ClusterClassStatusVariable, len(in))
	for i, v := range in {
		out[i] = v1beta1.ClusterClassStatusVariable{Name: v.Name, DefinitionsConflict: deref(v.DefinitionsConflict)}
		if v.Definitions != nil {
			out[i].Definitions = make([]v1beta1.ClusterClassStatusVariableDefinition, len(v.Definitions))
		}
		for j, d := range v.Definitions {
			out[i].Definitions[j] = v1beta1.ClusterClassStatusVariableDefinition{
				From:     d.From,
				Required: deref(d.Required),
				Metadata: v1beta1.ClusterClassVariableMetadata(d.DeprecatedV1Beta1Metadata),
				Schema:   v1beta1.VariableSchema{OpenAPIV3Schema: jsonSchemaPropsFromHub(&d.Schema.OpenAPIV3Schema)},
			}
		}
	}
	return out
}

// JSONSchemaPropsToHub converts a variable schema (Convert_v1beta1_JSONSchemaProps_To_v1beta2_JSONSchemaProps
// and the webhook's restoreBoolIntentJSONSchemaProps), through every nested schema: the flags
// (uniqueItems, exclusiveMaximum, exclusiveMinimum, x-kubernetes-preserve-unknown-fields,
// x-kubernetes-int-or-string) become pointers to true or nil, x-metadata a value, and a rule's
// reason a plain string.
func JSONSchemaPropsToHub(in *v1beta1.JSONSchemaProps) v1beta2.JSONSchemaProps {
	out := v1beta2.JSONSchemaProps{
		Description:            in.Description,
		Example:                in.Example,
		Type:                   in.Type,
		AdditionalProperties:   schemaPtrToHub(in.AdditionalProperties),
		MaxProperties:          in.MaxProperties,
		MinProperties:          in.MinProperties,
		Required:               in.Required,
		Items:                  schemaPtrToHub(in.Items),
		MaxItems:               in.MaxItems,
		MinItems:               in.MinItems,
		UniqueItems:            trueOrNil(in.UniqueItems),
		Format:                 in.Format,
		MaxLength:              in.MaxLength,
		MinLength:              in.MinLength,
		Pattern:                in.Pattern,
		Maximum:                in.Maximum,
		ExclusiveMaximum:       trueOrNil(in.ExclusiveMaximum),
		Minimum:                in.Minimum,
		ExclusiveMinimum:       trueOrNil(in.ExclusiveMinimum),
		XPreserveUnknownFields: trueOrNil(in.XPreserveUnknownFields),
		Enum:                   in.Enum,
		Default:                in.Default,
		XIntOrString:           trueOrNil(in.XIntOrString),
		AllOf:                  schemasToHub(in.AllOf),
		OneOf:                  schemasToHub(in.OneOf),
		AnyOf:                  schemasToHub(in.AnyOf),
		Not:                    schemaPtrToHub(in.Not),
	}
	if in.Properties != nil {
		out.Properties = make(map[string]v1beta2.JSONSchemaProps, len(in.Properties))
		for k, p := range in.Properties {
			out.Properties[k] = JSONSchemaPropsToHub(&p)
		}
	}
	if in.XValidations != nil {
		out.XValidations = make([]v1beta2.ValidationRule, len(in.XValidations))
		for i, r := range in.XValidations {
			out.XValidations[i] = v1beta2.ValidationRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression,
				Reason: v1beta2.FieldValueErrorReason(deref(r.Reason)), FieldPath: r.FieldPath}
		}
	}
	if in.XMetadata != nil {
		out.XMetadata = v1beta2.VariableSchemaMetadata(*in.XMetadata)
	}
	return out
}

func schemaPtrToHub(in *v1beta1.JSONSchemaProps) *v1beta2.JSONSchemaProps {
	if in == nil {
		return nil
	}
	out := JSONSchemaPropsToHub(in)
	return &out
}

func schemasToHub(in []v1beta1.JSONSchemaProps) []v1beta2.JSONSchemaProps {
	if in == nil {
		return nil
	}
	out := make([]v1beta2.JSONSchemaProps, len(in))
	for i := range in {
		out[i] = JSONSchemaPropsToHub(&in[i])
	}
	return out
}

// jsonSchemaPropsFromHub is Convert_v1beta2_JSONSchemaProps_To_v1beta1_JSONSchemaProps: the flags
// read as their values, x-metadata set when not empty, an empty reason unset.
func jsonSchemaPropsFromHub(in *v1beta2.JSONSchemaProps) v1beta1.JSONSchemaProps {
	out := v1beta1.JSONSchemaProps{
		Description:            in.Description,
		Example:                in.Example,
		Type:                   in.Type,
		AdditionalProperties:   schemaPtrFromHub(in.AdditionalProperties),
		MaxProperties:          in.MaxProperties,
		MinProperties:          in.MinProperties,
		Required:               in.Required,
		Items:                  schemaPtrFromHub(in.Items),
		MaxItems:               in.MaxItems,
		MinItems:               in.MinItems,
		UniqueItems:            deref(in.UniqueItems),
		Format:                 in.Format,
		MaxLength:              in.MaxLength,
		MinLength:              in.MinLength,
		Pattern:                in.Pattern,
		Maximum:                in.Maximum,
		ExclusiveMaximum:       deref(in.ExclusiveMaximum),
		Minimum:                in.Minimum,
		ExclusiveMinimum:       deref(in.ExclusiveMinimum),
		XPreserveUnknownFields: deref(in.XPreserveUnknownFields),
		Enum:                   in.Enum,
		Default:                in.Default,
		XIntOrString:           deref(in.XIntOrString),
		AllOf:                  schemasFromHub(in.AllOf),
		OneOf:                  schemasFromHub(in.OneOf),
		AnyOf:                  schemasFromHub(in.AnyOf),
		Not:                    schemaPtrFromHub(in.Not),
	}
	if in.Properties != nil {
		out.Properties = make(map[string]v1beta1.JSONSchemaProps, len(in.Properties))
		for k, p := range in.Properties {
			out.Properties[k] = jsonSchemaPropsFromHub(&p)
		}
	}
	if in.XValidations != nil {
		out.XValidations = make([]v1beta1.ValidationRule, len(in.XValidations))
		for i, r := range in.XValidations {
			out.XValidations[i] = v1beta1.ValidationRule{Rule: r.Rule, Message: r.Message, MessageExpression: r.MessageExpression,
				Reason: stringOrNil(string(r.Reason)), FieldPath: r.FieldPath}
		}
	}
	if !reflect.DeepEqual(in.XMetadata, v1beta2.VariableSchemaMetadata{}) {
		m := v1beta1.VariableSchemaMetadata(in.XMetadata)
		out.XMetadata = &m
	}
	return out
}

func schemaPtrFromHub(in *v1beta2.JSONSchemaProps) *v1beta1.JSONSchemaProps {
	if in == nil {
		return nil
	}
	out := jsonSchemaPropsFromHub(in)
	return &out
}

func schemasFromHub(in []v1beta2.JSONSchemaProps) []v1beta1.JSONSchemaProps {
	if in == nil {
		return nil
	}
	out := make([]v1beta1.JSONSchemaProps, len(in))
	for i := range in {
		out[i] = jsonSchemaPropsFromHub(&in[i])
	}
	return out
}
