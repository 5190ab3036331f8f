package runtimeext

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
)

// ExtensionError is a failed call of one named handler: it could not be reached or answered
// Failure. Message is safe to show on the Cluster or ClusterClass; Error reads as Cluster API
// v1.14's runtime client words a failed CallExtension, so the conditions that show it read the
// same (#13813).
type ExtensionError struct {
	Hook, Handler string
	Message       string
}

func (e *ExtensionError) Error() string {
	return fmt.Sprintf("failed to call extension handler %q: %s", e.Handler, e.Message)
}

// answerError says why an answer fails its call, as Cluster API's validateResponseStatus words
// it: a Failure, or a status that is neither Success nor Failure ("" for Success).
func answerError(status hooksv1.ResponseStatus, message string) string {
	switch status {
	case hooksv1.ResponseStatusSuccess:
		return ""
	case hooksv1.ResponseStatusFailure:
		return "got failure response with message: " + message
	}
	return fmt.Sprintf("got unknown response status %q with message: %v", status, message)
}

// CallExtension calls one handler by the name a ClusterClass gives it ("<handler>.<extensionconfig>",
// as in spec.patches[].external.generateExtension) for an object in namespace (empty for none).
// settings override the ExtensionConfig's key by key. The answer is decoded into out.
//
// As in Cluster API: the ExtensionConfig must select the namespace; a handler that cannot be
// reached under failurePolicy Ignore leaves out untouched and is not an error; an answer with
// status Failure is an error carrying the extension's message.
func (c *Client) CallExtension(ctx context.Context, hook, name, namespace string, req any, settings map[string]string, out any) error {
	handler, config, ok := runtimev1.SplitHandlerName(name)
	if !ok {
		return &ExtensionError{Hook: hook, Handler: name, Message: `handler names have the form "<handler>.<extensionconfig>"`}
	}
	u, err := c.Kube.Get(ctx, extensionConfigs, "", config, 0)
	if kube.IsNotFound(err) {
		return &ExtensionError{Hook: hook, Handler: name, Message: fmt.Sprintf("ExtensionConfig %s does not exist", config)}
	}
	if err != nil {
		return fmt.Errorf("reading ExtensionConfig %s: %w", config, err)
	}
	cfg := &runtimev1.ExtensionConfig{}
	if err := c.Kube.Decode(u, cfg); err != nil {
		return fmt.Errorf("ExtensionConfig %s: %w", config, err)
	}
	if namespace != "" {
		ok, err := c.selects(ctx, cfg, &namespaceLabels{name: namespace})
		if err != nil {
			return err
		}
		if !ok {
			return &ExtensionError{Hook: hook, Handler: name, Message: fmt.Sprintf("ExtensionConfig %s does not select namespace %s (spec.namespaceSelector)", config, namespace)}
		}
	}
	h := findHandler(cfg, name)
	if h == nil {
		// Not discovered yet, or the extension gained the handler since: discover once more.
		if err := c.Discover(ctx, cfg); err != nil {
			return &ExtensionError{Hook: hook, Handler: name, Message: err.Error()}
		}
		h = findHandler(cfg, name)
	}
	if h == nil {
		return &ExtensionError{Hook: hook, Handler: name, Message: fmt.Sprintf("ExtensionConfig %s has no handler %s in status.handlers", config, handler)}
	}
	if h.handler.RequestHook.Hook != hook || h.handler.RequestHook.APIVersion != hooksv1.APIVersion {
		return &ExtensionError{Hook: hook, Handler: name, Message: fmt.Sprintf("the handler serves %s %s, not %s", h.handler.RequestHook.APIVersion, h.handler.RequestHook.Hook, hook)}
	}
	js, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var body map[string]any
	if err := json.Unmarshal(js, &body); err != nil {
		return err
	}
	var raw json.RawMessage
	if body, err = c.requestBody(*h, hook, body, settings); err != nil {
		return &ExtensionError{Hook: hook, Handler: name, Message: err.Error()}
	}
	if err := c.postInjected(ctx, cfg, hooksv1.HandlerPath(hook, handler), body, h.timeout(), &raw); err != nil {
		if h.ignoresErrors() {
			return nil
		}
		return &ExtensionError{Hook: hook, Handler: name, Message: err.Error()}
	}
	var common hooksv1.CommonResponse
	if err := json.Unmarshal(raw, &common); err != nil {
		return &ExtensionError{Hook: hook, Handler: name, Message: "decoding the answer: " + err.Error()}
	}
	if why := answerError(common.Status, common.Message); why != "" {
		return &ExtensionError{Hook: hook, Handler: name, Message: why}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &ExtensionError{Hook: hook, Handler: name, Message: "decoding the answer: " + err.Error()}
	}
	return nil
}

func findHandler(cfg *runtimev1.ExtensionConfig, name string) *registered {
	for _, eh := range cfg.Status.Handlers {
		if eh.Name == name {
			return &registered{config: cfg, handler: eh}
		}
	}
	return nil
}
