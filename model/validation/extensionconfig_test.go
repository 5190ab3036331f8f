package validation

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
)

// The rules of Cluster API's ExtensionConfig webhook (core/webhooks/admission.
// validateExtensionConfigSpec), after its defaulting (ExtensionConfig.Default).
func TestExtensionConfig(t *testing.T) {
	str := func(s string) *string { return &s }
	port := func(p int32) *int32 { return &p }
	svc := func(mut func(*runtimev1.ServiceReference)) *runtimev1.ServiceReference {
		s := &runtimev1.ServiceReference{Namespace: "ext-system", Name: "ext"}
		mut(s)
		return s
	}
	for _, tc := range []struct {
		name string
		mut  func(*runtimev1.ExtensionConfig)
		want []string // substrings of the errors, in order; none: valid
	}{
		{"url", func(*runtimev1.ExtensionConfig) {}, nil},
		{"service, port defaulted", func(c *runtimev1.ExtensionConfig) {
			c.Spec.ClientConfig.URL, c.Spec.ClientConfig.Service = nil, svc(func(*runtimev1.ServiceReference) {})
		}, nil},
		{"neither", func(c *runtimev1.ExtensionConfig) { c.Spec.ClientConfig.URL = nil },
			[]string{"spec.clientConfig: Required value: either url or service must be defined"}},
		{"both", func(c *runtimev1.ExtensionConfig) {
			c.Spec.ClientConfig.Service = svc(func(*runtimev1.ServiceReference) {})
		},
			[]string{"spec.clientConfig: Forbidden: only one of url or service can be defined"}},
		{"http", func(c *runtimev1.ExtensionConfig) { c.Spec.ClientConfig.URL = str("http://ext.example:8443") },
			[]string{`spec.clientConfig.url: Invalid value: "http://ext.example:8443": 'https' is the only allowed URL scheme`}},
		{"not a URL", func(c *runtimev1.ExtensionConfig) { c.Spec.ClientConfig.URL = str("ext.example") },
			[]string{`spec.clientConfig.url: Invalid value: "ext.example": must be a valid URL`}},
		{"bad service", func(c *runtimev1.ExtensionConfig) {
			c.Spec.ClientConfig.URL = nil
			c.Spec.ClientConfig.Service = svc(func(s *runtimev1.ServiceReference) {
				s.Name, s.Namespace, s.Path, s.Port = "1ext", "", str("hooks"), port(70000)
			})
		}, []string{"spec.clientConfig.service.name: Invalid value: \"1ext\"", "spec.clientConfig.service.namespace: Required value",
			"spec.clientConfig.service.namespace: Invalid value", "spec.clientConfig.service.path: Invalid value: \"hooks\"",
			"spec.clientConfig.service.path: Invalid value: \"hooks\": must start with \"/\"", "spec.clientConfig.service.port: Invalid value: 70000"}},
		{"bad name", func(c *runtimev1.ExtensionConfig) { c.Name = "Ext_1" },
			[]string{`metadata.name: Invalid value: "Ext_1": ExtensionConfig name should be a valid DNS1123 label name`}},
		{"bad selector", func(c *runtimev1.ExtensionConfig) {
			c.Spec.NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
		}, []string{"spec.namespaceSelector: Invalid value"}},
		{"request version v1beta1", func(c *runtimev1.ExtensionConfig) {
			c.Annotations = map[string]string{runtimev1.RequestClusterVersionAnnotation: "v1beta1"}
		}, nil},
		{"request version unknown", func(c *runtimev1.ExtensionConfig) {
			c.Annotations = map[string]string{runtimev1.RequestClusterVersionAnnotation: "v1"}
		}, []string{`metadata.annotations[topoflow.dev/request-cluster-version]: Invalid value: "v1": must be "v1beta1" or "v1beta2"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &runtimev1.ExtensionConfig{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
				Spec: runtimev1.ExtensionConfigSpec{ClientConfig: runtimev1.ClientConfig{URL: str("https://ext.example:8443/hooks")}}}
			tc.mut(c)
			DefaultExtensionConfig(c)
			if c.Spec.NamespaceSelector == nil {
				t.Fatal("namespaceSelector not defaulted")
			}
			if s := c.Spec.ClientConfig.Service; s != nil && (s.Port == nil || (tc.want == nil && *s.Port != 443)) {
				t.Errorf("service port = %v, want 443 by default", s.Port)
			}
			errs := ExtensionConfig(c)
			if len(errs) != len(tc.want) {
				t.Fatalf("errors %v, want %d: %v", errs, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i].Error(), w)
				}
			}
		})
	}
}
