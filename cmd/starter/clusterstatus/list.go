package clusterstatus

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"go.temporal.io/sdk/client"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/status"
	"github.com/topoflow/topoflow/workflows"
)

// Row is one managed Cluster in `starter status` without a name (also its -o json output).
type Row struct {
	Cluster string `json:"cluster"`
	Class   string `json:"class"`
	Version string `json:"version"`
	Phase   string `json:"phase,omitempty"`
	// Topology is the TopologyReconciled condition (see conditions): "True", or its reason when
	// not (its status when it has none).
	Topology string `json:"topology,omitempty"`
	// Step is the Cluster workflow's step ("" when its state could not be read; StateError says why).
	Step       string `json:"step,omitempty"`
	StateError string `json:"stateError,omitempty"`
}

// List reads the managed Clusters (those with spec.topology) of a namespace, or of all
// namespaces when ns is "", and asks each one's workflow for its step. Clusters Cluster API's
// topology controller does not manage (no topology) are left out.
func List(ctx context.Context, k *kube.Client, tc client.Client, ns string) ([]Row, error) {
	items, err := k.List(ctx, kube.Clusters, ns, "")
	if err != nil {
		where := "all namespaces"
		if ns != "" {
			where = "namespace " + ns
		}
		return nil, fmt.Errorf("listing Clusters in %s: %w", where, err)
	}
	rows := []Row{}
	for i := range items {
		c := &clusterv1.Cluster{}
		// Leniently, as the API server serves it: a newer Cluster API's fields are no reason to
		// refuse the listing.
		if err := k.Decode(&items[i], c); err != nil {
			return nil, fmt.Errorf("reading Cluster %s/%s: %w", items[i].GetNamespace(), items[i].GetName(), err)
		}
		if !c.Spec.Topology.IsDefined() {
			continue
		}
		rows = append(rows, rowOf(ctx, tc, c))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Cluster < rows[j].Cluster })
	return rows, nil
}

func rowOf(ctx context.Context, tc client.Client, c *clusterv1.Cluster) Row {
	r := Row{Cluster: c.Namespace + "/" + c.Name, Class: c.Spec.Topology.ClassRef.Name, Version: c.Spec.Topology.Version, Phase: c.Status.Phase}
	r.Topology = topologyColumn(conditions(c))
	s, err := QueryState(ctx, tc, workflows.WorkflowID(c.Namespace, c.Name))
	if err != nil {
		r.StateError = err.Error()
		return r
	}
	r.Step = s.Step
	return r
}

// topologyColumn is the TOPOLOGY column: "True", or the TopologyReconciled condition's reason
// when not ("" without the condition). A v1beta1 True condition has no reason; a v1beta2 one does
// (ReconcileSucceeded), and shows "True" as well.
func topologyColumn(conds []Condition) string {
	for _, c := range conds {
		if c.Type != status.TopologyReconciled {
			continue
		}
		if c.Status == "True" || c.Reason == "" {
			return c.Status
		}
		return c.Reason
	}
	return ""
}

// WriteList writes the rows as a table, or says there is no managed Cluster.
func WriteList(out io.Writer, rows []Row) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(out, "No managed Cluster (none has spec.topology).")
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tCLASS\tVERSION\tPHASE\tTOPOLOGY\tSTEP")
	for _, r := range rows {
		step := r.Step
		if r.StateError != "" {
			step = "(" + firstLine(r.StateError) + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Cluster, r.Class, r.Version, dash(r.Phase), dash(r.Topology), dash(step))
	}
	return w.Flush()
}

// WriteListJSON writes the rows as indented JSON.
func WriteListJSON(out io.Writer, rows []Row) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
