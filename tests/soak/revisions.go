package main

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/revision"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// The class-revision rollout phase: a copy of the sample class that opted in to revisions, with a
// worker template of its own (the one edited), so the other soak Clusters are not affected.
const (
	revClass          = "quick-start-rev"
	revWorkerTemplate = "quick-start-rev-worker-machine"
	revSampleWorker   = "quick-start-default-worker-machine"
	revPhaseLabel     = "soak.topoflow.dev/revision-phase"
	revRollout        = "rev-latest"
	revFromDisk       = "hdd"
	revToDisk         = "ssd"
)

var simMachineTemplates = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "simmachinetemplates"}

// revisionStages: one Cluster first, then the rest two at a time.
var revisionStages = []string{"first", "rest"}

// revisionPhase creates n Clusters of the class with revisions pinned to revision 1, edits its
// worker template in place (revision 2), moves them with one Rollout to "latest" in two stages,
// then deletes them; a poller records their pins and worker templates all along.
func (d *driver) revisionPhase(ctx context.Context, n int) (r revisionRecord) {
	r.Class, r.FromDisk, r.ToDisk, r.Stages = revClass, revFromDisk, revToDisk, revisionStages
	for i := 1; i <= n; i++ {
		r.Clusters = append(r.Clusters, fmt.Sprintf("r%d", i))
	}
	rev1, rev2 := revision.Name(revClass, 1), revision.Name(revClass, 2)
	if err := d.retry(ctx, "apply the class with revisions", func() error { return d.applyRevisionClass(ctx, revFromDisk, true) }); err != nil {
		return r
	}
	if !d.until(ctx, rev1+" recorded", func() bool { return d.revisionExists(ctx, rev1) }) {
		return r
	}
	p := &revPoller{d: d, clusters: r.Clusters, obs: map[string][]revObservation{}, disk: map[string]string{}}
	pollCtx, stopPoll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.run(pollCtx) }()
	defer func() {
		stopPoll()
		wg.Wait()
		r.Observations, r.Disk = p.obs, p.disk
		if r.Reached == "recorded" {
			r.Rollout = d.revisionRolloutStatus(ctx)
		}
	}()

	for _, c := range r.Clusters {
		if err := d.retry(ctx, "create "+c, func() error { return d.applyRevisionCluster(ctx, c, rev1) }); err != nil {
			return r
		}
	}
	if !d.until(ctx, "revision Clusters applied from "+rev1, func() bool {
		last := p.last()
		for _, c := range r.Clusters {
			o, ok := last[c]
			if !ok || o.Applied != rev1 || len(o.Templates) < 2 {
				return false
			}
		}
		return true
	}) {
		return r
	}
	r.Before, r.BeforeAt = map[string]map[string]string{}, map[string]time.Time{}
	for c, o := range p.last() {
		r.Before[c], r.BeforeAt[c] = o.Templates, o.At
	}
	r.Reached = "created"

	// The worker template edited in place: recorded as revision 2, moving no Cluster (the poller
	// watches that until the Rollout moves each).
	if err := d.retry(ctx, "edit the worker template of "+revClass, func() error { return d.applyRevisionClass(ctx, revToDisk, false) }); err != nil {
		return r
	}
	if !d.until(ctx, rev2+" recorded", func() bool { return d.revisionExists(ctx, rev2) }) {
		return r
	}
	if err := d.retry(ctx, "create the Rollout "+revRollout, func() error { return d.createRevisionRollout(ctx) }); err != nil {
		return r
	}
	r.Reached = "recorded"
	if !d.until(ctx, "revision Clusters moved to "+rev2+" by "+revRollout, func() bool {
		ro := &rolloutv1.Rollout{}
		if err := d.kc.GetTyped(ctx, kube.Rollouts, d.ns, revRollout, ro); err != nil || ro.Status.Phase != rollout.PhaseCompleted {
			return false
		}
		last := p.last()
		for _, c := range r.Clusters {
			o := last[c]
			if o.Applied != rev2 {
				return false
			}
			for md, t := range r.Before[c] {
				if o.Templates[md] == t || p.diskOf(o.Templates[md]) == "" {
					return false
				}
			}
		}
		return true
	}) {
		return r
	}
	r.Reached = "rolled"
	r.Rollout = d.revisionRolloutStatus(ctx)
	stopPoll()
	wg.Wait()

	// Gone again, with the Rollout, so the namespace empties as after the other Clusters.
	for _, c := range r.Clusters {
		if !d.remove(ctx, provider.Clusters, c) {
			return r
		}
	}
	if !d.until(ctx, "revision Clusters deleted", func() bool {
		l, err := d.kc.Dynamic.Resource(provider.Clusters).Namespace(d.ns).List(ctx, metav1.ListOptions{LabelSelector: revPhaseLabel})
		return err == nil && len(l.Items) == 0
	}) {
		return r
	}
	if d.deleteRolloutNamed(ctx, revRollout) {
		r.Reached = "deleted"
	}
	return r
}

