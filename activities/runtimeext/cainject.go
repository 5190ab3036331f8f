package runtimeext

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	runtimev1 "github.com/topoflow/topoflow/model/api/runtime/v1alpha1"
)

// InjectCAAnnotation names a Secret ("<namespace>/<name>") whose "ca.crt" becomes the
// ExtensionConfig's spec.clientConfig.caBundle, as Cluster API injects it.
const InjectCAAnnotation = "runtime.cluster.x-k8s.io/inject-ca-from-secret"

// caSecretKey is the Secret data key holding the CA (what cert-manager writes).
const caSecretKey = "ca.crt"

// CAInjectorFieldManager owns the injected caBundle.
const CAInjectorFieldManager = "topoflow-ca-injector"

var secrets = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// injectCA copies the CA from the Secret the annotation names into cfg (and the API server) when
// it differs. It reports whether the bundle changed. No annotation: nothing to do.
func (c *Client) injectCA(ctx context.Context, cfg *runtimev1.ExtensionConfig) (bool, error) {
	ref, ok := cfg.Annotations[InjectCAAnnotation]
	if !ok {
		return false, nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return false, fmt.Errorf("ExtensionConfig %s: annotation %s: want <namespace>/<name>, got %q", cfg.Name, InjectCAAnnotation, ref)
	}
	u, err := c.Kube.Dynamic.Resource(secrets).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if kube.IsNotFound(err) {
		return false, fmt.Errorf("ExtensionConfig %s: annotation %s: Secret %s does not exist", cfg.Name, InjectCAAnnotation, ref)
	}
	if err != nil {
		return false, fmt.Errorf("reading Secret %s for ExtensionConfig %s: %w", ref, cfg.Name, err)
	}
	var secret corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &secret); err != nil {
		return false, fmt.Errorf("Secret %s: %w", ref, err)
	}
	ca := secret.Data[caSecretKey]
	if len(ca) == 0 {
		return false, fmt.Errorf("ExtensionConfig %s: annotation %s: Secret %s has no %q", cfg.Name, InjectCAAnnotation, ref, caSecretKey)
	}
	if bytes.Equal(ca, cfg.Spec.ClientConfig.CABundle) {
		return false, nil
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": runtimev1.GroupVersion.String(), "kind": "ExtensionConfig",
		"metadata": map[string]any{"name": cfg.Name},
		"spec":     map[string]any{"clientConfig": map[string]any{"caBundle": base64.StdEncoding.EncodeToString(ca)}},
	}}
	if _, err := c.Kube.Apply(ctx, obj, CAInjectorFieldManager); err != nil {
		return false, fmt.Errorf("injecting the CA into ExtensionConfig %s: %w", cfg.Name, err)
	}
	cfg.Spec.ClientConfig.CABundle = ca
	return true, nil
}

// postInjected is post, except that when the server's certificate does not verify and the CA is
// injected from a Secret, the CA is injected again (it may have been rotated) and the call retried
// once.
func (c *Client) postInjected(ctx context.Context, cfg *runtimev1.ExtensionConfig, path string, body any, timeout time.Duration, out any) error {
	err := c.post(ctx, cfg, path, body, timeout, out)
	var cve *tls.CertificateVerificationError
	if err == nil || !errors.As(err, &cve) || cfg.Annotations[InjectCAAnnotation] == "" {
		return err
	}
	if changed, ierr := c.injectCA(ctx, cfg); ierr != nil || !changed {
		return err
	}
	return c.post(ctx, cfg, path, body, timeout, out)
}
