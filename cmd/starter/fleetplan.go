package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/upgrade"
)

// Fleet plans: what one change would do to many Clusters, before anything is written.
// `starter rollout plan NS/NAME` plans a Rollout's change for every Cluster it selects, in stage
// order; `starter plan --class FILE` plans an edited ClusterClass for every Cluster that uses it.
// The reads are activities' (ReadRolloutPlan, ReadClassPlan), each Cluster's plan is
// plan.Categorize's: the apply's own decision, over the whole change (plan.Through).

// RolloutPlan is `starter rollout plan -o json`.
type RolloutPlan struct {
	Rollout    string           `json:"rollout"`
	Generation int64            `json:"generation"`
	Change     rolloutv1.Change `json:"change"`
	// Invalid says why the rollout would not start (then no Cluster is planned).
	Invalid   string             `json:"invalid,omitempty"`
	BlockedBy string             `json:"blockedBy,omitempty"`
	Clusters  []plan.ClusterPlan `json:"clusters"`
	Skipped   []string           `json:"skipped,omitempty"`
	Summary   plan.Summary       `json:"summary"`
	// Ledgers says where the upgrade hooks' ledgers came from (the Clusters' workflows, or none).
	Ledgers string `json:"ledgers"`
}

// ClassPlan is `starter plan --class FILE -o json`.
type ClassPlan struct {
	Class   string `json:"class"`
	Exists  bool   `json:"exists"`
	Refused string `json:"refused,omitempty"`
	// Revisions: the class has revisions; the plan is what moving each Cluster to the edit does.
	Revisions bool               `json:"revisions,omitempty"`
	Clusters  []plan.ClusterPlan `json:"clusters"`
	Summary   plan.Summary       `json:"summary"`
	Ledgers   string             `json:"ledgers"`
}

func newRolloutPlanCmd(stdout io.Writer) *cobra.Command {
	var f setup.Flags
	var output string
	cmd := &cobra.Command{
		Use:   "plan NAMESPACE/NAME",
		Short: "show what a Rollout's change would do to each Cluster it selects, in stage order, before anything is written (read only)",
		Long: "plan reads the Rollout and every Cluster it selects now, asks admission about each Cluster's change with a\n" +
			"server-side dry run (nothing is stored), and plans the whole change with the apply's own decision: objects\n" +
			"created, updated, rotated and deleted, which machines roll, the lifecycle hooks on the way, or the refusal.",
		Example: "  starter rollout plan fleet/edge-1-32\n  starter rollout plan fleet/edge-1-32 -o json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns, name, err := rolloutArg(args[0])
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("-o: unknown output format %q (text or json)", output)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			kc, err := planKube(&f)
			if err != nil {
				return err
			}
			read, err := activities.New(kc, nil).ReadRolloutPlan(ctx, activities.RolloutRef{Namespace: ns, Name: name})
			if err != nil {
				return err
			}
			out := RolloutPlan{Rollout: read.Rollout.String(), Generation: read.Generation, Change: read.Spec.Change,
				Invalid: read.Invalid, BlockedBy: read.BlockedBy, Skipped: read.Skipped}
			out.Ledgers = addLedgers(ctx, &f, read.Clusters)
			out.Clusters = plan.CategorizeAll(read.Clusters)
			out.Summary = plan.Summarize(out.Clusters)
			if output == "json" {
				return writeJSON(stdout, out)
			}
			return writeRolloutPlan(stdout, out)
		},
	}
	goFlags(cmd, f.Register)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// runClassPlan is `starter plan --class FILE`.
func runClassPlan(path, output string, f *setup.Flags, stdout io.Writer) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("-o: with --class, want text or json, got %q", output)
	}
	class, templates, err := classFile(path)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kc, err := planKube(f)
	if err != nil {
		return err
	}
	read, err := activities.New(kc, nil).ReadClassPlan(ctx, class, templates)
	if err != nil {
		return err
	}
	out := ClassPlan{Class: read.Class, Exists: read.Exists, Refused: read.Refused, Revisions: read.Revisions}
	out.Ledgers = addLedgers(ctx, f, read.Clusters)
	out.Clusters = plan.CategorizeAll(read.Clusters)
	out.Summary = plan.Summarize(out.Clusters)
	if output == "json" {
		return writeJSON(stdout, out)
	}
	return writeClassPlan(stdout, out)
}

