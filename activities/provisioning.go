package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topoflow/topoflow/internal/kube"
	clusterv1 "github.com/topoflow/topoflow/model/api/v1beta1"
	hubv1 "github.com/topoflow/topoflow/model/api/v1beta2"
	"github.com/topoflow/topoflow/model/contract"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/status"
)

// Endpoint is a control plane endpoint.
type Endpoint struct {
	Host string `json:"host"`
	Port int32  `json:"port"`
	// Source names the object it came from ("ClusterEndpoint x" or "SimCluster y").
	Source string `json:"source,omitempty"`
}

// Provisioning is what the providers report about a Cluster's infrastructure and control plane.
type Provisioning struct {
	ClusterGone bool `json:"clusterGone,omitempty"`
	// RefsSet: the Cluster points at its control plane (and infrastructure cluster, if any).
	RefsSet             bool      `json:"refsSet"`
	InfrastructureReady bool      `json:"infrastructureReady"`
	Endpoint            *Endpoint `json:"endpoint,omitempty"`
	// ClusterEndpointSet: spec.controlPlaneEndpoint on the Cluster is already valid.
	ClusterEndpointSet      bool   `json:"clusterEndpointSet,omitempty"`
	ControlPlaneInitialized bool   `json:"controlPlaneInitialized"`
	ControlPlaneReady       bool   `json:"controlPlaneReady"`
	ControlPlaneVersion     string `json:"controlPlaneVersion,omitempty"`
	// Failure is a provider-reported failure message, if any.
	Failure string `json:"failure,omitempty"`
	// Counters is a digest of what the Cluster controller role's v1beta2 status takes from the
	// control plane and the pools (replicaFacts): their replica counters, versions and conditions.
	// A status write compares it with the last one's, so a change that moves only the counters is
	// written. Empty when the role is off (only TopologyReconciled is written then), and in the
	// results of workflows recorded before it existed.
	Counters string `json:"counters,omitempty"`
}

// ObserveInput names the Cluster to observe.
type ObserveInput struct {
	Cluster ClusterRef `json:"cluster"`
	// HasInfrastructure says whether the class defines an infrastructure cluster (from ApplyResult).
	HasInfrastructure bool `json:"hasInfrastructure"`
	// Seen: as ApplyInput.Seen.
	Seen []corev1.ObjectReference `json:"seen,omitempty"`
}

