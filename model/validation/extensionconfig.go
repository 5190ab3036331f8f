package validation

import (
	"fmt"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
)

// DefaultExtensionConfig applies the defaults of Cluster API's ExtensionConfig webhook
// (core/webhooks/admission.ExtensionConfig.Default): an absent namespaceSelector selects every
// namespace, and a service without a port is reached on 443.
func DefaultExtensionConfig(cfg *runtimev1.ExtensionConfig) {
	if cfg.Spec.NamespaceSelector == nil {
		cfg.Spec.NamespaceSelector = &metav1.LabelSelector{}
	}
	if s := cfg.Spec.ClientConfig.Service; s != nil && s.Port == nil {
		port := int32(443)
		s.Port = &port
	}
}

// ExtensionConfig checks an ExtensionConfig as Cluster API's webhook does
// (core/webhooks/admission.validateExtensionConfigSpec, on a defaulted object): a DNS-1123 label
// name; exactly one of url (https) and service (a DNS-1035 name, a namespace, a path starting
// with "/", a valid port); a namespaceSelector that parses. Plus topoflow's own annotation
// (runtimev1.RequestClusterVersionAnnotation).
func ExtensionConfig(cfg *runtimev1.ExtensionConfig) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(cfg.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cfg.Name,
			"ExtensionConfig name should be a valid DNS1123 label name: "+msg))
	}
	if _, err := runtimev1.RequestClusterVersion(cfg); err != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "annotations").Key(runtimev1.RequestClusterVersionAnnotation),
			cfg.Annotations[runtimev1.RequestClusterVersionAnnotation],
			fmt.Sprintf("must be %q or %q", runtimev1.ClusterV1Beta1, runtimev1.ClusterV1Beta2)))
	}
	spec := field.NewPath("spec")
	cc := cfg.Spec.ClientConfig
	hasURL := cc.URL != nil && *cc.URL != ""
	switch {
	case !hasURL && cc.Service == nil:
		errs = append(errs, field.Required(spec.Child("clientConfig"), "either url or service must be defined"))
	case hasURL && cc.Service != nil:
		errs = append(errs, field.Forbidden(spec.Child("clientConfig"), "only one of url or service can be defined"))
	}
	if hasURL {
		p := spec.Child("clientConfig", "url")
		if u, err := url.ParseRequestURI(*cc.URL); err != nil {
			errs = append(errs, field.Invalid(p, *cc.URL, fmt.Sprintf("must be a valid URL, e.g. https://example.com: %v", err)))
		} else if u.Scheme != "https" {
			errs = append(errs, field.Invalid(p, *cc.URL, "'https' is the only allowed URL scheme, e.g. https://example.com"))
		}
	}
	if s := cc.Service; s != nil {
		p := spec.Child("clientConfig", "service")
		if s.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), "must not be empty"))
		}
		for _, msg := range utilvalidation.IsDNS1035Label(s.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), s.Name, msg))
		}
		if s.Namespace == "" {
			errs = append(errs, field.Required(p.Child("namespace"), "must not be empty"))
		}
		for _, msg := range utilvalidation.IsDNS1123Label(s.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), s.Namespace, msg))
		}
		if s.Path != nil && *s.Path != "" {
			if _, err := url.ParseRequestURI(*s.Path); err != nil {
				errs = append(errs, field.Invalid(p.Child("path"), *s.Path, fmt.Sprintf("must be a valid URL path e.g. /path/to/hook: %v", err)))
			}
			if !strings.HasPrefix(*s.Path, "/") {
				errs = append(errs, field.Invalid(p.Child("path"), *s.Path, `must start with "/" to be a valid URL path`))
			}
		}
		if s.Port != nil {
			for _, msg := range utilvalidation.IsValidPortNum(int(*s.Port)) {
				errs = append(errs, field.Invalid(p.Child("port"), *s.Port, msg))
			}
		}
	}
	if cfg.Spec.NamespaceSelector == nil {
		errs = append(errs, field.Required(spec.Child("namespaceSelector"), "must be defined"))
	} else if _, err := metav1.LabelSelectorAsSelector(cfg.Spec.NamespaceSelector); err != nil {
		errs = append(errs, field.Invalid(spec.Child("namespaceSelector"), cfg.Spec.NamespaceSelector, err.Error()))
	}
	return errs
}