// classFile reads a file with one ClusterClass (cluster.x-k8s.io v1beta1 or v1beta2) and,
// optionally, templates it references, keyed as the computation keys them (desired.RefKey; no
// namespace: the class's).
func classFile(path string) (*unstructured.Unstructured, map[string]*unstructured.Unstructured, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		defer fh.Close()
		r = fh
	}
	docs, err := decode.Documents(r)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	var class *unstructured.Unstructured
	var rest []*unstructured.Unstructured
	for _, d := range docs {
		switch {
		case d.GroupVersionKind().Group == clusterv1.GroupVersion.Group && d.GetKind() == "ClusterClass":
			if class != nil {
				return nil, nil, fmt.Errorf("%s: want exactly one ClusterClass, found more", path)
			}
			class = d
		case d.GetKind() != "":
			rest = append(rest, d)
		}
	}
	if class == nil {
		return nil, nil, fmt.Errorf("%s: want exactly one ClusterClass, found none", path)
	}
	if class.GetNamespace() == "" {
		class.SetNamespace("default")
	}
	templates := map[string]*unstructured.Unstructured{}
	for _, t := range rest {
		if t.GetNamespace() == "" {
			t.SetNamespace(class.GetNamespace())
		}
		templates[desired.RefKey(&corev1.ObjectReference{Kind: t.GetKind(), Namespace: t.GetNamespace(), Name: t.GetName()})] = t
	}
	return class, templates, nil
}