// ObserveProvisioning reads the infrastructure cluster, control plane and ClusterEndpoints of a
// Cluster and reports their contract fields; in the Cluster controller role also the digest of
// what its v1beta2 counters are computed from (Provisioning.Counters). It writes nothing.
func (a *Activities) ObserveProvisioning(ctx context.Context, in ObserveInput) (*Provisioning, error) {
	ref := in.Cluster
	if err := a.Kube.AwaitSeen(ctx, in.Seen); err != nil {
		return nil, err
	}
	cluster, err := a.readCluster(ctx, ref)
	if err != nil {
		if kube.IsNotFound(err) {
			return &Provisioning{ClusterGone: true}, nil
		}
		return nil, fmt.Errorf("reading Cluster %s: %w", ref, err)
	}
	p := &Provisioning{ClusterEndpointSet: cluster.Spec.ControlPlaneEndpoint.IsValid()}

	// A Cluster without an infrastructure cluster is ready as far as infrastructure goes (seed 003).
	infraRef, err := a.contractRef(cluster.Spec.InfrastructureRef, cluster.Namespace)
	if err != nil {
		return nil, err
	}
	hasInfra := infraRef != nil
	if hasInfra {
		infra, err := a.Kube.GetRef(ctx, infraRef, cluster.Namespace)
		switch {
		case kube.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading %s %s: %w", infraRef.Kind, infraRef.Name, err)
		default:
			st, err := contract.ReadInfraCluster(infra)
			if err != nil {
				return nil, invalid(err)
			}
			p.InfrastructureReady = st.Ready
			if st.Endpoint != nil {
				p.Endpoint = &Endpoint{Host: st.Endpoint.Host, Port: int32(st.Endpoint.Port), Source: infraRef.Kind + " " + infraRef.Name}
			}
			p.Failure = st.FailureMessage
		}
	}

	cp, err := a.referenced(ctx, cluster, cluster.Spec.ControlPlaneRef)
	if err != nil {
		return nil, err
	}
	if cp != nil {
		st, err := contract.ReadControlPlane(cp)
		if err != nil {
			return nil, invalid(err)
		}
		p.ControlPlaneInitialized = st.Initialized
		p.ControlPlaneReady = st.Ready
		p.ControlPlaneVersion = st.Version
		if p.Failure == "" {
			p.Failure = st.FailureMessage
		}
	}
	p.RefsSet = cluster.Spec.ControlPlaneRef.IsDefined() && (hasInfra || !in.HasInfrastructure)
	if !in.HasInfrastructure && p.RefsSet {
		p.InfrastructureReady = true
	}

	// A ClusterEndpoint (seed 003) takes precedence over the infrastructure cluster's endpoint.
	eps, err := a.Kube.List(ctx, kube.ClusterEndpoints, cluster.Namespace, "")
	if err != nil && !kube.IsNotFound(err) {
		return nil, fmt.Errorf("listing ClusterEndpoints: %w", err)
	}
	if err == nil {
		if ep := pickClusterEndpoint(eps, cluster.Name); ep != nil {
			p.Endpoint = ep
		}
	}
	if cluster.Spec.ControlPlaneEndpoint.IsValid() && p.Endpoint == nil {
		p.Endpoint = &Endpoint{Host: cluster.Spec.ControlPlaneEndpoint.Host, Port: cluster.Spec.ControlPlaneEndpoint.Port, Source: "Cluster spec"}
	}
	if a.ClusterController {
		if p.Counters, err = a.countersDigest(ctx, cluster, cp); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// countersDigest digests, for the control plane and the Cluster's pools (poolsOf, as
// clusterV1Beta2 reads them), what the v1beta2 counters and the conditions taken from them are
// computed from (replicaFacts).
func (a *Activities) countersDigest(ctx context.Context, cluster *hubv1.Cluster, cp *unstructured.Unstructured) (string, error) {
	mds, mps, err := a.poolsOf(ctx, cluster)
	if err != nil {
		return "", err
	}
	facts := []any{replicaFacts(cp)}
	for _, pools := range [][]unstructured.Unstructured{mds, mps} {
		for i := range pools {
			facts = append(facts, replicaFacts(&pools[i]))
		}
	}
	b, err := json.Marshal(facts)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// replicaStatusFields are the status fields of a control plane, MachineDeployment or MachinePool
// that the Cluster's v1beta2 counters, versions and conditions are computed from (either contract,
// either API version: status.v1beta2 holds a v1beta1 object's v1beta2 counters and conditions).
var replicaStatusFields = []string{"replicas", "readyReplicas", "availableReplicas", "unavailableReplicas", "updatedReplicas",
	"upToDateReplicas", "versions", "conditions", "v1beta2", "initialization", "initialized"}

// replicaFacts is what status.ClusterV1Beta2 reads of one object: its kind and name, spec.replicas
// and replicaStatusFields (nil for an object that is not there).
func replicaFacts(u *unstructured.Unstructured) any {
	if u == nil {
		return nil
	}
	st, _, _ := unstructured.NestedMap(u.Object, "status")
	facts := map[string]any{"kind": u.GetKind(), "name": u.GetName()}
	if r, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas"); found {
		facts["spec.replicas"] = r
	}
	for _, f := range replicaStatusFields {
		if v, ok := st[f]; ok {
			facts[f] = v
		}
	}
	return facts
}

func pickClusterEndpoint(items []unstructured.Unstructured, cluster string) *Endpoint {
	for i := range items {
		var ep clusterv1.ClusterEndpoint
		if _, err := decode.Lenient(&items[i], &ep); err != nil {
			continue
		}
		if ep.Spec.Cluster != cluster || ep.Spec.Host == "" || ep.Spec.Port == 0 {
			continue
		}
		if ep.Spec.Type != clusterv1.ClusterEndpointTypeAPIServer && ep.Spec.Type != "ExternalControlPlaneEndpoint" {
			continue
		}
		return &Endpoint{Host: ep.Spec.Host, Port: ep.Spec.Port, Source: "ClusterEndpoint " + ep.Name}
	}
	return nil
}

// StatusInput is the status a workflow wants the Cluster to show.
type StatusInput struct {
	Cluster             ClusterRef         `json:"cluster"`
	ObservedGeneration  int64              `json:"observedGeneration,omitempty"`
	Phase               string             `json:"phase"`
	InfrastructureReady bool               `json:"infrastructureReady"`
	ControlPlaneReady   bool               `json:"controlPlaneReady"`
	Conditions          []status.Condition `json:"conditions"`
	// Endpoint, when set and the Cluster has none yet, is copied to spec.controlPlaneEndpoint
	// (the Cluster controller's job in Cluster API, which topoflow also does).
	Endpoint *Endpoint `json:"endpoint,omitempty"`
	// UpgradePlan is the plan of the last decision, for status.controlPlane.upgradePlan and
	// status.workers.upgradePlan (v1beta2; status.v1beta2 in v1beta1). Nil when no pass computed
	// one yet: what the status holds is kept, as Cluster API keeps it when its plan failed.
	UpgradePlan *status.UpgradePlan `json:"upgradePlan,omitempty"`
}

// StatusFieldManager owns the Cluster status fields topoflow writes.
const StatusFieldManager = "topoflow"

// SetClusterStatus writes phase, readiness and conditions to the Cluster's status subresource,
// and, in the Cluster controller role, the v1beta2 conditions and replica counters
// (clusterV1Beta2), keeping condition transition times; it writes nothing when nothing would
// change. The status is written on the hub (v1beta2): the v1beta1 conditions under
// status.deprecated.v1beta1, readiness as status.initialization.
func (a *Activities) SetClusterStatus(ctx context.Context, in StatusInput) (bool, error) {
	ctx = kube.Report(ctx) // one write, not queued behind the fleet's applies
	cluster, err := a.readCluster(ctx, in.Cluster)
	if err != nil {
		if kube.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading Cluster %s: %w", in.Cluster, err)
	}
	// The plan to write: the decision's, or (none computed yet) what the status holds.
	have := currentPlan(cluster)
	plan := in.UpgradePlan
	if plan == nil {
		plan = have
	}
	samePlan := have.Equal(plan)
	if !a.ClusterController {
		return a.setTopologyCondition(ctx, cluster, in.Conditions, plan, samePlan)
	}
	wrote := false
	if ep := in.Endpoint; ep != nil && !cluster.Spec.ControlPlaneEndpoint.IsValid() {
		obj := clusterShell(cluster)
		obj.Object["spec"] = map[string]any{"controlPlaneEndpoint": map[string]any{"host": ep.Host, "port": int64(ep.Port)}}
		if _, err := a.Kube.Apply(ctx, obj, StatusFieldManager); err != nil {
			return false, err
		}
		wrote = true
	}
	next := roleFields{
		phase:          in.Phase,
		initialization: hubv1.ClusterInitializationStatus{InfrastructureProvisioned: trueOrNil(in.InfrastructureReady), ControlPlaneInitialized: trueOrNil(in.ControlPlaneReady)},
		generation:     cluster.Status.ObservedGeneration,
		v1beta1:        status.Merge(v1beta1Conditions(&cluster.Status), in.Conditions, time.Now()),
	}
	if in.ObservedGeneration > 0 {
		next.generation = in.ObservedGeneration
	}
	v1beta2, err := a.clusterV1Beta2(ctx, cluster, in)
	if err != nil {
		return wrote, err
	}
	if next.same(&cluster.Status) && samePlan && status.SameV1Beta2(&cluster.Status, v1beta2) {
		return wrote, nil
	}
	st, err := next.status(v1beta2, plan)
	if err != nil {
		return wrote, err
	}
	obj := clusterShell(cluster)
	obj.Object["status"] = st
	if _, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager); err != nil {
		return wrote, err
	}
	return true, nil
}

// setTopologyCondition writes only the TopologyReconciled condition (a keyed list: Cluster API's
// Cluster controller owns the other entries) and the upgrade plans, when Cluster API core runs
// beside topoflow: phase, readiness, endpoint and the other conditions are its. The v1beta1
// conditions list is atomic (one owner for the whole list), so topoflow leaves it to Cluster API.
func (a *Activities) setTopologyCondition(ctx context.Context, cluster *hubv1.Cluster, conds []status.Condition, plan *status.UpgradePlan, samePlan bool) (bool, error) {
	current := meta.FindStatusCondition(cluster.Status.Conditions, string(status.TopologyReconciled))
	next := current
	if i := slices.IndexFunc(conds, func(c status.Condition) bool { return c.Type == status.TopologyReconciled }); i >= 0 {
		n := status.V1Beta2(conds[i], current, cluster.Generation, time.Now())
		next = &n
	}
	if next == nil || (current != nil && current.Status == next.Status && current.Reason == next.Reason && current.Message == next.Message &&
		current.ObservedGeneration == next.ObservedGeneration && samePlan) {
		return false, nil
	}
	st, err := v1beta2Field(&hubv1.ClusterStatus{Conditions: []metav1.Condition{*next}}, plan)
	if err != nil {
		return false, err
	}
	obj := clusterShell(cluster)
	obj.Object["status"] = st
	if _, err := a.Kube.ApplyStatus(ctx, obj, StatusFieldManager); err != nil {
		return false, err
	}
	return true, nil
}

// roleFields are the status fields the Cluster controller role writes besides the v1beta2
// conditions and counters: the phase, the two initialization steps, the observed generation and
// the v1beta1 conditions (status.deprecated.v1beta1).
type roleFields struct {
	phase          string
	initialization hubv1.ClusterInitializationStatus
	generation     int64
	v1beta1        hubv1.V1Beta1Conditions
}

// same says the Cluster's status holds f already.
func (f roleFields) same(st *hubv1.ClusterStatus) bool {
	return f.phase == st.Phase && reflect.DeepEqual(f.initialization, st.Initialization) &&
		f.generation == st.ObservedGeneration && equality.Semantic.DeepEqual(f.v1beta1, v1beta1Conditions(st))
}

// status is the status the Cluster controller role applies: f, and the v1beta2 conditions and
// counters with the upgrade plans (v1beta2Field). A step not taken (initialization) is left out,
// as Cluster API's conversion of a v1beta1 false leaves it.
func (f roleFields) status(v1beta2 *hubv1.ClusterStatus, plan *status.UpgradePlan) (map[string]any, error) {
	conds := make([]any, 0, len(f.v1beta1))
	for _, c := range f.v1beta1 {
		m := map[string]any{"type": c.Type, "status": string(c.Status), "lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339)}
		if c.Severity != "" {
			m["severity"] = c.Severity
		}
		if c.Reason != "" {
			m["reason"] = c.Reason
		}
		if c.Message != "" {
			m["message"] = c.Message
		}
		conds = append(conds, m)
	}
	st, err := v1beta2Field(v1beta2, plan)
	if err != nil {
		return nil, err
	}
	st["phase"] = f.phase
	st["deprecated"] = map[string]any{"v1beta1": map[string]any{"conditions": conds}}
	init := map[string]any{}
	if f.initialization.InfrastructureProvisioned != nil {
		init["infrastructureProvisioned"] = true
	}
	if f.initialization.ControlPlaneInitialized != nil {
		init["controlPlaneInitialized"] = true
	}
	if len(init) > 0 {
		st["initialization"] = init
	}
	if f.generation > 0 {
		st["observedGeneration"] = f.generation
	}
	return st, nil
}

// v1beta1Conditions are the v1beta1 conditions a status keeps (status.deprecated.v1beta1).
func v1beta1Conditions(st *hubv1.ClusterStatus) hubv1.V1Beta1Conditions {
	if st.Deprecated == nil || st.Deprecated.V1Beta1 == nil {
		return nil
	}
	return st.Deprecated.V1Beta1.Conditions
}

// trueOrNil is a one-way step as v1beta2 holds it: set once taken, unset before.
func trueOrNil(b bool) *bool {
	if !b {
		return nil
	}
	return &b
}

// currentPlan is the upgrade plan the Cluster's status holds.
func currentPlan(cluster *hubv1.Cluster) *status.UpgradePlan {
	p := &status.UpgradePlan{}
	st := cluster.Status
	if st.ControlPlane != nil {
		for _, v := range st.ControlPlane.UpgradePlan {
			p.ControlPlane = append(p.ControlPlane, v.Version)
		}
	}
	if st.Workers != nil {
		for _, v := range st.Workers.UpgradePlan {
			p.Workers = append(p.Workers, v.Version)
		}
	}
	return p
}

func clusterShell(c *hubv1.Cluster) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": hubv1.GroupVersion.String(),
		"kind":       "Cluster",
		"metadata":   map[string]any{"name": c.Name, "namespace": c.Namespace},
	}}
	u.SetUID(c.UID) // an apply to a Cluster deleted since it was read is refused, not a create
	return u
}
