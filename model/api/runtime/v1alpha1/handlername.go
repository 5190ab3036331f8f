package v1alpha1

import "strings"

// SplitHandlerName splits a handler reference as a ClusterClass gives it
// ("<handler>.<extensionconfig>", the name discovery records in status.handlers) into the
// handler's own name and its ExtensionConfig's; ok is false when either part is missing.
func SplitHandlerName(name string) (handler, config string, ok bool) {
	handler, config, ok = strings.Cut(name, ".")
	return handler, config, ok && handler != "" && config != ""
}
