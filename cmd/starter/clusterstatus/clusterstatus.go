// Package clusterstatus tells where a managed Cluster stands, for `starter status`: the API
// server's view (phase, versions of the control plane and pools, conditions) and the workflows'
// (the Cluster's step, an upgrade's plan and step, what they wait for, the latest hook calls).
// It only reads.
package clusterstatus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/activities/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/workflows"
)

// Print writes the Cluster's story to out as aligned "label  value" lines.
func Print(ctx context.Context, out io.Writer, k *kube.Client, tc client.Client, ns, name string) error {
	cluster := &clusterv1.Cluster{}
	if err := k.GetTyped(ctx, kube.Clusters, ns, name, cluster); err != nil {
		return fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "Cluster\t%s/%s\n", ns, name)
	if t := cluster.Spec.Topology; t != nil {
		fmt.Fprintf(w, "Class\t%s\n", t.Class)
		fmt.Fprintf(w, "Version\t%s\n", t.Version)
	}
	fmt.Fprintf(w, "Phase\t%s\n", cluster.Status.Phase)
	if cp := cluster.Spec.ControlPlaneRef; cp != nil {
		if u, err := k.GetRef(ctx, cp, ns); err == nil {
			if st, err := contract.ReadControlPlane(u); err == nil {
				fmt.Fprintf(w, "Control plane\t%s %s: version %s (desired %s), initialized %t, ready %t\n",
					cp.Kind, cp.Name, orNone(st.Version), st.DesiredVersion, st.Initialized, st.Ready)
			}
		}
	}
	printPools(ctx, w, k, ns, name)
	for _, c := range cluster.Status.Conditions {
		line := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "Condition\t%s\n", line)
		printLines(w, c.Message)
	}

	id := workflows.WorkflowID(ns, name)
	fmt.Fprintf(w, "Workflow\t%s\n", id)
	s, err := queryState(ctx, tc, id)
	switch {
	case err != nil:
		fmt.Fprintf(w, "\t%v\n", err)
	default:
		printState(w, s)
		hooks := s.Hooks
		if s.LastUpgrade != "" {
			fmt.Fprintf(w, "Last upgrade\t%s\n", s.LastUpgrade)
		}
		if s.Upgrade != nil {
			fmt.Fprintf(w, "Upgrade\t%s -> %s\n", s.Upgrade.From, s.Upgrade.To)
			fmt.Fprintf(w, "Upgrade workflow\t%s\n", s.Upgrade.Workflow)
			if us, err := queryState(ctx, tc, s.Upgrade.Workflow); err != nil {
				fmt.Fprintf(w, "\t%v\n", err)
			} else {
				printUpgrade(w, us)
				hooks = append(hooks, us.Hooks...)
			}
		}
		if len(hooks) > 0 {
			fmt.Fprintf(w, "Hook calls\t(oldest first)\n")
			for _, h := range hooks {
				fmt.Fprintf(w, "\t  %s\n", h)
			}
		}
	}
	return w.Flush()
}

// queryState asks a workflow where it stands; a workflow that is not running says so.
func queryState(ctx context.Context, tc client.Client, id string) (*workflows.State, error) {
	v, err := tc.QueryWorkflow(ctx, id, "", workflows.QueryState)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return nil, errors.New("not running")
	case err != nil:
		return nil, fmt.Errorf("state unavailable: %w", err)
	}
	var s workflows.State
	if err := v.Get(&s); err != nil {
		return nil, fmt.Errorf("decoding the state of %s: %w", id, err)
	}
	return &s, nil
}

func printState(w io.Writer, s *workflows.State) {
	fmt.Fprintf(w, "Step\t%s\n", s.Step)
	if s.Waiting != "" {
		fmt.Fprintf(w, "Waiting for\t%s\n", s.Waiting)
	}
	if s.LastError != "" {
		fmt.Fprintf(w, "Last error\t%s\n", s.LastError)
	}
	fmt.Fprintf(w, "Passes\t%d (this run)\n", s.Passes)
}

// printUpgrade shows an upgrade workflow's view: the plan with the control plane's step marked,
// the hook holding the next move, the pools by state, and the upgrade's own step.
func printUpgrade(w io.Writer, s *workflows.State) {
	if u := s.Upgrade; u != nil {
		by := ""
		if u.PlannedBy != "" {
			by = " (from GenerateUpgradePlan " + u.PlannedBy + ")"
		}
		fmt.Fprintf(w, "Upgrade plan\t%s%s\n", u.PlanLine(), by)
		if u.ControlPlaneTarget != "" && u.ControlPlaneTarget != u.ControlPlane {
			fmt.Fprintf(w, "Control plane step\t%s -> %s\n", orNone(u.ControlPlane), u.ControlPlaneTarget)
		}
		if u.HeldBy != "" {
			fmt.Fprintf(w, "Held by hook\t%s\n", u.HeldBy)
		}
		for _, g := range []struct {
			label string
			names []string
		}{{"Pools upgrading", u.Upgrading}, {"Pools pending", u.Pending}, {"Pools deferred", u.Deferred}, {"Pools held", u.Held}} {
			if len(g.names) > 0 {
				fmt.Fprintf(w, "%s\t%s\n", g.label, strings.Join(g.names, ", "))
			}
		}
	}
	fmt.Fprintf(w, "Upgrade step\t%s\n", s.Step)
	if s.Waiting != "" {
		fmt.Fprintf(w, "Upgrade waits for\t%s\n", s.Waiting)
	}
	if s.LastError != "" {
		fmt.Fprintf(w, "Upgrade last error\t%s\n", s.LastError)
	}
}

// printPools lists the Cluster's MachineDeployments and MachinePools with their versions.
func printPools(ctx context.Context, w io.Writer, k *kube.Client, ns, name string) {
	sel := metav1.ListOptions{LabelSelector: labels.ClusterName + "=" + name}
	if mds, err := k.Dynamic.Resource(kube.MachineDeployments).Namespace(ns).List(ctx, sel); err == nil {
		for i := range mds.Items {
			md := &clusterv1.MachineDeployment{}
			if decode.FromUnstructured(&mds.Items[i], md) != nil {
				continue
			}
			fmt.Fprintf(w, "Pool %s\tMachineDeployment %s: version %s, replicas %d, updated %d, ready %d\n",
				md.Labels[labels.MachineDeploymentName], md.Name, orNone(deref(md.Spec.Template.Spec.Version)),
				md.Status.Replicas, md.Status.UpdatedReplicas, md.Status.ReadyReplicas)
		}
	}
	if mps, err := k.Dynamic.Resource(kube.MachinePools).Namespace(ns).List(ctx, sel); err == nil {
		for i := range mps.Items {
			mp := &clusterv1.MachinePool{}
			if decode.FromUnstructured(&mps.Items[i], mp) != nil {
				continue
			}
			fmt.Fprintf(w, "Pool %s\tMachinePool %s: version %s, replicas %d, ready %d\n",
				mp.Labels[labels.MachinePoolName], mp.Name, orNone(deref(mp.Spec.Template.Spec.Version)),
				mp.Status.Replicas, mp.Status.ReadyReplicas)
		}
	}
}

func printLines(w io.Writer, msg string) {
	for _, m := range strings.Split(msg, "\n") {
		if m != "" {
			fmt.Fprintf(w, "\t  %s\n", m)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
