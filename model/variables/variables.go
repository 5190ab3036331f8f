// Package variables defaults and validates ClusterClass variables, the way Cluster API does: each
// variable's openAPIV3Schema is compiled with the Kubernetes CRD schema libraries (so types,
// formats, patterns, bounds, enums, defaults and x-kubernetes-* extensions behave as in a CRD),
// and errors carry field paths such as spec.topology.variables[region].value.
//
// CEL rules (x-kubernetes-validations, with message, messageExpression, reason and fieldPath) are
// compiled with the class and evaluated on every value, as the API server evaluates a CRD's;
// transition rules (oldSelf) are not, as there is no old value.
package variables

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// InlineDefinitionFrom is the "from" of definitions written in the ClusterClass itself.
const InlineDefinitionFrom = "inline"

// Definition is the effective definition of one variable.
type Definition struct {
	Name     string
	Required bool
	Schema   clusterv1.JSONSchemaProps
}

// Discovered is what one external patch's DiscoverVariables handler answered.
type Discovered struct {
	Patch     string
	Variables []clusterv1.ClusterClassVariable
}

// StatusVariables computes ClusterClass status.variables: the inline definitions ("from": inline)
// and the discovered ones ("from": the patch name), sorted by variable name, each variable's
// definitions inline first and then in patch order. A variable whose definitions differ (required,
// schema or metadata) has definitionsConflict set to true, else to false, as Cluster API sets it
// (addNewStatusVariable, addDefinitionToExistingStatusVariable: a flag set to false in a schema
// means what unset means).
func StatusVariables(class *clusterv1.ClusterClass, discovered ...Discovered) []clusterv1.ClusterClassStatusVariable {
	byName := map[string]*clusterv1.ClusterClassStatusVariable{}
	var order []string
	add := func(v clusterv1.ClusterClassVariable, from string) {
		d := clusterv1.ClusterClassStatusVariableDefinition{From: from, Required: v.Required, DeprecatedV1Beta1Metadata: v.DeprecatedV1Beta1Metadata,
			Schema: *v.Schema.DeepCopy()}
		sv, ok := byName[v.Name]
		if !ok {
			sv = &clusterv1.ClusterClassStatusVariable{Name: v.Name, DefinitionsConflict: ptrTo(false)}
			byName[v.Name] = sv
			order = append(order, v.Name)
		} else if first := sv.Definitions[0]; deref(first.Required) != deref(d.Required) ||
			!equality.Semantic.DeepEqual(withoutFalseFlags(first.Schema.OpenAPIV3Schema), withoutFalseFlags(d.Schema.OpenAPIV3Schema)) ||
			!equality.Semantic.DeepEqual(first.DeprecatedV1Beta1Metadata, d.DeprecatedV1Beta1Metadata) {
			sv.DefinitionsConflict = ptrTo(true)
		}
		sv.Definitions = append(sv.Definitions, d)
	}
	for _, v := range class.Spec.Variables {
		add(v, InlineDefinitionFrom)
	}
	for _, d := range discovered {
		for _, v := range d.Variables {
			add(v, d.Patch)
		}
	}
	sort.Strings(order)
	out := make([]clusterv1.ClusterClassStatusVariable, 0, len(order))
	for _, n := range order {
		out = append(out, *byName[n])
	}
	return out
}

// Definitions returns the effective definitions of a class: status.variables when present (they
// include definitions discovered from extensions), else the inline spec.variables. A variable whose
// definitions conflict cannot be used and is reported as an error.
func Definitions(class *clusterv1.ClusterClass) (map[string]Definition, error) {
	out := map[string]Definition{}
	if len(class.Status.Variables) > 0 {
		var conflicts []string
		for _, v := range class.Status.Variables {
			if deref(v.DefinitionsConflict) || len(v.Definitions) == 0 {
				conflicts = append(conflicts, v.Name)
				continue
			}
			d := v.Definitions[0]
			out[v.Name] = Definition{Name: v.Name, Required: deref(d.Required), Schema: d.Schema.OpenAPIV3Schema}
		}
		if len(conflicts) > 0 {
			return out, fmt.Errorf("ClusterClass %s/%s: variables with conflicting definitions: %s", class.Namespace, class.Name, strings.Join(conflicts, ", "))
		}
		return out, nil
	}
	for _, v := range class.Spec.Variables {
		out[v.Name] = Definition{Name: v.Name, Required: deref(v.Required), Schema: v.Schema.OpenAPIV3Schema}
	}
	return out, nil
}