// applyRevisionClass applies the class with revisions (once, with its worker template) or just
// its worker template, its disk set.
func (d *driver) applyRevisionClass(ctx context.Context, disk string, withClass bool) error {
	docs, err := sampleDocs(d.root, "clusterclass.yaml")
	if err != nil {
		return err
	}
	for _, doc := range docs {
		doc.SetNamespace(d.ns)
		switch {
		case doc.GetKind() == "SimMachineTemplate" && doc.GetName() == revSampleWorker:
			doc.SetName(revWorkerTemplate)
			if err := unstructured.SetNestedField(doc.Object, disk, "spec", "template", "spec", "disk"); err != nil {
				return err
			}
		case doc.GetKind() == "ClusterClass" && withClass:
			doc.SetName(revClass)
			doc.SetAnnotations(map[string]string{revision.EnabledAnnotation: revision.Enabled})
			mds, _, _ := unstructured.NestedSlice(doc.Object, "spec", "workers", "machineDeployments")
			for _, md := range mds {
				if err := unstructured.SetNestedField(md.(map[string]any), revWorkerTemplate, "template", "infrastructure", "ref", "name"); err != nil {
					return err
				}
			}
			if err := unstructured.SetNestedSlice(doc.Object, mds, "spec", "workers", "machineDeployments"); err != nil {
				return err
			}
		default:
			continue
		}
		if _, err := d.kc.Apply(ctx, doc, fieldManager); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) applyRevisionCluster(ctx context.Context, name, pin string) error {
	c, err := d.sampleCluster(name, map[string]string{revPhaseLabel: "true"})
	if err != nil {
		return err
	}
	c.SetAnnotations(map[string]string{revision.PinAnnotation: pin})
	if err := unstructured.SetNestedField(c.Object, revClass, "spec", "topology", "class"); err != nil {
		return err
	}
	_, err = d.kc.Apply(ctx, c, fieldManager)
	return err
}

func (d *driver) revisionExists(ctx context.Context, name string) bool {
	_, err := d.kc.Dynamic.Resource(kube.ClusterClassRevisions).Namespace(d.ns).Get(ctx, name, metav1.GetOptions{})
	return err == nil
}

// createRevisionRollout: every Cluster of the phase to the class's newest revision, one first,
// then the rest two at a time.
func (d *driver) createRevisionRollout(ctx context.Context) error {
	ro := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": revRollout, "namespace": d.ns},
		"spec": map[string]any{
			"clusters": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{revPhaseLabel: "true"}}},
			"change":   map[string]any{"classRevision": revision.Latest},
			"stages": []any{
				map[string]any{"name": revisionStages[0], "count": int64(1)},
				map[string]any{"name": revisionStages[1], "maxConcurrent": int64(2)},
			},
		},
	}}
	_, err := d.kc.Dynamic.Resource(kube.Rollouts).Namespace(d.ns).Create(ctx, ro, metav1.CreateOptions{})
	if kube.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// revisionRolloutStatus reads the Rollout's status, retrying through outages for a while.
func (d *driver) revisionRolloutStatus(ctx context.Context) rolloutv1.RolloutStatus {
	deadline := time.Now().Add(time.Minute)
	for {
		ro := &rolloutv1.Rollout{}
		err := d.kc.GetTyped(ctx, kube.Rollouts, d.ns, revRollout, ro)
		if err == nil || kube.IsNotFound(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return ro.Status
		}
		sleep(ctx, time.Second)
	}
}

// revPoller polls the phase's Clusters each second: their MachineDeployments first, then the
// Clusters, each by one list (one consistent view), recording each Cluster's view when it changes
// and the disk of every infrastructure template it sees.
type revPoller struct {
	d        *driver
	clusters []string

	mu   sync.Mutex
	obs  map[string][]revObservation
	disk map[string]string
}

func (p *revPoller) run(ctx context.Context) {
	for ctx.Err() == nil {
		p.poll(ctx)
		sleep(ctx, time.Second)
	}
}

func (p *revPoller) poll(ctx context.Context) {
	at := time.Now()
	mds, err := p.d.kc.Dynamic.Resource(provider.MachineDeployments).Namespace(p.d.ns).List(ctx, metav1.ListOptions{
		LabelSelector: "cluster.x-k8s.io/cluster-name in (" + strings.Join(p.clusters, ",") + ")"})
	if err != nil {
		return
	}
	clusters, err := p.d.kc.Dynamic.Resource(provider.Clusters).Namespace(p.d.ns).List(ctx, metav1.ListOptions{LabelSelector: revPhaseLabel})
	if err != nil {
		return
	}
	templates := map[string]map[string]string{}
	for _, md := range mds.Items {
		c := md.GetLabels()["cluster.x-k8s.io/cluster-name"]
		t, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
		if templates[c] == nil {
			templates[c] = map[string]string{}
		}
		templates[c][md.GetLabels()["topology.cluster.x-k8s.io/deployment-name"]] = t
		p.readDisk(ctx, t)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range clusters.Items {
		a := c.GetAnnotations()
		o := revObservation{At: at, Pin: a[revision.PinAnnotation], Applied: a[revision.AppliedAnnotation], Templates: templates[c.GetName()]}
		prev := p.obs[c.GetName()]
		if n := len(prev); n > 0 && prev[n-1].Pin == o.Pin && prev[n-1].Applied == o.Applied && maps.Equal(prev[n-1].Templates, o.Templates) {
			continue
		}
		p.obs[c.GetName()] = append(prev, o)
	}
}

func (p *revPoller) readDisk(ctx context.Context, name string) {
	if name == "" || p.diskOf(name) != "" {
		return
	}
	t, err := p.d.kc.Dynamic.Resource(simMachineTemplates).Namespace(p.d.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return
	}
	disk, _, _ := unstructured.NestedString(t.Object, "spec", "template", "spec", "disk")
	p.mu.Lock()
	p.disk[name] = disk
	p.mu.Unlock()
}

func (p *revPoller) diskOf(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disk[name]
}

// last is each Cluster's latest view.
func (p *revPoller) last() map[string]revObservation {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]revObservation{}
	for c, obs := range p.obs {
		out[c] = obs[len(obs)-1]
	}
	return out
}
