package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/temporalx"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/plan"
	"github.com/topoflow/topoflow/model/upgrade"
	"github.com/topoflow/topoflow/workflows"
)

// runPlan runs `starter plan` with args (the tests' entry point).
func runPlan(args []string, stdout, stderr io.Writer) error {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(append([]string{"plan"}, args...))
	return root.Execute()
}

func planInputFromFile(path string, seed uint64) (*plan.Input, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	objs, err := decode.Documents(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if seed == 0 {
		seed = 1
	}
	return plan.FromObjects(objs, seed)
}

// planInputFromCluster reads an existing Cluster and what it runs from the API server, and the
// hook ledger from its workflow (the upgrade's, while one runs), so a move a hook holds is shown as
// held. Without a workflow (or Temporal) it plans from the Cluster alone, and says so.
func planInputFromCluster(key string, f *setup.Flags, stderr io.Writer) (*plan.Input, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("--cluster: want NAMESPACE/NAME, got %q", key)
	}
	cfg, err := kube.RESTConfig(f.Kubeconfig)
	if err != nil {
		return nil, err
	}
	kc, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	in, err := activities.New(kc, nil).PlanInput(ctx, activities.ClusterRef{Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	ledger, err := workflowLedger(ctx, f, ns, name)
	if err != nil {
		fmt.Fprintf(stderr, "# planned from the Cluster alone, as if every lifecycle hook let every move through: %v\n", err)
		return in, nil
	}
	in.Ledger = ledger
	return in, nil
}

// workflowLedger is the hook ledger of a Cluster's workflow, or of the upgrade it waits for.
func workflowLedger(ctx context.Context, f *setup.Flags, ns, name string) (*upgrade.Ledger, error) {
	tc, err := dialTemporal(ctx, f)
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	return ledgerOf(ctx, tc, ns, name)
}

// dialTemporal connects to Temporal for queries, giving up after 10 seconds.
func dialTemporal(ctx context.Context, f *setup.Flags) (client.Client, error) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	co, err := temporalx.Options{Address: f.TemporalAddress, Namespace: f.TemporalNamespace}.ClientOptions(log)
	if err != nil {
		return nil, err
	}
	dialCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tc, err := temporalx.DialOptions(dialCtx, co, log)
	if err != nil {
		return nil, fmt.Errorf("Temporal at %s: %w", co.HostPort, err)
	}
	return tc, nil
}

// ledgerOf is the hook ledger of a Cluster's workflow, or of the upgrade it waits for.
func ledgerOf(ctx context.Context, tc client.Client, ns, name string) (*upgrade.Ledger, error) {
	st, err := clusterstatus.QueryState(ctx, tc, workflows.WorkflowID(ns, name))
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", workflows.WorkflowID(ns, name), err)
	}
	if st.Upgrade != nil {
		if up, err := clusterstatus.QueryState(ctx, tc, st.Upgrade.Workflow); err == nil && up.Ledger != nil {
			return up.Ledger, nil
		}
	}
	if st.Ledger == nil {
		return nil, fmt.Errorf("workflow %s: no hook ledger in its state", workflows.WorkflowID(ns, name))
	}
	return st.Ledger, nil
}

// explain lists every field error of an invalid input on its own line.
func explain(err error) error {
	var ie *desired.InvalidError
	if errors.As(err, &ie) {
		lines := []string{ie.Object + " is invalid:"}
		for _, fe := range ie.Errs {
			lines = append(lines, "  "+fe.Error())
		}
		return errors.New(strings.Join(lines, "\n"))
	}
	return err
}

func printPlan(res *plan.Result, output string, stdout, stderr io.Writer) error {
	js, err := res.List().MarshalJSON()
	if err != nil {
		return err
	}
	summary := summarize(res)
	if output == "json" {
		var pretty any
		if err := json.Unmarshal(js, &pretty); err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(pretty); err != nil {
			return err
		}
		if summary != "" {
			fmt.Fprint(stderr, summary)
		}
		return nil
	}
	y, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(y); err != nil {
		return err
	}
	if summary != "" {
		for _, line := range strings.Split(strings.TrimRight(summary, "\n"), "\n") {
			fmt.Fprintln(stdout, "# "+line)
		}
	}
	return nil
}

// summarize lists the changes and their diffs (empty without current objects).
func summarize(res *plan.Result) string {
	if len(res.Changes) == 0 {
		return ""
	}
	counts := map[plan.Action]int{}
	var b strings.Builder
	for _, c := range res.Changes {
		counts[c.Action]++
	}
	fmt.Fprintf(&b, "Plan: %d to create, %d to update, %d to rotate, %d to delete, %d unchanged, %d pending\n",
		counts[plan.Create], counts[plan.Update], counts[plan.Rotate], counts[plan.Delete], counts[plan.Unchanged], counts[plan.Pending])
	for _, c := range res.Changes {
		b.WriteString(changeLine(c) + "\n")
	}
	for _, c := range res.Changes {
		if c.Diff != "" {
			b.WriteString("\n" + c.Diff)
		}
	}
	return b.String()
}

// changeLine is one object's action in a plan, as both plan commands print it.
func changeLine(c plan.Change) string {
	line := fmt.Sprintf("  %-9s %s %s", c.Action, c.Kind, c.Name)
	if c.Replaces != "" {
		line += " (replaces " + c.Replaces + ")"
	}
	if c.Reason != "" {
		line += " (" + c.Reason + ")"
	}
	return line
}
