package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"
)

// RunningWorkflowsInput names the workflows to look for: those of a type whose ID starts with a
// prefix.
type RunningWorkflowsInput struct {
	Type     string `json:"type"`
	IDPrefix string `json:"idPrefix"`
}

// RunningWorkflows lists the IDs of running workflows of a type whose ID starts with a prefix
// (Temporal's visibility store). A Cluster's new workflow uses it to find an upgrade an earlier,
// terminated run left running, and waits for it instead of starting a second one. Without a
// Temporal client (Activities.Temporal unset) it finds nothing.
func (a *Activities) RunningWorkflows(ctx context.Context, in RunningWorkflowsInput) ([]string, error) {
	if a.Temporal == nil {
		return nil, nil
	}
	if strings.ContainsAny(in.IDPrefix+in.Type, `"'\`) {
		return nil, fmt.Errorf("workflow ID prefix %q or type %q has a quote", in.IDPrefix, in.Type)
	}
	query := fmt.Sprintf(`WorkflowType = '%s' AND ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH '%s'`, in.Type, in.IDPrefix)
	var ids []string
	var token []byte
	for {
		resp, err := a.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: query, NextPageToken: token})
		var invalid *serviceerror.InvalidArgument
		if errors.As(err, &invalid) {
			// A visibility store that cannot run the query (no STARTS_WITH) will not learn it by
			// retrying: the workflow goes on as if nothing were found.
			return nil, temporal.NewNonRetryableApplicationError("listing running workflows: "+invalid.Error(), "VisibilityQueryUnsupported", err)
		}
		if err != nil {
			return nil, fmt.Errorf("listing running %s workflows %s*: %w", in.Type, in.IDPrefix, err)
		}
		for _, x := range resp.Executions {
			ids = append(ids, x.Execution.WorkflowId)
		}
		if token = resp.NextPageToken; len(token) == 0 {
			return ids, nil
		}
	}
}
