// Package patches applies a ClusterClass's inline patches to the templates of one Cluster, the
// way Cluster API's inline patch generator does:
//
//   - a definition's selector matches a template by exact apiVersion and kind, and by role
//     (matchResources: infrastructureCluster; controlPlane, which covers the control plane
//     template and its machine template; machineDeploymentClass / machinePoolClass names, with
//     "*" wildcards);
//   - enabledIf is a Go template over the variables; the patch applies when it renders "true";
//   - a JSON patch's value is its value, a variable (with .field and [i] access) or a Go template
//     rendered with Sprig's hermetic functions and parsed as YAML;
//   - patches apply in the order the class lists them; the template's spec and its labels and
//     annotations are taken (Cluster API v1.14).
//
// External patches (Runtime Extensions' GeneratePatches and ValidateTopology) run in the same
// order through an Extensions implementation the caller supplies; see External.
package patches

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// Role is the part a template plays in a Cluster's topology.
type Role string

// Template roles.
const (
	InfrastructureCluster           Role = "InfrastructureCluster"
	ControlPlane                    Role = "ControlPlane"
	ControlPlaneInfrastructure      Role = "ControlPlaneInfrastructureMachineTemplate"
	MachineDeploymentBootstrap      Role = "MachineDeploymentBootstrapTemplate"
	MachineDeploymentInfrastructure Role = "MachineDeploymentInfrastructureMachineTemplate"
	MachinePoolBootstrap            Role = "MachinePoolBootstrapTemplate"
	MachinePoolInfrastructure       Role = "MachinePoolInfrastructureMachinePoolTemplate"
)

// Target is one template instance of one Cluster: the class template, copied, for a role (and for
// worker pools, for one pool of the topology).
type Target struct {
	Role Role
	// Class is the MachineDeploymentClass or MachinePoolClass of a worker pool template.
	Class string
	// Template is patched in place; only its spec changes.
	Template *unstructured.Unstructured
	// Variables are the values for this template: user variables (Cluster-level merged with the
	// pool's or control plane's overrides) plus "builtin".
	Variables map[string]any

	// For external patches, which receive global and per-template variables apart:
	// Holder is the object that will reference the template's clone, and at which field.
	Holder hooksv1.HolderReference
	// Overrides are the defaulted variable overrides of the control plane or pool.
	Overrides []clusterv1.ClusterVariable
	// Builtin is the template's own part of "builtin" (controlPlane, machineDeployment or
	// machinePool); builtin.cluster is global.
	Builtin map[string]any
}

// Error is a patch failure naming the patch, definition and template.
type Error struct {
	Patch    string
	Template string
	Err      error
}

