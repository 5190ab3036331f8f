package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/mocks"
	"go.temporal.io/sdk/temporal"
)

func executions(ids ...string) []*workflowpb.WorkflowExecutionInfo {
	var out []*workflowpb.WorkflowExecutionInfo
	for _, id := range ids {
		out = append(out, &workflowpb.WorkflowExecutionInfo{Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	}
	return out
}

// TestRunningWorkflows: the query names the type, running status and ID prefix; pages are
// followed; a query the visibility store rejects is not retried.
func TestRunningWorkflows(t *testing.T) {
	tc := &mocks.Client{}
	a := &Activities{Temporal: tc}
	in := RunningWorkflowsInput{Type: "ClusterUpgrade", IDPrefix: "topology/ns/c1/upgrade/"}
	want := `WorkflowType = 'ClusterUpgrade' AND ExecutionStatus = 'Running' AND WorkflowId STARTS_WITH 'topology/ns/c1/upgrade/'`
	tc.On("ListWorkflow", mock.Anything, mock.MatchedBy(func(r *workflowservice.ListWorkflowExecutionsRequest) bool {
		return r.Query == want && len(r.NextPageToken) == 0
	})).Return(&workflowservice.ListWorkflowExecutionsResponse{Executions: executions("a"), NextPageToken: []byte("p2")}, nil).Once()
	tc.On("ListWorkflow", mock.Anything, mock.MatchedBy(func(r *workflowservice.ListWorkflowExecutionsRequest) bool {
		return string(r.NextPageToken) == "p2"
	})).Return(&workflowservice.ListWorkflowExecutionsResponse{Executions: executions("b")}, nil).Once()
	ids, err := a.RunningWorkflows(context.Background(), in)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, ids)

	tc.On("ListWorkflow", mock.Anything, mock.Anything).Return(nil, serviceerror.NewInvalidArgument("STARTS_WITH is not supported")).Once()
	_, err = a.RunningWorkflows(context.Background(), in)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.True(t, appErr.NonRetryable())

	_, err = a.RunningWorkflows(context.Background(), RunningWorkflowsInput{Type: "T", IDPrefix: "x' OR 'a'='a"})
	assert.ErrorContains(t, err, "has a quote")

	ids, err = (&Activities{}).RunningWorkflows(context.Background(), in)
	require.NoError(t, err)
	assert.Empty(t, ids, "without a Temporal client nothing is found")
	tc.AssertExpectations(t)
}