func ptrTo[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// withoutFalseFlags is a copy of a schema, through every nested schema, with its flags that are
// set to false unset: they mean the same (Cluster API's dropFalsePtrBool), and the CRD schema
// libraries refuse x-kubernetes-preserve-unknown-fields: false (convertToAPIExtensionsJSONSchemaProps
// sets it only when true).
func withoutFalseFlags(s clusterv1.JSONSchemaProps) clusterv1.JSONSchemaProps {
	out := *s.DeepCopy()
	dropFalseFlags(&out)
	return out
}

func dropFalseFlags(s *clusterv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	for _, flag := range []**bool{&s.UniqueItems, &s.ExclusiveMaximum, &s.ExclusiveMinimum, &s.XPreserveUnknownFields, &s.XIntOrString} {
		if *flag != nil && !**flag {
			*flag = nil
		}
	}
	for name, p := range s.Properties {
		dropFalseFlags(&p)
		s.Properties[name] = p
	}
	for _, nested := range []*clusterv1.JSONSchemaProps{s.AdditionalProperties, s.Items, s.Not} {
		dropFalseFlags(nested)
	}
	for _, list := range [][]clusterv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range list {
			dropFalseFlags(&list[i])
		}
	}
}

// compiled is a variable schema ready for validation and defaulting.
type compiled struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
	// rules evaluates x-kubernetes-validations (nil without rules).
	rules *cel.Validator
	// wrapped is the structural schema of an object holding the variable under its name; defaulting
	// a top-level value needs a parent object.
	wrapped *structuralschema.Structural
}

func toInternal(s *clusterv1.JSONSchemaProps) (*apiextensions.JSONSchemaProps, error) {
	js, err := json.Marshal(withoutFalseFlags(*s))
	if err != nil {
		return nil, err
	}
	var v1 apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(js, &v1); err != nil {
		return nil, err
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&v1, &internal, nil); err != nil {
		return nil, err
	}
	return &internal, nil
}

// Compile prepares a definition's schema. Errors name the schema path.
func compile(d Definition, schemaPath *field.Path) (*compiled, error) {
	internal, err := toInternal(&d.Schema)
	if err != nil {
		return nil, field.Invalid(schemaPath, d.Name, fmt.Sprintf("schema cannot be converted: %v", err))
	}
	v, _, err := validation.NewSchemaValidator(internal)
	if err != nil {
		return nil, field.Invalid(schemaPath, d.Name, fmt.Sprintf("invalid schema: %v", err))
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, field.Invalid(schemaPath, d.Name, fmt.Sprintf("schema is not structural: %v", err))
	}
	wrapper := &apiextensions.JSONSchemaProps{Type: "object", Properties: map[string]apiextensions.JSONSchemaProps{d.Name: *internal}}
	ws, err := structuralschema.NewStructural(wrapper)
	if err != nil {
		return nil, field.Invalid(schemaPath, d.Name, fmt.Sprintf("schema is not structural: %v", err))
	}
	// The CRD structural rules want an object at the root, so they are checked on the wrapper.
	if errs := structuralschema.ValidateStructural(nil, ws); len(errs) > 0 {
		return nil, field.Invalid(schemaPath, d.Name, "schema is not structural: "+errs.ToAggregate().Error())
	}
	rules, err := compileRules(ss, schemaPath)
	if err != nil {
		return nil, err
	}
	return &compiled{validator: v, structural: ss, wrapped: ws, rules: rules}, nil
}

