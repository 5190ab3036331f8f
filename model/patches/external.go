package patches

import (
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/uuid"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
)

// Extensions calls the Runtime Extension handlers a class's external patches name. The caller
// supplies it (the worker's runtime client), so the patch engine itself does no I/O. handler is
// the name from the class ("<handler>.<extensionconfig>"); settings are the patch's
// external.settings. An answer with status Failure must come back as an error.
type Extensions interface {
	GeneratePatches(handler string, settings map[string]string, req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error)
	ValidateTopology(handler string, settings map[string]string, req *hooksv1.ValidateTopologyRequest) error
}

// External is what external patches need beyond the targets.
type External struct {
	// Extensions is nil where no Runtime Extension can be called (an offline plan); a class with
	// external patches then fails with an error naming the patch.
	Extensions Extensions
	// Variables are the Cluster's variables, defaulted.
	Variables []clusterv1.ClusterVariable
	// ClusterBuiltin is builtin.cluster, sent as the global "builtin" variable.
	ClusterBuiltin map[string]any
	// DefinedBy maps a patch name to the variables it defines (the "from" of the class's
	// status.variables definitions). As in Cluster API, an external patch is sent only the
	// variables it defines, plus builtin.
	DefinedBy map[string]map[string]bool
}

// DefinedBy indexes a class's status.variables by the patch that defines each variable.
func DefinedBy(status []clusterv1.ClusterClassStatusVariable) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, v := range status {
		for _, d := range v.Definitions {
			if out[d.From] == nil {
				out[d.From] = map[string]bool{}
			}
			out[d.From][v.Name] = true
		}
	}
	return out
}

func (e *External) ready(p *clusterv1.ClusterClassPatch) error {
	if e == nil || e.Extensions == nil {
		return &Error{Patch: p.Name, Template: "the topology", Err: errors.New("external patches need Runtime Extensions, which cannot be called here")}
	}
	return nil
}

// itemUID correlates a request item with the patches answered for it. It is derived from the
// holder, so a retried computation sends the same request.
func itemUID(t *Target) types.UID {
	h := t.Holder
	return types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte(h.Kind+"/"+h.Namespace+"/"+h.Name+"#"+h.FieldPath)).String())
}

func (e *External) global(patch string) ([]hooksv1.Variable, error) {
	out := make([]hooksv1.Variable, 0, len(e.Variables)+1)
	for _, v := range e.Variables {
		if v.Name != "builtin" && e.DefinedBy[patch][v.Name] {
			out = append(out, hooksv1.Variable{Name: v.Name, Value: v.Value})
		}
	}
	return appendBuiltin(out, map[string]any{"cluster": e.ClusterBuiltin})
}

func (e *External) itemVariables(patch string, t *Target) ([]hooksv1.Variable, error) {
	out := make([]hooksv1.Variable, 0, len(t.Overrides)+1)
	for _, v := range t.Overrides {
		if e.DefinedBy[patch][v.Name] {
			out = append(out, hooksv1.Variable{Name: v.Name, Value: v.Value})
		}
	}
	if len(t.Builtin) == 0 {
		return out, nil
	}
	return appendBuiltin(out, t.Builtin)
}

func appendBuiltin(vs []hooksv1.Variable, builtin map[string]any) ([]hooksv1.Variable, error) {
	js, err := json.Marshal(builtin)
	if err != nil {
		return nil, fmt.Errorf("builtin variables: %w", err)
	}
	return append(vs, hooksv1.Variable{Name: "builtin", Value: apiextensionsv1.JSON{Raw: js}}), nil
}

// generate calls a patch's generateExtension with every template and applies the answer.
func (e *External) generate(p *clusterv1.ClusterClassPatch, targets []*Target) error {
	if err := e.ready(p); err != nil {
		return err
	}
	fail := func(t *Target, err error) error {
		where := "the topology"
		if t != nil {
			where = describe(t)
		}
		return &Error{Patch: p.Name, Template: where, Err: err}
	}
	req := &hooksv1.GeneratePatchesRequest{}
	var err error
	if req.Variables, err = e.global(p.Name); err != nil {
		return fail(nil, err)
	}
	docs := make(map[types.UID][]byte, len(targets))
	byUID := make(map[types.UID]*Target, len(targets))
	for _, t := range targets {
		doc, err := t.Template.MarshalJSON()
		if err != nil {
			return fail(t, err)
		}
		vars, err := e.itemVariables(p.Name, t)
		if err != nil {
			return fail(t, err)
		}
		uid := itemUID(t)
		docs[uid], byUID[uid] = doc, t
		req.Items = append(req.Items, hooksv1.GeneratePatchesRequestItem{
			UID: uid, HolderReference: t.Holder, Object: runtime.RawExtension{Raw: doc}, Variables: vars,
		})
	}
	resp, err := e.Extensions.GeneratePatches(p.External.GeneratePatchesExtension, p.External.Settings, req)
	if err != nil {
		return &CallError{Patch: p.Name, Err: err}
	}
	if resp == nil {
		return nil // the handler failed under failurePolicy Ignore: no patches
	}
	for i, item := range resp.Items {
		t := byUID[item.UID]
		if t == nil {
			return fail(nil, fmt.Errorf("answer items[%d] has uid %q, which is not in the request", i, item.UID))
		}
		var patched []byte
		switch item.PatchType {
		case hooksv1.JSONPatchType:
			jp, err := jsonpatch.DecodePatch(item.Patch)
			if err != nil {
				return fail(t, fmt.Errorf("answer items[%d]: invalid JSON patch: %w", i, err))
			}
			if patched, err = jp.Apply(docs[item.UID]); err != nil {
				return fail(t, fmt.Errorf("answer items[%d]: applying JSON patch: %w", i, err))
			}
		case hooksv1.JSONMergePatchType:
			if patched, err = jsonpatch.MergePatch(docs[item.UID], item.Patch); err != nil {
				return fail(t, fmt.Errorf("answer items[%d]: applying JSON merge patch: %w", i, err))
			}
		default:
			return fail(t, fmt.Errorf("answer items[%d]: patchType %q is neither JSONPatch nor JSONMergePatch", i, item.PatchType))
		}
		if err := takeSpec(t.Template, patched); err != nil {
			return fail(t, err)
		}
		// A later item for the same template applies on top of this one.
		if docs[item.UID], err = t.Template.MarshalJSON(); err != nil {
			return fail(t, err)
		}
	}
	return nil
}

// validate calls a patch's validateExtension with the fully patched templates.
func (e *External) validate(p *clusterv1.ClusterClassPatch, targets []*Target) error {
	if err := e.ready(p); err != nil {
		return err
	}
	req := &hooksv1.ValidateTopologyRequest{}
	var err error
	if req.Variables, err = e.global(p.Name); err != nil {
		return &Error{Patch: p.Name, Template: "the topology", Err: err}
	}
	for _, t := range targets {
		doc, err := t.Template.MarshalJSON()
		if err != nil {
			return &Error{Patch: p.Name, Template: describe(t), Err: err}
		}
		vars, err := e.itemVariables(p.Name, t)
		if err != nil {
			return &Error{Patch: p.Name, Template: describe(t), Err: err}
		}
		req.Items = append(req.Items, &hooksv1.ValidateTopologyRequestItem{HolderReference: t.Holder, Object: runtime.RawExtension{Raw: doc}, Variables: vars})
	}
	if err := e.Extensions.ValidateTopology(p.External.ValidateTopologyExtension, p.External.Settings, req); err != nil {
		return &CallError{Patch: p.Name, Validate: true, Err: err}
	}
	return nil
}
