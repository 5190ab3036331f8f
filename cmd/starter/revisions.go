package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/cmd/internal/setup"
)

// newRevisionsCmd is `starter revisions`: ClusterClass revisions, as the operator sees them.
func newRevisionsCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "revisions",
		Short: "ClusterClass revisions: checks around them (kubectl get clusterclassrevisions lists them)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newRevisionsCheckCmd(stdout))
	return cmd
}

// newRevisionsCheckCmd is `starter revisions check`, the hand-back's gate.
func newRevisionsCheckCmd(stdout io.Writer) *cobra.Command {
	var f setup.Flags
	var namespace string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "fail, naming each, while a Cluster of a class with revisions is not on its class's newest revision (read only)",
		Long: "check is the gate of the hand-back to Cluster API (deploy/capi/switch.sh clusterapi): Cluster API knows no\n" +
			"revisions and computes every Cluster from the live ClusterClass, so a Cluster held on an older revision would\n" +
			"change at once. It exits 1 and names each such Cluster: move them first (a Rollout with\n" +
			"change.classRevision: latest).",
		Example: "  starter revisions check\n  starter revisions check --namespace fleet",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			kc, err := planKube(&f)
			if err != nil {
				return err
			}
			refusals, err := activities.New(kc, nil).HandBackRefusals(ctx, namespace)
			if err != nil {
				return err
			}
			for _, r := range refusals {
				fmt.Fprintln(stdout, r)
			}
			if len(refusals) > 0 {
				return fmt.Errorf("%d of the Clusters are not on their class's newest revision: Cluster API would change them at once", len(refusals))
			}
			fmt.Fprintln(stdout, "every Cluster of a class with revisions is on its class's newest revision")
			return nil
		},
	}
	goFlags(cmd, f.Register)
	cmd.Flags().StringVar(&namespace, "namespace", "", "check only this namespace (default: all)")
	return cmd
}