// shared keeps compiled schemas across computations: every pass of every Cluster of a class
// validates against the same definitions, and compiling them (CEL rules above all) costs far more
// than using them. Compiled schemas are read-only and safe to share. Bounded; when full it starts
// over.
var shared = struct {
	sync.Mutex
	m map[string]*compiled
}{m: map[string]*compiled{}}

const sharedSize = 1024

// compileShared is compile with the shared cache, keyed by the schema and where it is written
// (errors name that path). Errors are not kept.
func compileShared(d Definition, schemaPath *field.Path) (*compiled, error) {
	js, err := json.Marshal(d.Schema)
	if err != nil {
		return compile(d, schemaPath)
	}
	key := schemaPath.String() + "\x00" + string(js)
	shared.Lock()
	cc, ok := shared.m[key]
	shared.Unlock()
	if ok {
		return cc, nil
	}
	if cc, err = compile(d, schemaPath); err != nil {
		return nil, err
	}
	shared.Lock()
	if len(shared.m) >= sharedSize {
		shared.m = map[string]*compiled{}
	}
	shared.m[key] = cc
	shared.Unlock()
	return cc, nil
}

// Cache compiles each definition once; a ClusterClass's definitions are shared by all its Clusters.
type Cache struct {
	defs     map[string]Definition
	compiled map[string]*compiled
	errs     map[string]error
	// at is where the definitions are written, for schema errors.
	at *field.Path
}

// NewCache compiles the definitions lazily; schema errors name spec.variables.
func NewCache(defs map[string]Definition) *Cache {
	return NewCacheAt(defs, field.NewPath("spec", "variables"))
}

// NewCacheAt is NewCache for definitions written elsewhere (a discovery answer).
func NewCacheAt(defs map[string]Definition, at *field.Path) *Cache {
	return &Cache{defs: defs, compiled: map[string]*compiled{}, errs: map[string]error{}, at: at}
}

func (c *Cache) get(name string) (*compiled, error) {
	if cc, ok := c.compiled[name]; ok {
		return cc, nil
	}
	if err, ok := c.errs[name]; ok {
		return nil, err
	}
	d := c.defs[name]
	cc, err := compileShared(d, c.at.Key(name).Child("schema", "openAPIV3Schema"))
	if err != nil {
		c.errs[name] = err
		return nil, err
	}
	c.compiled[name] = cc
	return cc, nil
}

// CompileAll compiles every definition's schema, returning an error per invalid schema.
func (c *Cache) CompileAll() field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(c.defs) {
		if _, err := c.get(name); err != nil {
			errs = append(errs, toFieldErr(err))
		}
	}
	return errs
}

func sortedNames(defs map[string]Definition) []string {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Default returns values with defaults applied: a variable the Cluster does not set gets its
// schema's top-level default, and set values get defaults for their nested fields. Variables
// without a default stay unset. Values already set are never changed by a new class default.
func (c *Cache) Default(values []clusterv1.ClusterVariable, fldPath *field.Path) ([]clusterv1.ClusterVariable, field.ErrorList) {
	return c.defaultValues(values, fldPath, true)
}

// DefaultOverrides applies nested defaults to override values only; an override that is not set
// stays unset (so the Cluster-level value applies).
func (c *Cache) DefaultOverrides(values []clusterv1.ClusterVariable, fldPath *field.Path) ([]clusterv1.ClusterVariable, field.ErrorList) {
	return c.defaultValues(values, fldPath, false)
}

func (c *Cache) defaultValues(values []clusterv1.ClusterVariable, fldPath *field.Path, addMissing bool) ([]clusterv1.ClusterVariable, field.ErrorList) {
	var errs field.ErrorList
	byName := map[string]int{}
	out := make([]clusterv1.ClusterVariable, 0, len(values))
	for _, v := range values {
		byName[v.Name] = len(out)
		out = append(out, *v.DeepCopy())
	}
	names := make([]string, 0, len(c.defs))
	for n := range c.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		cc, err := c.get(name)
		if err != nil {
			errs = append(errs, toFieldErr(err))
			continue
		}
		i, set := byName[name]
		if !set && !addMissing {
			continue
		}
		wrapper := map[string]any{}
		if set {
			var val any
			if err := json.Unmarshal(out[i].Value.Raw, &val); err != nil {
				errs = append(errs, field.Invalid(fldPath.Key(name).Child("value"), string(out[i].Value.Raw), "not valid JSON"))
				continue
			}
			wrapper[name] = val
		}
		structuraldefaulting.Default(wrapper, cc.wrapped)
		val, ok := wrapper[name]
		if !ok {
			continue
		}
		raw, err := json.Marshal(val)
		if err != nil {
			errs = append(errs, field.InternalError(fldPath.Key(name), err))
			continue
		}
		if set {
			out[i].Value.Raw = raw
		} else {
			out = append(out, clusterv1.ClusterVariable{Name: name, Value: apiextensionsv1.JSON{Raw: raw}})
		}
	}
	return out, errs
}

