// Package clusterstatus tells where a managed Cluster stands, for `starter status`: the API
// server's view (phase, versions of the control plane and pools, conditions) and the workflows'
// (the Cluster's step, an upgrade's plan and step, what they wait for, the latest hook calls).
// It only reads, and reads cluster.x-k8s.io objects as v1beta2 (the hub); what it shows is what
// it showed when it read them as v1beta1 (see conditions and the pools' counters).
package clusterstatus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/labels"
	"github.com/topoflow/topoflow/workflows"
)

// Report is everything `starter status` shows (also its -o json output).
type Report struct {
	Cluster      string      `json:"cluster"`
	Class        string      `json:"class,omitempty"`
	Version      string      `json:"version,omitempty"`
	Phase        string      `json:"phase,omitempty"`
	ControlPlane *Part       `json:"controlPlane,omitempty"`
	Pools        []Part      `json:"pools,omitempty"`
	Conditions   []Condition `json:"conditions,omitempty"`
	Workflow     string      `json:"workflow"`
	// State is the Cluster workflow's answer to the state query (StateError when none).
	State      *workflows.State `json:"state,omitempty"`
	StateError string           `json:"stateError,omitempty"`
	// Upgrade is the running upgrade workflow's state, if any (UpgradeError when unavailable).
	Upgrade      *workflows.State `json:"upgrade,omitempty"`
	UpgradeError string           `json:"upgradeError,omitempty"`
}

// Part is the control plane or a pool.
type Part struct {
	Pool           string `json:"pool,omitempty"`
	Kind           string `json:"kind"`
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	DesiredVersion string `json:"desiredVersion,omitempty"`
	Initialized    bool   `json:"initialized,omitempty"`
	Ready          bool   `json:"ready,omitempty"`
	Replicas       int32  `json:"replicas"`
	Updated        int32  `json:"updatedReplicas"`
	ReadyReplicas  int32  `json:"readyReplicas"`
}

// Condition is one of the Cluster's conditions (see conditions for which).
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Collect reads the Cluster, its control plane and pools, and asks its workflows where they stand.
func Collect(ctx context.Context, k *kube.Client, tc client.Client, ns, name string) (*Report, error) {
	cluster := &clusterv1.Cluster{}
	if err := k.GetTyped(ctx, kube.Clusters, ns, name, cluster); err != nil {
		return nil, fmt.Errorf("reading Cluster %s/%s: %w", ns, name, err)
	}
	r := &Report{Cluster: ns + "/" + name, Phase: cluster.Status.Phase, Workflow: workflows.WorkflowID(ns, name)}
	if t := cluster.Spec.Topology; t.IsDefined() {
		r.Class, r.Version = t.ClassRef.Name, t.Version
	}
	if cp := cluster.Spec.ControlPlaneRef; cp.IsDefined() {
		if u, err := getContractRef(ctx, k, cp, ns); err == nil {
			if st, err := contract.ReadControlPlane(u); err == nil {
				r.ControlPlane = &Part{Kind: cp.Kind, Name: cp.Name, Version: st.Version, DesiredVersion: st.DesiredVersion, Initialized: st.Initialized, Ready: st.Ready}
			}
		}
	}
	r.Pools = pools(ctx, k, ns, name)
	r.Conditions = conditions(cluster)
	s, err := QueryState(ctx, tc, r.Workflow)
	if err != nil {
		r.StateError = err.Error()
		return r, nil
	}
	r.State = s
	if s.Upgrade != nil {
		if us, err := QueryState(ctx, tc, s.Upgrade.Workflow); err != nil {
			r.UpgradeError = err.Error()
		} else {
			r.Upgrade = us
		}
	}
	return r, nil
}

// getContractRef reads the object a v1beta2 contract reference points at: it names the API group
// and kind only, and the object is read in the version the API server prefers for them (what a
// v1beta1 reference named, converted by Cluster API).
func getContractRef(ctx context.Context, k *kube.Client, ref clusterv1.ContractVersionedObjectReference, ns string) (*unstructured.Unstructured, error) {
	version, err := k.PreferredVersion(ref.APIGroup, ref.Kind)
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", ref.Kind, ns, ref.Name, err)
	}
	gv := schema.GroupVersion{Group: ref.APIGroup, Version: version}
	return k.GetRef(ctx, &corev1.ObjectReference{APIVersion: gv.String(), Kind: ref.Kind, Name: ref.Name}, ns)
}

// conditions are a Cluster's conditions as `starter status` shows them: the v1beta1 ones (v1beta2
// keeps them in status.deprecated.v1beta1.conditions), which topoflow's status writes set beside
// the v1beta2 ones and whose reasons its docs name. A Cluster without them (its status written by
// a controller that keeps only v1beta2 conditions) shows its v1beta2 status.conditions instead.
func conditions(c *clusterv1.Cluster) []Condition {
	var out []Condition
	if d := c.Status.Deprecated; d != nil && d.V1Beta1 != nil && len(d.V1Beta1.Conditions) > 0 {
		for _, cond := range d.V1Beta1.Conditions {
			out = append(out, Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message})
		}
		return out
	}
	for _, cond := range c.Status.Conditions {
		out = append(out, Condition{Type: cond.Type, Status: string(cond.Status), Reason: cond.Reason, Message: cond.Message})
	}
	return out
}

