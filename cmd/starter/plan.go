package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/plan"
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

func planInputFromCluster(key, kubeconfig string) (*plan.Input, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" {
		return nil, fmt.Errorf("--cluster: want NAMESPACE/NAME, got %q", key)
	}
	cfg, err := kube.RESTConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	kc, err := kube.New(cfg)
	if err != nil {
		return nil, err
	}
	return activities.New(kc, nil).PlanInput(context.Background(), activities.ClusterRef{Namespace: ns, Name: name})
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
		line := fmt.Sprintf("  %-9s %s %s", c.Action, c.Kind, c.Name)
		if c.Replaces != "" {
			line += " (replaces " + c.Replaces + ")"
		}
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		b.WriteString(line + "\n")
	}
	for _, c := range res.Changes {
		if c.Diff != "" {
			b.WriteString("\n" + c.Diff)
		}
	}
	return b.String()
}