// Validate checks values against the definitions. With requireAll, every required variable must
// be set (Cluster-level variables); overrides leave that check out. Unknown variables, duplicates,
// values that do not match their schema and fields the schema does not declare are errors.
func (c *Cache) Validate(values []clusterv1.ClusterVariable, fldPath *field.Path, requireAll bool) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for _, v := range values {
		p := fldPath.Key(v.Name)
		if seen[v.Name] {
			errs = append(errs, field.Duplicate(p, v.Name))
			continue
		}
		seen[v.Name] = true
		if _, ok := c.defs[v.Name]; !ok {
			errs = append(errs, field.Invalid(p, v.Name, "variable is not defined in the ClusterClass"))
			continue
		}
		cc, err := c.get(v.Name)
		if err != nil {
			errs = append(errs, toFieldErr(err))
			continue
		}
		valuePath := p.Child("value")
		if len(v.Value.Raw) == 0 {
			errs = append(errs, field.Required(valuePath, "a value is required"))
			continue
		}
		// As the API server decodes: integers as int64 (CEL rules tell int from double).
		var val any
		if err := utiljson.Unmarshal(v.Value.Raw, &val); err != nil {
			errs = append(errs, field.Invalid(valuePath, string(v.Value.Raw), "not valid JSON"))
			continue
		}
		schemaErrs := validation.ValidateCustomResource(valuePath, val, cc.validator)
		if len(schemaErrs) == 0 {
			// CEL rules assume a value of the right shape, as in the API server.
			schemaErrs = validateRules(cc.rules, cc.structural, valuePath, val)
		}
		for _, e := range schemaErrs {
			// The schema validator names list items ".[0]"; the API convention is "[0]".
			e.Field = strings.ReplaceAll(e.Field, ".[", "[")
			errs = append(errs, e)
		}
		pruned := pruning.PruneWithOptions(deepCopyJSON(val), cc.structural, false, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		if len(pruned) > 0 {
			sort.Strings(pruned)
			errs = append(errs, field.Invalid(valuePath, string(v.Value.Raw), "fields not declared in the schema: "+strings.Join(pruned, ", ")))
		}
	}
	if requireAll {
		names := make([]string, 0, len(c.defs))
		for n := range c.defs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if c.defs[n].Required && !seen[n] {
				errs = append(errs, field.Required(fldPath.Key(n), "required variable is not set"))
			}
		}
	}
	return errs
}

func toFieldErr(err error) *field.Error {
	if fe, ok := err.(*field.Error); ok {
		return fe
	}
	return field.InternalError(nil, err)
}

func deepCopyJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// Values merges Cluster-level values with overrides (overrides win) into name -> decoded value.
func Values(cluster, overrides []clusterv1.ClusterVariable) (map[string]any, error) {
	out := map[string]any{}
	for _, list := range [][]clusterv1.ClusterVariable{cluster, overrides} {
		for _, v := range list {
			var val any
			if len(v.Value.Raw) > 0 {
				if err := json.Unmarshal(v.Value.Raw, &val); err != nil {
					return nil, fmt.Errorf("variable %s: value is not valid JSON: %w", v.Name, err)
				}
			}
			out[v.Name] = val
		}
	}
	return out, nil
}
