package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"go.temporal.io/api/serviceerror"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/activities/kube"
	"github.com/topoflow/topoflow/cmd/internal/setup"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/workflows"
)

// runStatus prints where a managed Cluster stands: the API server's view (phase, conditions,
// versions of the control plane and pools) and the workflow's (step, what it waits for).
func runStatus(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var f setup.Flags
	f.Register(fs)
	// Accept the Cluster before or after the flags.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0])
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: starter status NAMESPACE/NAME")
	}
	ns, name, ok := strings.Cut(fs.Arg(0), "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("want NAMESPACE/NAME, got %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.TemporalAddress = firstNonEmpty(f.TemporalAddress, os.Getenv("TEMPORAL_ADDRESS"))
	conn, err := f.Connect(ctx, f.Logger())
	if err != nil {
		return err
	}
	defer conn.Temporal.Close()

	cluster := &clusterv1.Cluster{}
	if err := conn.Kube.GetTyped(ctx, kube.Clusters, ns, name, cluster); err != nil {
		return fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "Cluster\t%s/%s\n", ns, name)
	if t := cluster.Spec.Topology; t != nil {
		fmt.Fprintf(w, "Class\t%s\n", t.Class)
		fmt.Fprintf(w, "Version\t%s\n", t.Version)
	}
	fmt.Fprintf(w, "Phase\t%s\n", cluster.Status.Phase)
	if cp := cluster.Spec.ControlPlaneRef; cp != nil {
		if u, err := conn.Kube.GetRef(ctx, cp, ns); err == nil {
			if st, err := contract.ReadControlPlane(u); err == nil {
				fmt.Fprintf(w, "Control plane\t%s %s: version %s (desired %s), initialized %t, ready %t\n", cp.Kind, cp.Name, orNone(st.Version), st.DesiredVersion, st.Initialized, st.Ready)
			}
		}
	}
	mds, _ := conn.Kube.Dynamic.Resource(kube.MachineDeployments).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.ClusterName + "=" + name})
	if mds != nil {
		for i := range mds.Items {
			md := &clusterv1.MachineDeployment{}
			if decode.FromUnstructured(&mds.Items[i], md) != nil {
				continue
			}
			v := ""
			if md.Spec.Template.Spec.Version != nil {
				v = *md.Spec.Template.Spec.Version
			}
			fmt.Fprintf(w, "Pool %s\tMachineDeployment %s: version %s, replicas %d, updated %d, ready %d\n",
				md.Labels[labels.MachineDeploymentName], md.Name, v, md.Status.Replicas, md.Status.UpdatedReplicas, md.Status.ReadyReplicas)
		}
	}
	for _, c := range cluster.Status.Conditions {
		line := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "Condition\t%s\n", line)
		for _, m := range strings.Split(c.Message, "\n") {
			if m != "" {
				fmt.Fprintf(w, "\t  %s\n", m)
			}
		}
	}

	id := workflows.WorkflowID(ns, name)
	fmt.Fprintf(w, "Workflow\t%s\n", id)
	v, err := conn.Temporal.QueryWorkflow(ctx, id, "", workflows.QueryState)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		fmt.Fprintf(w, "\tnot running\n")
	case err != nil:
		fmt.Fprintf(w, "\tstate unavailable: %v\n", err)
	default:
		var s workflows.State
		if err := v.Get(&s); err != nil {
			return err
		}
		fmt.Fprintf(w, "Step\t%s\n", s.Step)
		if s.Waiting != "" {
			fmt.Fprintf(w, "Waiting for\t%s\n", s.Waiting)
		}
		if s.LastError != "" {
			fmt.Fprintf(w, "Last error\t%s\n", s.LastError)
		}
		fmt.Fprintf(w, "Passes\t%d (this run)\n", s.Passes)
	}
	return w.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
