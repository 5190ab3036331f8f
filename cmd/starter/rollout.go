package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/workflows"
)

// newRolloutCmd is the operator's view of and hand on fleet rollouts: status from the Rollout
// object, controls as Updates of its workflow (validated there: a refused one says why).
func newRolloutCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "inspect and operate fleet rollouts (Rollout objects of topoflow.dev)",
		Example: "  starter rollout plan fleet/upgrade-135\n" +
			"  starter rollout status fleet/upgrade-135 --watch\n" +
			"  starter rollout approve fleet/upgrade-135\n" +
			"  starter rollout pause fleet/upgrade-135\n" +
			"  starter rollout skip fleet/upgrade-135 team-a/cluster-7",
	}
	cmd.AddCommand(newRolloutStatusCmd(stdout), newRolloutPlanCmd(stdout))
	for _, c := range []struct{ action, short string }{
		{"approve", "open the approval gate the rollout waits at (--token names it, to be sure)"},
		{"pause", "start no new Cluster changes (those running finish)"},
		{"resume", "resume a paused rollout, or a halted one (its failures so far are forgiven)"},
		{"abort", "end the rollout; Clusters already changed stay as they are"},
		{"skip", "leave one Cluster (NAMESPACE/NAME) out of the rollout"},
	} {
		cmd.AddCommand(newRolloutControlCmd(stdout, c.action, c.short))
	}
	return cmd
}

func rolloutArg(arg string) (string, string, error) {
	ns, name, ok := strings.Cut(arg, "/")
	if !ok || ns == "" || name == "" {
		return "", "", fmt.Errorf("want NAMESPACE/NAME of a Rollout, got %q", arg)
	}
	return ns, name, nil
}

func newRolloutControlCmd(stdout io.Writer, action, short string) *cobra.Command {
	var f setup.Flags
	var token string
	use, args := action+" NAMESPACE/NAME", cobra.ExactArgs(1)
	if action == "skip" {
		use, args = action+" NAMESPACE/NAME CLUSTER_NAMESPACE/CLUSTER_NAME", cobra.ExactArgs(2)
	}
	cmd := &cobra.Command{
		Use: use, Short: short, Args: args,
		RunE: func(_ *cobra.Command, args []string) error {
			ns, name, err := rolloutArg(args[0])
			if err != nil {
				return err
			}
			c := rollout.Control{Action: action, Token: token, By: "cli:" + os.Getenv("USER")}
			if action == "skip" {
				c.Cluster = args[1]
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := f.Connect(ctx, f.Logger())
			if err != nil {
				return err
			}
			defer conn.Temporal.Close()
			h, err := conn.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
				WorkflowID: workflows.RolloutWorkflowID(ns, name), UpdateName: workflows.UpdateRolloutControl,
				Args: []any{c}, WaitForStage: client.WorkflowUpdateStageCompleted,
			})
			if err != nil {
				return fmt.Errorf("%s %s/%s: %w", action, ns, name, err)
			}
			var phase string
			if err := h.Get(ctx, &phase); err != nil {
				return fmt.Errorf("%s %s/%s: %w", action, ns, name, err)
			}
			fmt.Fprintf(stdout, "%s/%s: %s accepted; the rollout is %s\n", ns, name, action, phase)
			return nil
		},
	}
	goFlags(cmd, f.Register)
	if action == "approve" {
		cmd.Flags().StringVar(&token, "token", "", "the approval to give, as status.pendingApproval shows it (default: the one the rollout waits at)")
	}
	return cmd
}

func newRolloutStatusCmd(stdout io.Writer) *cobra.Command {
	var f setup.Flags
	var output string
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status NAMESPACE/NAME",
		Short: "print a Rollout's phase, stage, pending approval, counts, conditions and Clusters",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			ns, name, err := rolloutArg(args[0])
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("-o: unknown output format %q (text or json)", output)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			conn, err := f.Connect(connectCtx, f.Logger())
			if err != nil {
				return err
			}
			defer conn.Temporal.Close()
			show := func() error {
				r := &rolloutv1.Rollout{}
				if err := conn.Kube.GetTyped(ctx, kube.Rollouts, ns, name, r); err != nil {
					return fmt.Errorf("reading Rollout %s/%s: %w", ns, name, err)
				}
				if output == "json" {
					enc := json.NewEncoder(stdout)
					enc.SetIndent("", "  ")
					return enc.Encode(r.Status)
				}
				return writeRollout(stdout, r)
			}
			if !watch {
				return show()
			}
			return watchStatus(ctx, stdout, interval, output == "text", show)
		},
	}
	goFlags(cmd, f.Register)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json (the status)")
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "redraw as the rollout moves (until interrupted)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --watch redraws")
	return cmd
}

// writeRollout prints a Rollout's status for people: the summary, the conditions that hold, and
// every Cluster that has started (the pending ones counted).
func writeRollout(out io.Writer, r *rolloutv1.Rollout) error {
	st := r.Status
	fmt.Fprintf(out, "Rollout %s/%s (generation %d, following %d)\n", r.Namespace, r.Name, r.Generation, st.ObservedGeneration)
	fmt.Fprintf(out, "  phase:    %s\n", orDash(st.Phase))
	fmt.Fprintf(out, "  stage:    %s\n", orDash(st.Stage))
	if st.PendingApproval != "" {
		fmt.Fprintf(out, "  approval: %s (starter rollout approve %s/%s)\n", st.PendingApproval, r.Namespace, r.Name)
	}
	c := st.Counts
	fmt.Fprintf(out, "  clusters: %d total, %d done, %d changing, %d waiting for a window, %d pending, %d failed, %d skipped\n",
		c.Total, c.Done, c.Changing, c.Waiting, c.Pending, c.Failed, c.Skipped)
	if stages := stageTimes(st.Stages); stages != "" {
		fmt.Fprintf(out, "  stages:   %s\n", stages)
	}
	for _, cond := range st.Conditions {
		if cond.Status == metav1.ConditionTrue || (cond.Type == "Progressing" && cond.Reason == "NotStarted") {
			fmt.Fprintf(out, "  %s: %s\n", cond.Type, orDash(cond.Message))
		}
	}
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nCLUSTER\tSTAGE\tSTATE\tSINCE\tMESSAGE")
	for _, cl := range st.Clusters {
		if cl.State == string(rollout.Pending) {
			continue
		}
		since := "-"
		if cl.StartedAt != nil {
			since = cl.StartedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s/%s\t%s\t%s\t%s\t%s\n", cl.Namespace, cl.Name, orDash(cl.Stage), cl.State, since, cl.Message)
	}
	return tw.Flush()
}

// stageTimes says how long each stage ran, or since when it runs.
func stageTimes(stages []rolloutv1.StageStatus) string {
	var parts []string
	for _, s := range stages {
		switch {
		case s.StartedAt != nil && s.FinishedAt != nil:
			parts = append(parts, fmt.Sprintf("%s %s", s.Name, s.FinishedAt.Sub(s.StartedAt.Time)))
		case s.StartedAt != nil:
			parts = append(parts, fmt.Sprintf("%s running since %s", s.Name, s.StartedAt.UTC().Format(time.RFC3339)))
		}
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
