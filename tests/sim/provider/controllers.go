package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	capiv1beta2 "sigs.k8s.io/cluster-api/api/core/v1beta2"
)

// reconcileInfraCluster plays an infrastructure provider: after the provision delay the cluster
// gets a control plane endpoint and status.ready.
func (p *Provider) reconcileInfraCluster(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error) {
	if done, after, err := p.lifecycle(ctx, SimClusters, u); done {
		return after, err
	}
	st := map[string]any{"observedGeneration": u.GetGeneration()}
	if p.setting(u, FailProvisioning) == "true" {
		return 0, p.updateStatus(ctx, SimClusters, u, failure(st))
	}
	ok, left := provisioned(u, p.duration(u, ProvisionDelay, p.opts.ProvisionDelay))
	if !ok {
		return left, p.updateStatus(ctx, SimClusters, u, map[string]any{"ready": false})
	}
	// Like CAPD's docker backend (ClusterBackEndReconciler.ReconcileNormal), one reconcile
	// sets the endpoint and marks the cluster provisioned: the spec is written, then the status
	// at once, not after the spec's update event came back through the queue.
	if host, _, _ := unstructured.NestedString(u.Object, "spec", "controlPlaneEndpoint", "host"); host == "" {
		if err := unstructured.SetNestedMap(u.Object, map[string]any{"host": u.GetName() + ".sim.topoflow.local", "port": int64(6443)}, "spec", "controlPlaneEndpoint"); err != nil {
			return 0, err
		}
		updated, err := p.dyn.Resource(SimClusters).Namespace(u.GetNamespace()).Update(ctx, u, metav1.UpdateOptions{FieldManager: "simprovider"})
		if err != nil {
			return 0, err
		}
		u = updated
		st["observedGeneration"] = u.GetGeneration()
	}
	st["ready"] = true
	st["failureReason"], st["failureMessage"] = nil, nil
	return 0, p.updateStatus(ctx, SimClusters, u, st)
}

// reconcileInfraMachinePool plays an infrastructure machine pool.
func (p *Provider) reconcileInfraMachinePool(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error) {
	if done, after, err := p.lifecycle(ctx, SimMachinePools, u); done {
		return after, err
	}
	ok, left := provisioned(u, p.duration(u, ProvisionDelay, p.opts.ProvisionDelay))
	if !ok {
		return left, nil
	}
	return 0, p.updateStatus(ctx, SimMachinePools, u, map[string]any{"ready": true})
}

// reconcileControlPlane plays a control plane provider. Like KubeadmControlPlane it waits for the
// Cluster's infrastructure to be ready (seed 004), initializes after the provision delay, and
// rolls a version or machine template change out over the rollout duration; status.version is the
// lowest version of its machines, so it moves only when the rollout is done.
func (p *Provider) reconcileControlPlane(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error) {
	if done, after, err := p.lifecycle(ctx, SimControlPlanes, u); done {
		return after, err
	}
	st := map[string]any{"observedGeneration": u.GetGeneration()}
	if p.setting(u, FailProvisioning) == "true" {
		st["initialized"] = false
		return 0, p.updateStatus(ctx, SimControlPlanes, u, failure(st))
	}
	desired := int64Or(u, 1, "spec", "replicas")
	version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
	initialized, _, _ := unstructured.NestedBool(u.Object, "status", "initialized")

	if !initialized {
		cluster := u.GetLabels()[clusterNameLabel]
		c, err := p.cached(Clusters, u.GetNamespace(), cluster)
		if err != nil {
			return time.Second, nil
		}
		if !infrastructureReady(c) {
			st := map[string]any{"initialized": false, "ready": false}
			controlPlaneConditions(u, st, false, desired, 0, "")
			return time.Second, p.updateStatus(ctx, SimControlPlanes, u, st)
		}
		ok, left := provisioned(u, p.duration(u, ProvisionDelay, p.opts.ProvisionDelay))
		if !ok {
			return left, nil
		}
		p.progress(u, rolloutTarget(u))
		st["initialized"], st["ready"], st["version"] = true, true, version
		st["replicas"], st["updatedReplicas"], st["readyReplicas"], st["unavailableReplicas"] = desired, desired, desired, int64(0)
		controlPlaneConditions(u, st, true, desired, desired, version)
		return 0, p.reportVersion(ctx, SimControlPlanes, u, st, version)
	}

	done, left := p.progress(u, rolloutTarget(u))
	st["replicas"], st["readyReplicas"], st["unavailableReplicas"] = desired, desired, int64(0)
	if !done {
		st["updatedReplicas"] = int64(0)
		running, _, _ := unstructured.NestedString(u.Object, "status", "version")
		controlPlaneConditions(u, st, true, desired, 0, running)
		return left, p.updateStatus(ctx, SimControlPlanes, u, st)
	}
	st["version"], st["updatedReplicas"] = version, desired
	controlPlaneConditions(u, st, true, desired, desired, version)
	if cur, _, _ := unstructured.NestedString(u.Object, "status", "version"); cur != version {
		return left, p.reportVersion(ctx, SimControlPlanes, u, st, version)
	}
	return left, p.updateStatus(ctx, SimControlPlanes, u, st)
}