// planKube is the API server client of a plan (read only).
func planKube(f *setup.Flags) (*kube.Client, error) {
	cfg, err := kube.RESTConfig(f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kube.New(cfg)
}

// addLedgers gives each Cluster the hook ledger of its workflow (the upgrade's, while one runs), so
// a hook that has passed already for the same upgrade is not planned again; without Temporal, or
// for a Cluster without a workflow, the plan starts from no answers (every upgrade hook owed). It
// says which.
func addLedgers(ctx context.Context, f *setup.Flags, cs []plan.ClusterInput) string {
	if len(cs) == 0 {
		return "none needed"
	}
	tc, err := dialTemporal(ctx, f)
	if err != nil {
		return "none (every upgrade hook planned as owed): " + err.Error()
	}
	defer tc.Close()
	found, missing := 0, []string{}
	for i := range cs {
		if cs[i].Plan == nil {
			continue
		}
		ns, name, _ := strings.Cut(cs[i].Cluster, "/")
		l, err := queryLedger(ctx, tc, ns, name)
		if err != nil {
			missing = append(missing, cs[i].Cluster)
			continue
		}
		cs[i].Plan.Ledger = l
		found++
	}
	s := fmt.Sprintf("from the workflows of %d Clusters", found)
	if len(missing) > 0 {
		s += fmt.Sprintf("; none for %s (every upgrade hook planned as owed)", strings.Join(missing, ", "))
	}
	return s
}

func queryLedger(ctx context.Context, tc client.Client, ns, name string) (*upgrade.Ledger, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return ledgerOf(ctx, tc, ns, name)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeRolloutPlan(w io.Writer, p RolloutPlan) error {
	change, _ := json.Marshal(p.Change)
	fmt.Fprintf(w, "Rollout %s (generation %d), change %s\n", p.Rollout, p.Generation, change)
	if p.Invalid != "" {
		fmt.Fprintf(w, "The rollout would not start: %s\n", p.Invalid)
		return nil
	}
	if p.BlockedBy != "" {
		fmt.Fprintf(w, "It would wait for %s.\n", p.BlockedBy)
	}
	fmt.Fprintf(w, "Hook ledgers: %s\n\n", p.Ledgers)
	if err := writeFleet(w, p.Clusters, true); err != nil {
		return err
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(w, "\nSelected, but no stage takes them: %s\n", strings.Join(p.Skipped, ", "))
	}
	fmt.Fprintf(w, "\n%s\n", p.Summary)
	return nil
}

func writeClassPlan(w io.Writer, p ClassPlan) error {
	if !p.Exists {
		fmt.Fprintf(w, "ClusterClass %s does not exist: no Cluster uses it.\n\n%s\n", p.Class, p.Summary)
		return nil
	}
	fmt.Fprintf(w, "ClusterClass %s, as edited\n", p.Class)
	if p.Revisions {
		fmt.Fprintln(w, "The class has revisions: the edit is recorded as a new one and changes no Cluster until a Rollout\n"+
			"(change.classRevision) moves it. Planned: what that move does to each Cluster.")
	}
	if p.Refused != "" {
		fmt.Fprintf(w, "Admission refuses the edit: %s\n", p.Refused)
	}
	fmt.Fprintf(w, "Hook ledgers: %s\n\n", p.Ledgers)
	if err := writeFleet(w, p.Clusters, false); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", p.Summary)
	return nil
}

// writeFleet prints the plans as a table, then what each Cluster that changes, is refused or
// failed to plan is told.
func writeFleet(w io.Writer, plans []plan.ClusterPlan, stages bool) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	if stages {
		fmt.Fprint(tw, "STAGE\t")
	}
	fmt.Fprintln(tw, "CLUSTER\tPLAN\tOBJECTS\tHOOKS")
	for _, p := range plans {
		if stages {
			fmt.Fprintf(tw, "%s\t", orDash(p.Stage))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Cluster, planWord(p), objectCounts(p), hookCount(p))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range plans {
		if p.Outcome == plan.OutcomeUnchanged {
			continue
		}
		fmt.Fprintln(w)
		head := p.Cluster
		if p.Stage != "" {
			head += " (stage " + p.Stage + ")"
		}
		switch p.Outcome {
		case plan.OutcomeRefused:
			fmt.Fprintf(w, "%s: refused: %s\n", head, p.Reason)
			continue
		case plan.OutcomeFailed:
			fmt.Fprintf(w, "%s: not planned: %s\n", head, p.Reason)
			continue
		}
		fmt.Fprintf(w, "%s:\n", head)
		if p.WritesCluster {
			fmt.Fprintln(w, "  the change is written to the Cluster's spec.topology")
		}
		if p.RollsControlPlane {
			fmt.Fprintf(w, "  control plane rolls: %s\n", p.ControlPlane)
		}
		for _, r := range p.RollsWorkers {
			fmt.Fprintf(w, "  workers roll: %s %s (%s %s): %s\n", kindWord(r.Kind), r.Pool, r.Kind, r.Name, r.Why)
		}
		for _, c := range p.Changes {
			fmt.Fprintln(w, changeLine(c))
		}
		if len(p.Stays) > 0 {
			fmt.Fprintf(w, "  stays at its version: %s (the upgrade does not complete)\n", strings.Join(p.Stays, ", "))
		}
		if len(p.Hooks) > 0 {
			fmt.Fprintln(w, "  hooks, in order:")
			for _, h := range p.Hooks {
				how := "called"
				if !h.Called {
					how = "no handler: passes without a call"
				}
				fmt.Fprintf(w, "    %s (%s)\n", h, how)
			}
		}
	}
	return nil
}

func kindWord(kind string) string {
	if kind == "MachinePool" {
		return "pool"
	}
	return "deployment"
}

// planWord is a Cluster's plan in a few words.
func planWord(p plan.ClusterPlan) string {
	switch p.Outcome {
	case plan.OutcomeChanged:
		var rolls []string
		if p.RollsControlPlane {
			rolls = append(rolls, "control plane")
		}
		if len(p.RollsWorkers) > 0 {
			rolls = append(rolls, "workers")
		}
		if len(rolls) == 0 {
			return "changes in place"
		}
		return "rolls " + strings.Join(rolls, " and ")
	case plan.OutcomeFailed:
		return "not planned"
	}
	return string(p.Outcome)
}

func objectCounts(p plan.ClusterPlan) string {
	counts := map[plan.Action]int{}
	for _, c := range p.Changes {
		counts[c.Action]++
	}
	var parts []string
	for _, a := range []plan.Action{plan.Create, plan.Update, plan.Rotate, plan.Delete, plan.Pending} {
		if counts[a] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[a], a))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func hookCount(p plan.ClusterPlan) string {
	if len(p.Hooks) == 0 {
		return "-"
	}
	called := 0
	for _, h := range p.Hooks {
		if h.Called {
			called++
		}
	}
	return fmt.Sprintf("%d (%d called)", len(p.Hooks), called)
}

var errClassFlags = errors.New("--class plans every Cluster of the class from the API server: give it alone (not with -f or --cluster)")
