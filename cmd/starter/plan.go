package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/desired"
	"github.com/topoflow/topoflow/model/names"
	"github.com/topoflow/topoflow/model/plan"
)

// runPlan prints the objects topoflow would apply for one Cluster, and with current objects
// what would change. It never writes to the API server.
func runPlan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		file       = fs.String("f", "", "multi-document YAML with one ClusterClass, its templates, one Cluster and optionally the Cluster's current objects ('-' for stdin)")
		output     = fs.String("o", "yaml", "output format: yaml or json")
		seed       = fs.Uint64("seed", 0, "seed for the random part of new object names (reproducible plans); default: derived from the Cluster")
		cluster    = fs.String("cluster", "", "plan an existing Cluster NAMESPACE/NAME on the API server instead of a file (read only)")
		kubeconfig = fs.String("kubeconfig", "", "kubeconfig for --cluster (default: $KUBECONFIG)")
	)
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: starter plan -f FILE [-o yaml|json] [--seed N]\n       starter plan --cluster NAMESPACE/NAME [--kubeconfig FILE] [-o yaml|json]\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *output != "yaml" && *output != "json" {
		return fmt.Errorf("-o: unknown output format %q (yaml or json)", *output)
	}
	if (*file == "") == (*cluster == "") {
		fs.Usage()
		return errors.New("give exactly one of -f or --cluster")
	}

	var in *plan.Input
	var err error
	if *file != "" {
		in, err = planInputFromFile(*file, *seed)
	} else {
		in, err = planInputFromCluster(*cluster, *kubeconfig)
		if err == nil && isFlagSet(fs, "seed") {
			in.Desired.Names = names.Source{Seed: *seed}
		}
	}
	if err != nil {
		return err
	}
	res, err := plan.Compute(in)
	if err != nil {
		return explain(err)
	}
	return printPlan(res, *output, stdout, stderr)
}

func isFlagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
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