// controlPlaneConditions adds to a control plane's status what a v1beta1 KubeadmControlPlane of
// Cluster API v1.14 reports beside the contract's counters: its v1beta1 conditions (Ready and
// Available, waiting for kubeadm init until initialized), status.versions (every replica at
// running, the lowest version, until a rollout is done), and under status.v1beta2 the v1beta2
// conditions (Available, Initialized, RollingOut, ScalingUp, ScalingDown) and counters. All
// replicas are ready and available at once (the simulator does not fail machines).
func controlPlaneConditions(u *unstructured.Unstructured, st map[string]any, initialized bool, desired, upToDate int64, running string) {
	replicas, available := desired, desired
	v1 := []cond{trueCond("Ready", ""), trueCond("Available", "")}
	available2 := trueCond(capiv1beta2.AvailableCondition, capiv1beta2.AvailableReason)
	initialized2 := trueCond("Initialized", "Initialized")
	if !initialized {
		replicas, available = 0, 0
		const waiting = "WaitingForKubeadmInit"
		v1 = []cond{{Type: "Ready", Status: "False", Reason: waiting, Severity: "Info"}, {Type: "Available", Status: "False", Reason: waiting, Severity: "Info"}}
		available2 = falseCond(capiv1beta2.AvailableCondition, capiv1beta2.NotAvailableReason, "Control plane not yet initialized")
		initialized2 = falseCond("Initialized", "NotInitialized", "Control plane not yet initialized")
	}
	rolling := falseCond(capiv1beta2.RollingOutCondition, capiv1beta2.NotRollingOutReason, "")
	if initialized && upToDate < desired {
		rolling = cond{Type: capiv1beta2.RollingOutCondition, Status: "True", Reason: capiv1beta2.RollingOutReason,
			Message: fmt.Sprintf("Rolling out %d not up-to-date replicas", desired-upToDate)}
	}
	st["conditions"] = v1beta1Conditions(u, v1...)
	st["versions"] = versionsOf(running, replicas)
	st["v1beta2"] = v1beta2Status(u, map[string]any{"readyReplicas": replicas, "availableReplicas": available, "upToDateReplicas": upToDate},
		append([]cond{available2, initialized2, rolling}, scaling(desired, replicas)...)...)
}

// reportVersion writes a status that reports a version reached, and records the transition once
// the write has gone through (a write that fails, say while the API server is away, is tried again
// and must not record it twice).
func (p *Provider) reportVersion(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, st map[string]any, version string) error {
	if err := p.updateStatus(ctx, gvr, u, st); err != nil {
		return err
	}
	p.recordVersion(u, version)
	return nil
}

// rolloutTarget is what a control plane rolls out when it changes: version and machine template.
func rolloutTarget(u *unstructured.Unstructured) string {
	version, _, _ := unstructured.NestedString(u.Object, "spec", "version")
	mt, _, _ := unstructured.NestedMap(u.Object, "spec", "machineTemplate", "infrastructureRef")
	return hashOf([]any{version, mt})
}

// reconcileMachineDeployment plays Cluster API's MachineDeployment controller: replicas follow
// spec at once; a template change (version, templates, labels) rolls out over the rollout duration.
// Its status is what Cluster API v1.14 reports on a v1beta1 MachineDeployment: the v1beta1
// counters and conditions (Ready, Available, MachineSetReady), and under status.v1beta2 the
// v1beta2 conditions (Available, RollingOut, ScalingUp, ScalingDown) and counters; status.versions
// is the version its replicas run (the old one until a rollout is done).
func (p *Provider) reconcileMachineDeployment(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error) {
	return p.reconcilePool(ctx, MachineDeployments, u, func(st map[string]any, desired int64, done bool) {
		upToDate := desired
		if !done {
			upToDate = 0
		}
		st["selector"] = selectorString(u)
		st["updatedReplicas"] = upToDate
		st["conditions"] = v1beta1Conditions(u, trueCond("Ready", ""), trueCond("Available", ""), trueCond("MachineSetReady", ""))
		st["v1beta2"] = v1beta2Status(u, map[string]any{"readyReplicas": desired, "availableReplicas": desired, "upToDateReplicas": upToDate},
			poolConditions(desired, desired, desired, desired-upToDate)...)
		st["versions"] = versionsOf(p.runningVersion(u, done), desired)
	})
}