func (e *Error) Error() string {
	return fmt.Sprintf("patch %q on %s: %v", e.Patch, e.Template, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// CallError is an external patch's extension that failed to answer (a failed call, or a Failure
// answer), worded as Cluster API v1.14's patch engine wraps it (engine.Apply): generating
// ("failed to generate patches for patch %q: ...") or validating ("validation of patch %q
// failed: ...").
type CallError struct {
	Patch    string
	Validate bool
	Err      error
}

func (e *CallError) Error() string {
	if e.Validate {
		return fmt.Sprintf("validation of patch %q failed: %v", e.Patch, e.Err)
	}
	return fmt.Sprintf("failed to generate patches for patch %q: %v", e.Patch, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// Apply applies the class's patches to the targets in the order the class lists them: inline
// patches here, external patches through ext (see External), whose GeneratePatches answers are
// applied before the next patch runs; then every external validateExtension checks the result.
// ext may be nil when the class has no external patches.
func Apply(patches []clusterv1.ClusterClassPatch, targets []*Target, ext *External) error {
	start := 0 // first inline patch not applied yet
	for i := range patches {
		p := &patches[i]
		if p.External == nil {
			continue
		}
		if err := applyInline(patches[start:i], targets); err != nil {
			return err
		}
		start = i + 1
		if p.External.GeneratePatchesExtension == "" {
			continue
		}
		if err := ext.generate(p, targets); err != nil {
			return err
		}
	}
	if err := applyInline(patches[start:], targets); err != nil {
		return err
	}
	for i := range patches {
		if p := &patches[i]; p.External != nil && p.External.ValidateTopologyExtension != "" {
			if err := ext.validate(p, targets); err != nil {
				return err
			}
		}
	}
	return nil
}

// applyInline applies a run of inline patches. All operations for one template are applied in
// one pass, in patch order, which is what applying them patch by patch would give (values depend
// on variables, not on the template); a failure is traced back to the patch that caused it.
func applyInline(patches []clusterv1.ClusterClassPatch, targets []*Target) error {
	if len(patches) == 0 {
		return nil
	}
	r := newRenderer()
	for _, t := range targets {
		var all []map[string]any
		perPatch := make([][]map[string]any, len(patches))
		for pi := range patches {
			p := &patches[pi]
			if p.External != nil || len(p.Definitions) == 0 {
				continue
			}
			ops, err := r.operations(p, t)
			if err != nil {
				return &Error{Patch: p.Name, Template: describe(t), Err: err}
			}
			perPatch[pi] = ops
			all = append(all, ops...)
		}
		if len(all) == 0 {
			continue
		}
		if err := patchSpec(t.Template, all); err == nil {
			continue
		}
		// Find the patch that fails: apply them one by one (patchSpec leaves the template
		// untouched when it fails).
		for pi, ops := range perPatch {
			if len(ops) == 0 {
				continue
			}
			if err := patchSpec(t.Template, ops); err != nil {
				return &Error{Patch: patches[pi].Name, Template: describe(t), Err: err}
			}
		}
	}
	return nil
}

func describe(t *Target) string {
	s := fmt.Sprintf("%s %s (%s", t.Template.GetKind(), t.Template.GetName(), t.Role)
	if t.Class != "" {
		s += " of class " + t.Class
	}
	return s + ")"
}

// renderer renders patch templates.
type renderer struct{}

func newRenderer() *renderer { return &renderer{} }

// parsed caches parsed templates by their text: registering Sprig's functions on every parse is
// costly, and a class's templates are few and reused for every Cluster and reconcile. Parsed
// templates are safe to execute concurrently. The cache is bounded; when full it starts over.
var parsed = struct {
	sync.Mutex
	m map[string]*template.Template
}{m: map[string]*template.Template{}}

const parsedCacheSize = 4096

func parse(tmpl string) (*template.Template, error) {
	parsed.Lock()
	t, ok := parsed.m[tmpl]
	parsed.Unlock()
	if ok {
		return t, nil
	}
	t, err := template.New("tpl").Funcs(funcs).Parse(tmpl)
	if err != nil {
		return nil, err
	}
	parsed.Lock()
	if len(parsed.m) >= parsedCacheSize {
		parsed.m = map[string]*template.Template{}
	}
	parsed.m[tmpl] = t
	parsed.Unlock()
	return t, nil
}

func (r *renderer) render(tmpl string, vars map[string]any) ([]byte, error) {
	t, err := parse(tmpl)
	if err != nil {
		return nil, fmt.Errorf("parsing template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		return nil, fmt.Errorf("rendering template: %w", err)
	}
	return b.Bytes(), nil
}

// operations computes one patch's JSON patch operations for a target (none when no definition
// selects it or enabledIf says no).
func (r *renderer) operations(p *clusterv1.ClusterClassPatch, t *Target) ([]map[string]any, error) {
	var matching []int
	for di := range p.Definitions {
		if Matches(p.Definitions[di].Selector, t) {
			matching = append(matching, di)
		}
	}
	if len(matching) == 0 {
		return nil, nil
	}
	if p.EnabledIf != "" {
		enabled, err := r.isEnabled(p.EnabledIf, t.Variables)
		if err != nil || !enabled {
			return nil, err
		}
	}
	var ops []map[string]any
	for _, di := range matching {
		for ji := range p.Definitions[di].JSONPatches {
			jp := &p.Definitions[di].JSONPatches[ji]
			op := map[string]any{"op": jp.Op, "path": jp.Path}
			if jp.Op != "remove" {
				v, err := r.value(jp, t.Variables)
				if err != nil {
					return nil, fmt.Errorf("definitions[%d].jsonPatches[%d] (%s %s): %w", di, ji, jp.Op, jp.Path, err)
				}
				op["value"] = v
			}
			ops = append(ops, op)
		}
	}
	return ops, nil
}

// patchSpec applies RFC 6902 operations to the template and keeps only the resulting spec.
func patchSpec(tmpl *unstructured.Unstructured, ops []map[string]any) error {
	opsJSON, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	patch, err := jsonpatch.DecodePatch(opsJSON)
	if err != nil {
		return fmt.Errorf("invalid JSON patch: %w", err)
	}
	doc, err := tmpl.MarshalJSON()
	if err != nil {
		return err
	}
	patched, err := patch.Apply(doc)
	if err != nil {
		return fmt.Errorf("applying JSON patch: %w", err)
	}
	return takeSpec(tmpl, patched)
}

// takeSpec copies the spec, and the labels and annotations when the patched copy has them, of a
// patched copy of tmpl into tmpl (Cluster API v1.14's applyPatchToRequest: patchutil.Patch of
// "spec", "metadata.labels", "metadata.annotations"; earlier releases took the spec only).
func takeSpec(tmpl *unstructured.Unstructured, patched []byte) error {
	var out map[string]any
	if err := json.Unmarshal(patched, &out); err != nil {
		return err
	}
	if meta, ok := out["metadata"].(map[string]any); ok {
		for _, k := range []string{"labels", "annotations"} {
			if v, found := meta[k]; found {
				if err := unstructured.SetNestedField(tmpl.Object, v, "metadata", k); err != nil {
					return fmt.Errorf("the patched metadata.%s: %w", k, err)
				}
			}
		}
	}
	if spec, ok := out["spec"]; ok {
		if _, isObject := spec.(map[string]any); !isObject {
			return fmt.Errorf("the patched spec is not an object")
		}
		tmpl.Object["spec"] = spec
	} else {
		delete(tmpl.Object, "spec")
	}
	return nil
}

// Matches reports whether a selector selects the target.
func Matches(sel clusterv1.PatchSelector, t *Target) bool {
	if sel.APIVersion != t.Template.GetAPIVersion() || sel.Kind != t.Template.GetKind() {
		return false
	}
	m := sel.MatchResources
	switch t.Role {
	case InfrastructureCluster:
		return m.InfrastructureCluster != nil && *m.InfrastructureCluster
	case ControlPlane, ControlPlaneInfrastructure:
		return m.ControlPlane != nil && *m.ControlPlane
	case MachineDeploymentBootstrap, MachineDeploymentInfrastructure:
		return m.MachineDeploymentClass != nil && matchesName(m.MachineDeploymentClass.Names, t.Class)
	case MachinePoolBootstrap, MachinePoolInfrastructure:
		return m.MachinePoolClass != nil && matchesName(m.MachinePoolClass.Names, t.Class)
	}
	return false
}

// matchesName matches a class name against names that may hold "*" wildcards ("*", "prefix-*",
// "*-suffix", "a*b").
func matchesName(patterns []string, name string) bool {
	for _, p := range patterns {
		if wildcard(p, name) {
			return true
		}
	}
	return false
}

func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, part := range parts[1:] {
		last := i == len(parts)-2
		if last {
			return strings.HasSuffix(s, part)
		}
		idx := strings.Index(s, part)
		if idx < 0 {
			return false
		}
		s = s[idx+len(part):]
	}
	return true
}

// funcs are Sprig's hermetic functions: no clocks, randomness, environment or network.
var funcs = sprig.HermeticTxtFuncMap()

// IsEnabled renders an enabledIf template: the patch is enabled when it renders "true".
func IsEnabled(enabledIf string, vars map[string]any) (bool, error) {
	return newRenderer().isEnabled(enabledIf, vars)
}

func (r *renderer) isEnabled(enabledIf string, vars map[string]any) (bool, error) {
	out, err := r.render(enabledIf, vars)
	if err != nil {
		return false, fmt.Errorf("enabledIf: %w", err)
	}
	return strings.TrimSpace(string(out)) == "true", nil
}

func (r *renderer) value(jp *clusterv1.JSONPatch, vars map[string]any) (any, error) {
	switch {
	case jp.Value != nil && jp.ValueFrom != nil:
		return nil, fmt.Errorf("value and valueFrom are mutually exclusive")
	case jp.Value != nil:
		var v any
		if err := json.Unmarshal(jp.Value.Raw, &v); err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
		return v, nil
	case jp.ValueFrom != nil && jp.ValueFrom.Variable != "" && jp.ValueFrom.Template != "":
		return nil, fmt.Errorf("valueFrom.variable and valueFrom.template are mutually exclusive")
	case jp.ValueFrom != nil && jp.ValueFrom.Variable != "":
		return Lookup(vars, jp.ValueFrom.Variable)
	case jp.ValueFrom != nil && jp.ValueFrom.Template != "":
		out, err := r.render(jp.ValueFrom.Template, vars)
		if err != nil {
			return nil, fmt.Errorf("valueFrom.template: %w", err)
		}
		var v any
		if err := yaml.Unmarshal(out, &v); err != nil {
			return nil, fmt.Errorf("valueFrom.template: output %q is not YAML or JSON: %w", string(out), err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("one of value or valueFrom is required")
}

// Lookup resolves a variable path such as "httpProxy.url", "dnsServers[0]" or
// "builtin.controlPlane.version".
func Lookup(vars map[string]any, path string) (any, error) {
	segs, err := splitPath(path)
	if err != nil {
		return nil, err
	}
	var cur any = vars
	walked := ""
	for _, s := range segs {
		switch c := cur.(type) {
		case map[string]any:
			if s.index >= 0 {
				return nil, fmt.Errorf("variable %q: %s is an object, not a list", path, orRoot(walked))
			}
			v, ok := c[s.key]
			if !ok {
				if walked == "" {
					return nil, fmt.Errorf("variable %q is not set", s.key)
				}
				return nil, fmt.Errorf("variable %q: %s has no field %q", path, walked, s.key)
			}
			cur = v
			walked = join(walked, s.key)
		case []any:
			if s.index < 0 {
				return nil, fmt.Errorf("variable %q: %s is a list, not an object", path, walked)
			}
			if s.index >= len(c) {
				return nil, fmt.Errorf("variable %q: index %d out of range (%s has %d items)", path, s.index, walked, len(c))
			}
			cur = c[s.index]
			walked += "[" + strconv.Itoa(s.index) + "]"
		default:
			return nil, fmt.Errorf("variable %q: %s is a %T, it has no fields", path, walked, cur)
		}
	}
	return cur, nil
}

func orRoot(s string) string {
	if s == "" {
		return "the variables"
	}
	return s
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "." + b
}

type segment struct {
	key   string
	index int // -1 for a key
}

// splitPath parses "a.b[2].c" into segments.
func splitPath(path string) ([]segment, error) {
	var out []segment
	for _, part := range strings.Split(path, ".") {
		if part == "" {
			return nil, fmt.Errorf("variable path %q has an empty segment", path)
		}
		key := part
		var idxs []int
		if i := strings.IndexByte(part, '['); i >= 0 {
			key = part[:i]
			rest := part[i:]
			for rest != "" {
				end := strings.IndexByte(rest, ']')
				if rest[0] != '[' || end < 0 {
					return nil, fmt.Errorf("variable path %q: malformed index in %q", path, part)
				}
				n, err := strconv.Atoi(rest[1:end])
				if err != nil || n < 0 {
					return nil, fmt.Errorf("variable path %q: index %q is not a non-negative integer", path, rest[1:end])
				}
				idxs = append(idxs, n)
				rest = rest[end+1:]
			}
		}
		if key != "" {
			out = append(out, segment{key: key, index: -1})
		} else if len(out) == 0 {
			return nil, fmt.Errorf("variable path %q must start with a name", path)
		}
		for _, n := range idxs {
			out = append(out, segment{index: n})
		}
	}
	return out, nil
}
