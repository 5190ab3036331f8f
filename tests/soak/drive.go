package main

import (
	"context"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/tests/extension"
	"github.com/topoflow/topoflow/tests/sim/provider"
	"github.com/topoflow/topoflow/workflows"
)

// fieldManager is the soak's own, as a user's kubectl would be.
const fieldManager = "topoflow-soak"

// driver takes Clusters through their life: create, chained upgrade, delete.
type driver struct {
	kc      *kube.Client
	tc      client.Client
	ext     *extension.Server
	sim     *provider.Provider
	ns      string
	root    string
	timeout time.Duration // per stage
	log     func(format string, args ...any)
	// rollouts: every second Cluster is upgraded by a Rollout of its own, not by an edit.
	rollouts bool
}

// life runs one Cluster through create, upgrade and delete, and returns what was seen.
func (d *driver) life(ctx context.Context, name string) (r clusterRecord) {
	r.Name = name
	defer func() {
		r.Done = time.Now()
		r.Calls = d.callsOf(name)
		r.Transitions = d.transitionsOf(name)
	}()
	if err := d.retry(ctx, "create "+name, func() error { return d.applyCluster(ctx, name) }); err != nil {
		return r
	}
	if !d.until(ctx, name+" created", func() bool {
		c, err := d.kc.Dynamic.Resource(provider.Clusters).Namespace(d.ns).Get(ctx, name, metav1.GetOptions{})
		return err == nil && phase(c) == "Provisioned" && reconciled(c) && d.passed(name, hooksv1.AfterControlPlaneInitialized, "")
	}) {
		return r
	}
	r.Reached = "created"
	r.ViaRollout = d.rollouts && viaRollout(name)
	if !d.upgrade(ctx, name, &r) {
		return r
	}
	r.Reached = "upgraded"
	if !d.remove(ctx, provider.Clusters, name) {
		return r
	}
	if !d.until(ctx, name+" deleted", func() bool {
		_, err := d.kc.Dynamic.Resource(provider.Clusters).Namespace(d.ns).Get(ctx, name, metav1.GetOptions{})
		return kube.IsNotFound(err)
	}) {
		return r
	}
	r.Reached = "deleted"
	r.Left = d.leftovers(ctx, name)
	if r.ViaRollout {
		r.RolloutLeft = !d.deleteRollout(ctx, name)
	}
	// The workflow completes right after it releases the finalizer.
	d.until(ctx, name+" workflow ended", func() bool { return !d.workflowRunning(ctx, name) })
	r.WorkflowRunning = d.workflowRunning(ctx, name)
	return r
}

// until polls cond every second for one stage's timeout; API server outages just make it wait.
func (d *driver) until(ctx context.Context, what string, cond func() bool) bool {
	deadline := time.Now().Add(d.timeout)
	for time.Now().Before(deadline) {
		if cond() {
			d.log("%s", what)
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Second):
		}
	}
	d.log("%s: not within %s", what, d.timeout)
	return false
}

// retry repeats a write through outages until the stage's timeout.
func (d *driver) retry(ctx context.Context, what string, write func() error) error {
	var err error
	d.until(ctx, what, func() bool { err = write(); return err == nil })
	if err != nil {
		d.log("%s: %v", what, err)
	}
	return err
}

func (d *driver) applyCluster(ctx context.Context, name string) error {
	c, err := d.sampleCluster(name, map[string]string{clusterLabel: name})
	if err != nil {
		return err
	}
	_, err = d.kc.Apply(ctx, c, fieldManager)
	return err
}

// sampleCluster is the sample Cluster, named and labelled, in the soak's namespace.
func (d *driver) sampleCluster(name string, labels map[string]string) (*unstructured.Unstructured, error) {
	docs, err := sampleDocs(d.root, "cluster.yaml")
	if err != nil {
		return nil, err
	}
	c := docs[0]
	c.SetName(name)
	c.SetNamespace(d.ns)
	c.SetLabels(labels)
	return c, nil
}

// remove deletes an object, through outages, and says whether the delete was taken (or it was
// already gone).
func (d *driver) remove(ctx context.Context, gvr schema.GroupVersionResource, name string) bool {
	return d.retry(ctx, "delete "+gvr.Resource+" "+name, func() error {
		err := d.kc.Dynamic.Resource(gvr).Namespace(d.ns).Delete(ctx, name, metav1.DeleteOptions{})
		if kube.IsNotFound(err) {
			return nil
		}
		return err
	}) == nil
}

func (d *driver) setVersion(ctx context.Context, name, version string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster",
		"metadata": map[string]any{"name": name, "namespace": d.ns},
		"spec":     map[string]any{"topology": map[string]any{"version": version}},
	}}
	_, err := d.kc.Apply(ctx, obj, fieldManager+"-upgrade")
	return err
}

func (d *driver) callsOf(name string) []extension.Call {
	var out []extension.Call
	for _, c := range d.ext.Calls("") {
		if c.Cluster == d.ns+"/"+name {
			out = append(out, c)
		}
	}
	return out
}

func (d *driver) passed(name, hook, version string) bool {
	for _, c := range d.ext.Calls(hook) {
		if c.Cluster == d.ns+"/"+name && c.Version() == version && c.Passed() {
			return true
		}
	}
	return false
}

// transitionsOf are the version reports of the Cluster's parts (names start "<cluster>-").
func (d *driver) transitionsOf(name string) []provider.Transition {
	var out []provider.Transition
	for _, t := range d.sim.Transitions() {
		if strings.HasPrefix(t.Name, name+"-") && (t.Kind == "SimControlPlane" || t.Kind == "MachineDeployment" || t.Kind == "MachinePool") {
			out = append(out, t)
		}
	}
	return out
}

// allAt: the control plane and the three pools of the sample have reported version.
func (d *driver) allAt(name, version string) bool {
	last := map[string]string{}
	for _, t := range d.transitionsOf(name) {
		last[t.Kind+"/"+t.Name] = t.Version
	}
	n := 0
	for _, v := range last {
		if v == version {
			n++
		}
	}
	return n == 4 && len(last) == 4
}

func (d *driver) leftovers(ctx context.Context, name string) []string {
	var left []string
	for _, gvr := range provider.TopologyKinds {
		list, err := d.kc.Dynamic.Resource(gvr).Namespace(d.ns).List(ctx, metav1.ListOptions{LabelSelector: "cluster.x-k8s.io/cluster-name=" + name})
		if err != nil {
			continue // kinds the stack does not serve
		}
		for _, o := range list.Items {
			left = append(left, o.GetKind()+" "+o.GetName())
		}
	}
	return left
}

func (d *driver) workflowRunning(ctx context.Context, name string) bool {
	desc, err := d.tc.DescribeWorkflowExecution(ctx, workflows.WorkflowID(d.ns, name), "")
	return err == nil && desc.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
}

func phase(u *unstructured.Unstructured) string {
	p, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return p
}

func reconciled(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "TopologyReconciled" {
			return m["status"] == "True"
		}
	}
	return false
}