// runningVersion is the version a pool's replicas run: its spec's once a rollout is done, else
// the last one it reported.
func (p *Provider) runningVersion(u *unstructured.Unstructured, done bool) string {
	if done {
		v, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "version")
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.transitions) - 1; i >= 0; i-- {
		if t := p.transitions[i]; t.Kind == u.GetKind() && t.Name == u.GetName() {
			return t.Version
		}
	}
	return ""
}

// reconcileMachinePool plays Cluster API's MachinePool controller. Like it, a deleted MachinePool
// first deletes its bootstrap config and infrastructure pool and keeps its finalizer until both
// are gone, so "MachinePool gone" means its machines are gone too.
func (p *Provider) reconcileMachinePool(ctx context.Context, u *unstructured.Unstructured) (time.Duration, error) {
	if u.GetDeletionTimestamp() != nil {
		left, err := p.deleteRefs(ctx, u, []string{"spec", "template", "spec", "infrastructureRef"},
			[]string{"spec", "template", "spec", "bootstrap", "configRef"})
		if err != nil || left {
			p.recordDeletion(u, false)
			return childPoll, err
		}
	}
	// As Cluster API v1.14 reports a v1beta1 MachinePool without MachinePool Machines: its v1beta1
	// conditions, and under status.v1beta2 only the counters (its controller sets no v1beta2
	// conditions yet), ready and available as status.replicas, up to date as spec.replicas; its
	// versions come from the Nodes, which the simulator has none of.
	return p.reconcilePool(ctx, MachinePools, u, func(st map[string]any, desired int64, _ bool) {
		st["bootstrapReady"], st["infrastructureReady"] = true, true
		st["conditions"] = v1beta1Conditions(u, trueCond("Ready", ""), trueCond("BootstrapReady", ""), trueCond("InfrastructureReady", ""),
			trueCond("ReplicasReady", ""))
		st["v1beta2"] = map[string]any{"readyReplicas": desired, "availableReplicas": desired, "upToDateReplicas": desired}
	})
}

// reconcilePool is what MachineDeployments and MachinePools share: replicas follow spec at once,
// a change of spec.template rolls out over the rollout duration, and the version reached is
// recorded when a rollout finishes. kindStatus adds the kind's own status fields.
func (p *Provider) reconcilePool(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured,
	kindStatus func(st map[string]any, desired int64, done bool)) (time.Duration, error) {
	if done, after, err := p.lifecycle(ctx, gvr, u); done {
		return after, err
	}
	desired := int64Or(u, 1, "spec", "replicas")
	tmpl, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	version, _, _ := unstructured.NestedString(u.Object, "spec", "template", "spec", "version")
	first := !p.seen(u)
	done, left := p.progress(u, hashOf(tmpl))
	st := map[string]any{
		"observedGeneration":  u.GetGeneration(),
		"replicas":            desired,
		"readyReplicas":       desired,
		"availableReplicas":   desired,
		"unavailableReplicas": int64(0),
		"phase":               "Running",
	}
	if !done {
		st["phase"] = "ScalingUp"
	}
	kindStatus(st, desired, done)
	if done && (first || p.versionChanged(u, version)) {
		return left, p.reportVersion(ctx, gvr, u, st, version)
	}
	return left, p.updateStatus(ctx, gvr, u, st)
}

func (p *Provider) seen(u *unstructured.Unstructured) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.rollouts[u.GetUID()]
	return ok
}

// versionChanged reports whether version differs from the last one recorded for the object.
func (p *Provider) versionChanged(u *unstructured.Unstructured, version string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.transitions) - 1; i >= 0; i-- {
		t := p.transitions[i]
		if t.Kind == u.GetKind() && t.Name == u.GetName() {
			return t.Version != version
		}
	}
	return true
}

// childPoll is how often a deleted owner checks whether the objects it deleted are gone (their
// kinds are not all watched by the simulator).
const childPoll = 250 * time.Millisecond

// deleteRefs deletes the objects that u references at the given paths and reports whether any of
// them still exists. A reference's resource is its kind in lower case plus "s", which holds for
// every kind the simulator's CRDs define.
func (p *Provider) deleteRefs(ctx context.Context, u *unstructured.Unstructured, paths ...[]string) (left bool, err error) {
	for _, path := range paths {
		ref, _, _ := unstructured.NestedMap(u.Object, path...)
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		if kind == "" || name == "" {
			continue
		}
		gv, err := schema.ParseGroupVersion(apiVersion)
		if err != nil {
			return false, fmt.Errorf("%s %s: %s: %w", u.GetKind(), u.GetName(), strings.Join(path, "."), err)
		}
		res := p.dyn.Resource(gv.WithResource(strings.ToLower(kind) + "s")).Namespace(u.GetNamespace())
		obj, err := res.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, err
		}
		left = true
		if obj.GetDeletionTimestamp() == nil {
			if err := res.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
		}
	}
	return left, nil
}
