package variables

import (
	"context"
	"fmt"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// celEnv is the CEL environment of new CRD rules at the current compatibility version.
var celEnv = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())

// compileRules checks every x-kubernetes-validations rule of a schema, at every level, as the API
// server checks a CRD's, and returns the validator (nil when there are no rules). The first rule
// that does not compile is the error, named by its path under schemaPath.
func compileRules(s *structuralschema.Structural, schemaPath *field.Path) (*cel.Validator, error) {
	if err := checkRules(s, schemaPath); err != nil {
		return nil, err
	}
	return cel.NewValidator(s, false, celconfig.PerCallLimit), nil
}

func checkRules(s *structuralschema.Structural, p *field.Path) error {
	if s == nil {
		return nil
	}
	if len(s.XValidations) > 0 {
		results, err := cel.Compile(s, model.SchemaDeclType(s, false), celconfig.PerCallLimit, celEnv, cel.NewExpressionsEnvLoader())
		if err != nil {
			return field.Invalid(p.Child("x-kubernetes-validations"), "", err.Error())
		}
		for i, r := range results {
			rp := p.Child("x-kubernetes-validations").Index(i)
			if r.Error != nil {
				return field.Invalid(rp.Child("rule"), s.XValidations[i].Rule, r.Error.Detail)
			}
			if r.MessageExpressionError != nil {
				return field.Invalid(rp.Child("messageExpression"), s.XValidations[i].MessageExpression, r.MessageExpressionError.Detail)
			}
		}
	}
	for name, prop := range s.Properties {
		if err := checkRules(&prop, p.Child("properties").Key(name)); err != nil {
			return err
		}
	}
	if err := checkRules(s.Items, p.Child("items")); err != nil {
		return err
	}
	if ap := s.AdditionalProperties; ap != nil {
		return checkRules(ap.Structural, p.Child("additionalProperties"))
	}
	return nil
}

// validateRules evaluates a value against the schema's rules within the API server's cost budget.
// There is no old value: transition rules (oldSelf) are not evaluated.
func validateRules(v *cel.Validator, s *structuralschema.Structural, valuePath *field.Path, value any) field.ErrorList {
	if v == nil {
		return nil
	}
	errs, remaining := v.Validate(context.Background(), valuePath, s, value, nil, celconfig.RuntimeCELCostBudget)
	if remaining < 0 {
		errs = append(errs, field.Invalid(valuePath, "", fmt.Sprintf("CEL rules exceeded the cost budget (%d)", celconfig.RuntimeCELCostBudget)))
	}
	return errs
}
