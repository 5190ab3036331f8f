package v1beta2

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// ClusterClassVariable is a variable a Cluster of the class may (or must) set.
type ClusterClassVariable struct {
	// +required
	Name string `json:"name,omitempty"`
	// Required is a pointer so that an explicit false is kept.
	// +required
	Required *bool `json:"required,omitempty"`
	// DeprecatedV1Beta1Metadata is v1beta1's variable metadata, kept for round trips only
	// (x-metadata in the schema replaced it).
	// +optional
	DeprecatedV1Beta1Metadata ClusterClassVariableMetadata `json:"deprecatedV1Beta1Metadata,omitempty,omitzero"`
	// +required
	Schema VariableSchema `json:"schema,omitempty,omitzero"`
}

// ClusterClassVariableMetadata is labels and annotations attached to a variable's definition.
type ClusterClassVariableMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// VariableSchema holds a variable's schema.
type VariableSchema struct {
	// +required
	OpenAPIV3Schema JSONSchemaProps `json:"openAPIV3Schema,omitempty,omitzero"`
}

// JSONSchemaProps is the subset of OpenAPI v3 (plus Kubernetes' extensions) a variable's schema
// may use. Numbers are integers and flags are pointers, as in Cluster API: the variables package
// turns it into an apiextensions schema to validate and default values.
type JSONSchemaProps struct {
	// +optional
	Description string `json:"description,omitempty"`
	// +optional
	Example *apiextensionsv1.JSON `json:"example,omitempty"`
	// +optional
	// +kubebuilder:validation:Enum=object;array;string;integer;number;boolean
	Type string `json:"type,omitempty"`
	// +optional
	Properties map[string]JSONSchemaProps `json:"properties,omitempty"`
	// +optional
	AdditionalProperties *JSONSchemaProps `json:"additionalProperties,omitempty"`
	// +optional
	MaxProperties *int64 `json:"maxProperties,omitempty"`
	// +optional
	MinProperties *int64 `json:"minProperties,omitempty"`
	// +optional
	// +listType=atomic
	Required []string `json:"required,omitempty"`
	// +optional
	Items *JSONSchemaProps `json:"items,omitempty"`
	// +optional
	MaxItems *int64 `json:"maxItems,omitempty"`
	// +optional
	MinItems *int64 `json:"minItems,omitempty"`
	// +optional
	UniqueItems *bool `json:"uniqueItems,omitempty"`
	// +optional
	Format string `json:"format,omitempty"`
	// +optional
	MaxLength *int64 `json:"maxLength,omitempty"`
	// +optional
	MinLength *int64 `json:"minLength,omitempty"`
	// +optional
	Pattern string `json:"pattern,omitempty"`
	// +optional
	Maximum *int64 `json:"maximum,omitempty"`
	// +optional
	ExclusiveMaximum *bool `json:"exclusiveMaximum,omitempty"`
	// +optional
	Minimum *int64 `json:"minimum,omitempty"`
	// +optional
	ExclusiveMinimum *bool `json:"exclusiveMinimum,omitempty"`
	// +optional
	XPreserveUnknownFields *bool `json:"x-kubernetes-preserve-unknown-fields,omitempty"`
	// +optional
	// +listType=atomic
	Enum []apiextensionsv1.JSON `json:"enum,omitempty"`
	// +optional
	Default *apiextensionsv1.JSON `json:"default,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=rule
	XValidations []ValidationRule `json:"x-kubernetes-validations,omitempty"`
	// XMetadata is labels and annotations for the variable, readable by patches.
	// +optional
	XMetadata VariableSchemaMetadata `json:"x-metadata,omitempty,omitzero"`
	// +optional
	XIntOrString *bool `json:"x-kubernetes-int-or-string,omitempty"`
	// +optional
	AllOf []JSONSchemaProps `json:"allOf,omitempty"`
	// +optional
	OneOf []JSONSchemaProps `json:"oneOf,omitempty"`
	// +optional
	AnyOf []JSONSchemaProps `json:"anyOf,omitempty"`
	// +optional
	Not *JSONSchemaProps `json:"not,omitempty"`
}

// VariableSchemaMetadata is a schema's x-metadata.
type VariableSchemaMetadata struct {
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ValidationRule is a CEL rule (x-kubernetes-validations) on a variable's schema.
type ValidationRule struct {
	// +required
	Rule string `json:"rule,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// +optional
	MessageExpression string `json:"messageExpression,omitempty"`
	// Reason is the kind of error a failed rule reports. The API server defaults it to
	// FieldValueInvalid; code reading a rule that did not pass through it must do the same.
	// +optional
	// +kubebuilder:default=FieldValueInvalid
	Reason FieldValueErrorReason `json:"reason,omitempty"`
	// +optional
	FieldPath string `json:"fieldPath,omitempty"`
}

// FieldValueErrorReason is the error a failed validation rule reports.
// +kubebuilder:validation:Enum=FieldValueInvalid;FieldValueForbidden;FieldValueRequired;FieldValueDuplicate
type FieldValueErrorReason string

// The reasons a validation rule may report.
const (
	FieldValueRequired  FieldValueErrorReason = "FieldValueRequired"
	FieldValueDuplicate FieldValueErrorReason = "FieldValueDuplicate"
	FieldValueInvalid   FieldValueErrorReason = "FieldValueInvalid"
	FieldValueForbidden FieldValueErrorReason = "FieldValueForbidden"
)
