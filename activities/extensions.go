package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/topoflow/topoflow/activities/runtimeext"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/patches"
)

// ErrExtensionFailed: a Runtime Extension serving an external patch or variable discovery could
// not be reached or answered Failure. Non-retryable for the activity: the workflow shows the
// error on the Cluster and tries again at its wait resync (or on the next event), as Cluster API
// requeues.
const ErrExtensionFailed = "ExtensionFailed"

func extensionFailed(err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrExtensionFailed, err)
}

// patchExtensions serves a Cluster's external patches with the runtime client, within one
// activity's context.
type patchExtensions struct {
	ctx       context.Context
	rc        *runtimeext.Client
	namespace string
	calls     *[]string
}

var _ patches.Extensions = patchExtensions{}

// patchExtensions serves a Cluster's external patches; calls collects what each answered (for
// the UI). Each pass decides once, so each answer is asked for once per pass, as Cluster API asks
// once per reconcile.
func (a *Activities) patchExtensions(ctx context.Context, namespace string, calls *[]string) patches.Extensions {
	return patchExtensions{ctx: ctx, rc: &runtimeext.Client{Kube: a.Kube}, namespace: namespace, calls: calls}
}

func (p patchExtensions) note(format string, args ...any) {
	if p.calls != nil {
		*p.calls = append(*p.calls, fmt.Sprintf(format, args...))
	}
}

func (p patchExtensions) GeneratePatches(handler string, settings map[string]string, req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
	var resp hooksv1.GeneratePatchesResponse
	if err := p.rc.CallExtension(p.ctx, hooksv1.GeneratePatches, handler, p.namespace, req, settings, &resp); err != nil {
		return nil, classify(err)
	}
	if resp.Status == "" {
		p.note("GeneratePatches %s: no answer (failurePolicy Ignore)", handler)
		return nil, nil // no patches
	}
	p.note("GeneratePatches %s: %d patch(es)", handler, len(resp.Items))
	return &resp, nil
}

func (p patchExtensions) ValidateTopology(handler string, settings map[string]string, req *hooksv1.ValidateTopologyRequest) error {
	var resp hooksv1.ValidateTopologyResponse
	if err := classify(p.rc.CallExtension(p.ctx, hooksv1.ValidateTopology, handler, p.namespace, req, settings, &resp)); err != nil {
		return err
	}
	p.note("ValidateTopology %s: valid", handler)
	return nil
}

// transientError is a failure to read the registry (the API server), not the extension's: the
// activity is retried.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

func classify(err error) error {
	if err == nil || isExtensionError(err) {
		return err
	}
	return &transientError{err: err}
}

// isExtensionError says whether err came from a Runtime Extension (not from reading the API server).
func isExtensionError(err error) bool {
	var ee *runtimeext.ExtensionError
	return errors.As(err, &ee)
}
