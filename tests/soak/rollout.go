package main

import (
	"context"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	rolloutv1 "github.com/topoflow/topoflow/model/api/rollout/v1alpha1"
	"github.com/topoflow/topoflow/model/rollout"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

// clusterLabel names a soak Cluster, for its Rollout's selector.
const clusterLabel = "soak.topoflow.dev/cluster"

// viaRollout: the even-numbered Clusters ("c2", "c4", ...) are upgraded by a Rollout.
func viaRollout(name string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "c"))
	return err == nil && n%2 == 0
}

// upgrade moves a created Cluster to targetVersion, by an edit or by a Rollout of its own, and
// waits for every part and AfterClusterUpgrade (and the Rollout's completion).
func (d *driver) upgrade(ctx context.Context, name string, r *clusterRecord) bool {
	if !r.ViaRollout {
		if err := d.retry(ctx, "upgrade "+name, func() error { return d.setVersion(ctx, name, targetVersion) }); err != nil {
			return false
		}
		return d.until(ctx, name+" upgraded", func() bool {
			return d.allAt(name, targetVersion) && d.passed(name, hooksv1.AfterClusterUpgrade, targetVersion)
		})
	}
	before := d.generation(ctx, name)
	if err := d.retry(ctx, "create the Rollout of "+name, func() error { return d.createRollout(ctx, name) }); err != nil {
		return false
	}
	if !d.until(ctx, name+" upgraded by its Rollout", func() bool {
		ro := &rolloutv1.Rollout{}
		err := d.kc.GetTyped(ctx, kube.Rollouts, d.ns, "up-"+name, ro)
		return err == nil && ro.Status.Phase == rollout.PhaseCompleted && ro.Status.Counts.Done == 1 &&
			d.allAt(name, targetVersion) && d.passed(name, hooksv1.AfterClusterUpgrade, targetVersion)
	}) {
		return false
	}
	r.Generations = d.generation(ctx, name) - before
	return true
}

func (d *driver) generation(ctx context.Context, name string) int64 {
	for {
		c, err := d.kc.Dynamic.Resource(provider.Clusters).Namespace(d.ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return c.GetGeneration()
		}
		if ctx.Err() != nil {
			return 0
		}
		sleep(ctx, time.Second)
	}
}

func (d *driver) createRollout(ctx context.Context, name string) error {
	r := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "topoflow.dev/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "up-" + name, "namespace": d.ns},
		"spec": map[string]any{
			"clusters": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{clusterLabel: name}}},
			"change":   map[string]any{"version": targetVersion},
			"stages":   []any{map[string]any{"name": "only"}},
		},
	}}
	_, err := d.kc.Dynamic.Resource(kube.Rollouts).Namespace(d.ns).Create(ctx, r, metav1.CreateOptions{})
	if kube.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// deleteRollout deletes the Cluster's Rollout and says whether it is gone (its workflow releases
// the finalizer).
func (d *driver) deleteRollout(ctx context.Context, name string) bool {
	return d.deleteRolloutNamed(ctx, "up-"+name)
}

// deleteRolloutNamed deletes a Rollout and says whether it is gone.
func (d *driver) deleteRolloutNamed(ctx context.Context, name string) bool {
	if !d.remove(ctx, kube.Rollouts, name) {
		return false
	}
	return d.until(ctx, "the Rollout "+name+" gone", func() bool {
		_, err := d.kc.Dynamic.Resource(kube.Rollouts).Namespace(d.ns).Get(ctx, name, metav1.GetOptions{})
		return kube.IsNotFound(err)
	})
}