// Print writes the Cluster's story to out as aligned "label  value" lines.
func Print(ctx context.Context, out io.Writer, k *kube.Client, tc client.Client, ns, name string) error {
	r, err := Collect(ctx, k, tc, ns, name)
	if err != nil {
		return err
	}
	return r.WriteText(out)
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(out io.Writer) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report as aligned "label  value" lines.
func (r *Report) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "Cluster\t%s\n", r.Cluster)
	if r.Class != "" || r.Version != "" {
		fmt.Fprintf(w, "Class\t%s\n", r.Class)
		fmt.Fprintf(w, "Version\t%s\n", r.Version)
	}
	fmt.Fprintf(w, "Phase\t%s\n", r.Phase)
	if cp := r.ControlPlane; cp != nil {
		fmt.Fprintf(w, "Control plane\t%s %s: version %s (desired %s), initialized %t, ready %t\n",
			cp.Kind, cp.Name, orNone(cp.Version), cp.DesiredVersion, cp.Initialized, cp.Ready)
	}
	for _, p := range r.Pools {
		if p.Kind == "MachinePool" {
			fmt.Fprintf(w, "Pool %s\tMachinePool %s: version %s, replicas %d, ready %d\n", p.Pool, p.Name, orNone(p.Version), p.Replicas, p.ReadyReplicas)
			continue
		}
		fmt.Fprintf(w, "Pool %s\tMachineDeployment %s: version %s, replicas %d, updated %d, ready %d\n",
			p.Pool, p.Name, orNone(p.Version), p.Replicas, p.Updated, p.ReadyReplicas)
	}
	for _, c := range r.Conditions {
		line := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintf(w, "Condition\t%s\n", line)
		printLines(w, c.Message)
	}
	fmt.Fprintf(w, "Workflow\t%s\n", r.Workflow)
	if r.State == nil {
		fmt.Fprintf(w, "\t%s\n", r.StateError)
		return w.Flush()
	}
	s := r.State
	printState(w, s)
	hooks := s.Hooks
	if s.LastUpgrade != "" {
		fmt.Fprintf(w, "Last upgrade\t%s\n", s.LastUpgrade)
	}
	if s.Upgrade != nil {
		fmt.Fprintf(w, "Upgrade\t%s -> %s\n", s.Upgrade.From, s.Upgrade.To)
		fmt.Fprintf(w, "Upgrade workflow\t%s\n", s.Upgrade.Workflow)
		if r.Upgrade == nil {
			fmt.Fprintf(w, "\t%s\n", r.UpgradeError)
		} else {
			printUpgrade(w, r.Upgrade)
			hooks = append(hooks, r.Upgrade.Hooks...)
		}
	}
	if len(hooks) > 0 {
		fmt.Fprintf(w, "Hook calls\t(oldest first)\n")
		for _, h := range hooks {
			fmt.Fprintf(w, "\t  %s\n", h)
		}
	}
	return w.Flush()
}

// queryState asks a workflow where it stands; a workflow that is not running says so.
// QueryState is the state query of a workflow (workflows.QueryState).
func QueryState(ctx context.Context, tc client.Client, id string) (*workflows.State, error) {
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

// pools reads the Cluster's MachineDeployments and MachinePools with their versions.
func pools(ctx context.Context, k *kube.Client, ns, name string) []Part {
	var out []Part
	sel := labels.ClusterName + "=" + name
	if mds, err := k.List(ctx, kube.MachineDeployments, ns, sel); err == nil {
		for i := range mds {
			md := &clusterv1.MachineDeployment{}
			if k.Decode(&mds[i], md) != nil {
				continue
			}
			out = append(out, mdPart(md))
		}
	}
	if mps, err := k.List(ctx, kube.MachinePools, ns, sel); err == nil {
		for i := range mps {
			mp := &clusterv1.MachinePool{}
			if k.Decode(&mps[i], mp) != nil {
				continue
			}
			out = append(out, mpPart(mp))
		}
	}
	return out
}

// mdPart is a MachineDeployment's line. Its updated and ready counts are the v1beta1 counters
// (status.deprecated.v1beta1: Machines on the newest MachineSet, Machines ready), as they were
// always shown; a MachineDeployment without them (its status written by a controller that keeps
// only v1beta2 counters) shows its v1beta2 upToDate and ready counts. replicas is the same counter
// in both versions.
func mdPart(md *clusterv1.MachineDeployment) Part {
	p := Part{Pool: md.Labels[labels.MachineDeploymentName], Kind: "MachineDeployment", Name: md.Name,
		Version: md.Spec.Template.Spec.Version, Replicas: deref(md.Status.Replicas)}
	if d := md.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		p.Updated, p.ReadyReplicas = d.V1Beta1.UpdatedReplicas, d.V1Beta1.ReadyReplicas
	} else {
		p.Updated, p.ReadyReplicas = deref(md.Status.UpToDateReplicas), deref(md.Status.ReadyReplicas)
	}
	return p
}

// mpPart is a MachinePool's line, its ready count read as mdPart reads a MachineDeployment's.
func mpPart(mp *clusterv1.MachinePool) Part {
	p := Part{Pool: mp.Labels[labels.MachinePoolName], Kind: "MachinePool", Name: mp.Name,
		Version: mp.Spec.Template.Spec.Version, Replicas: deref(mp.Status.Replicas)}
	if d := mp.Status.Deprecated; d != nil && d.V1Beta1 != nil {
		p.ReadyReplicas = d.V1Beta1.ReadyReplicas
	} else {
		p.ReadyReplicas = deref(mp.Status.ReadyReplicas)
	}
	return p
}

func printLines(w io.Writer, msg string) {
	for _, m := range strings.Split(msg, "\n") {
		if m != "" {
			fmt.Fprintf(w, "\t  %s\n", m)
		}
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func orNone(s string) string {
	if s == "" {
		return "none yet"
	}
	return s
}
