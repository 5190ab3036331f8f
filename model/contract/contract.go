// Package contract reads and writes the fields that Cluster API's provider contracts define on
// provider objects, which topoflow keeps unstructured (their schemas belong to the providers).
package contract

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Path is a field path in an unstructured object.
type Path []string

func (p Path) String() string {
	s := ""
	for _, e := range p {
		s += "." + e
	}
	return s
}

// Contract paths of a control plane object.
var (
	ControlPlaneVersion           = Path{"spec", "version"}
	ControlPlaneReplicas          = Path{"spec", "replicas"}
	ControlPlaneMachineTemplate   = Path{"spec", "machineTemplate"}
	ControlPlaneInfrastructureRef = Path{"spec", "machineTemplate", "infrastructureRef"}
	ControlPlaneMachineMetadata   = Path{"spec", "machineTemplate", "metadata"}
	ControlPlaneMachineTaints     = Path{"spec", "machineTemplate", "taints"}
	ControlPlaneReadinessGates    = Path{"spec", "machineTemplate", "readinessGates"}
	ControlPlaneRolloutAfter      = Path{"spec", "rollout", "after"}
	ControlPlaneStatusVersion     = Path{"status", "version"}
	ControlPlaneStatusReplicas    = Path{"status", "replicas"}
	ControlPlaneStatusUpdated     = Path{"status", "updatedReplicas"}
	ControlPlaneStatusReady       = Path{"status", "readyReplicas"}
	ControlPlaneStatusUnavailable = Path{"status", "unavailableReplicas"}
	ControlPlaneStatusInitialized = Path{"status", "initialized"}
	ControlPlaneStatusReadyFlag   = Path{"status", "ready"}
	ControlPlaneStatusObservedGen = Path{"status", "observedGeneration"}
	InfraClusterStatusReady       = Path{"status", "ready"}
	// The v1beta2 contract (Cluster API v1.11+) moved readiness under status.initialization and
	// counts up-to-date and available replicas instead of updated and unavailable ones
	// (Cluster API internal/contract: Initialized, UpToDateReplicas, AvailableReplicas).
	StatusInitialization                 = Path{"status", "initialization"}
	InfraClusterStatusProvisioned        = Path{"status", "initialization", "provisioned"}
	ControlPlaneStatusInitializedV1Beta2 = Path{"status", "initialization", "controlPlaneInitialized"}
	ControlPlaneStatusUpToDate           = Path{"status", "upToDateReplicas"}
	ControlPlaneStatusAvailable          = Path{"status", "availableReplicas"}
	InfraClusterEndpoint                 = Path{"spec", "controlPlaneEndpoint"}
	ProviderFailureReason                = Path{"status", "failureReason"}
	ProviderFailureMessage               = Path{"status", "failureMessage"}
	TemplateSpec                         = Path{"spec", "template", "spec"}
	TemplateMetadata                     = Path{"spec", "template", "metadata"}
	TemplateLabels                       = Path{"spec", "template", "metadata", "labels"}
	TemplateAnnotations                  = Path{"spec", "template", "metadata", "annotations"}
)

// String returns the string at p; ok is false when absent. A value of another type is an error.
func String(u *unstructured.Unstructured, p Path) (string, bool, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, p...)
	if err != nil || !ok || v == nil {
		return "", false, wrap(u, p, err)
	}
	s, isString := v.(string)
	if !isString {
		return "", false, fmt.Errorf("%s %s: field %s is %T, want string", u.GetKind(), u.GetName(), p, v)
	}
	return s, true, nil
}

// Bool returns the bool at p; absent is false.
func Bool(u *unstructured.Unstructured, p Path) (bool, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, p...)
	if err != nil || !ok || v == nil {
		return false, wrap(u, p, err)
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Errorf("%s %s: field %s is %T, want bool", u.GetKind(), u.GetName(), p, v)
	}
	return b, nil
}

// Int64 returns the integer at p; ok is false when absent. JSON numbers may arrive as int64 or float64.
func Int64(u *unstructured.Unstructured, p Path) (int64, bool, error) {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, p...)
	if err != nil || !ok || v == nil {
		return 0, false, wrap(u, p, err)
	}
	switch n := v.(type) {
	case int64:
		return n, true, nil
	case int32:
		return int64(n), true, nil
	case int:
		return int64(n), true, nil
	case float64:
		if n != float64(int64(n)) {
			return 0, false, fmt.Errorf("%s %s: field %s is %v, want an integer", u.GetKind(), u.GetName(), p, n)
		}
		return int64(n), true, nil
	default:
		return 0, false, fmt.Errorf("%s %s: field %s is %T, want integer", u.GetKind(), u.GetName(), p, v)
	}
}

// ObjectRef returns the object reference at p, or nil when absent.
func ObjectRef(u *unstructured.Unstructured, p Path) (*corev1.ObjectReference, error) {
	m, ok, err := unstructured.NestedMap(u.Object, p...)
	if err != nil || !ok {
		return nil, wrap(u, p, err)
	}
	ref := &corev1.ObjectReference{}
	ref.APIVersion, _ = m["apiVersion"].(string)
	ref.Kind, _ = m["kind"].(string)
	ref.Name, _ = m["name"].(string)
	ref.Namespace, _ = m["namespace"].(string)
	if ref.Kind == "" || ref.Name == "" {
		return nil, fmt.Errorf("%s %s: field %s must have kind and name", u.GetKind(), u.GetName(), p)
	}
	return ref, nil
}

// MachineTemplateRefs returns the infrastructure and bootstrap references of an object holding a
// machine template (spec.template.spec), such as a MachineSet read without its full schema.
func MachineTemplateRefs(u *unstructured.Unstructured) []*corev1.ObjectReference {
	var out []*corev1.ObjectReference
	for _, p := range []Path{{"spec", "template", "spec", "infrastructureRef"}, {"spec", "template", "spec", "bootstrap", "configRef"}} {
		if r, err := ObjectRef(u, p); err == nil && r != nil {
			out = append(out, r)
		}
	}
	return out
}

// Set sets the value at p, creating parents.
func Set(u *unstructured.Unstructured, p Path, value any) error {
	return wrap(u, p, unstructured.SetNestedField(u.Object, value, p...))
}

// SetRef sets an object reference at p in the shape Cluster API writes (apiVersion, kind, name, namespace).
func SetRef(u *unstructured.Unstructured, p Path, ref *corev1.ObjectReference) error {
	m := map[string]any{"apiVersion": ref.APIVersion, "kind": ref.Kind, "name": ref.Name}
	if ref.Namespace != "" {
		m["namespace"] = ref.Namespace
	}
	return Set(u, p, m)
}

func wrap(u *unstructured.Unstructured, p Path, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: field %s: %w", u.GetKind(), u.GetName(), p, err)
}

// ControlPlaneState is what the control plane contract says about progress.
type ControlPlaneState struct {
	// Version is status.version: the lowest version any control plane machine runs.
	Version string
	// DesiredVersion is spec.version.
	DesiredVersion string
	Initialized    bool
	Ready          bool
	// Replicas, Updated, ReadyReplicas, Unavailable are nil when the provider does not report them.
	Replicas, Updated, ReadyReplicas, Unavailable *int64
	// DesiredReplicas is spec.replicas (nil when the provider has no replicas).
	DesiredReplicas    *int64
	Generation         int64
	ObservedGeneration int64
	FailureMessage     string
}

// ReadControlPlane reads the contract fields of a control plane object.
func ReadControlPlane(u *unstructured.Unstructured) (ControlPlaneState, error) {
	var s ControlPlaneState
	var err error
	if s.Version, _, err = String(u, ControlPlaneStatusVersion); err != nil {
		return s, err
	}
	if s.DesiredVersion, _, err = String(u, ControlPlaneVersion); err != nil {
		return s, err
	}
	v1beta2 := hasV1Beta2Status(u)
	initialized, updated, unavailable := ControlPlaneStatusInitialized, ControlPlaneStatusUpdated, ControlPlaneStatusUnavailable
	if v1beta2 {
		initialized, updated, unavailable = ControlPlaneStatusInitializedV1Beta2, ControlPlaneStatusUpToDate, nil
	}
	if s.Initialized, err = Bool(u, initialized); err != nil {
		return s, err
	}
	var available *int64
	for _, f := range []struct {
		p   Path
		dst **int64
	}{
		{ControlPlaneStatusReplicas, &s.Replicas},
		{updated, &s.Updated},
		{ControlPlaneStatusReady, &s.ReadyReplicas},
		{unavailable, &s.Unavailable},
		{ControlPlaneStatusAvailable, &available},
		{ControlPlaneReplicas, &s.DesiredReplicas},
	} {
		if f.p == nil {
			continue
		}
		n, ok, err := Int64(u, f.p)
		if err != nil {
			return s, err
		}
		if ok {
			*f.dst = &n
		}
	}
	if v1beta2 {
		// No ready flag in the v1beta2 contract: ready is initialized with every replica
		// available; unavailable replicas are those not available (all of them when not reported).
		var replicas, avail int64
		if s.Replicas != nil {
			replicas = *s.Replicas
		}
		if available != nil {
			avail = *available
		}
		unavail := max(replicas-avail, 0)
		s.Unavailable = &unavail
		s.Ready = s.Initialized && available != nil && unavail == 0
	} else if s.Ready, err = Bool(u, ControlPlaneStatusReadyFlag); err != nil {
		return s, err
	}
	s.Generation = u.GetGeneration()
	if og, ok, err := Int64(u, ControlPlaneStatusObservedGen); err != nil {
		return s, err
	} else if ok {
		s.ObservedGeneration = og
	}
	s.FailureMessage, _, _ = String(u, ProviderFailureMessage)
	return s, nil
}

// IsScaling reports whether the control plane's replica counts have not caught up with spec.
func (s ControlPlaneState) IsScaling() bool {
	if s.DesiredReplicas == nil {
		return false
	}
	eq := func(p *int64) bool { return p != nil && *p == *s.DesiredReplicas }
	return !eq(s.Replicas) || !eq(s.Updated) || !eq(s.ReadyReplicas) || (s.Unavailable != nil && *s.Unavailable != 0)
}

// Stable reports whether the control plane is initialized, not scaling, and has observed its
// latest spec: what Cluster API's topology controller requires before it moves the workers on.
func (s ControlPlaneState) Stable() bool {
	return s.Initialized && !s.IsScaling() && (s.ObservedGeneration == 0 || s.ObservedGeneration >= s.Generation)
}

// IsUpgrading reports whether the control plane has not yet reached its desired version.
func (s ControlPlaneState) IsUpgrading() bool {
	return s.DesiredVersion != "" && s.Version != s.DesiredVersion
}

// InfraClusterState is what the infrastructure cluster contract says about progress.
type InfraClusterState struct {
	Ready          bool
	Endpoint       *EndpointValue
	FailureMessage string
}

// EndpointValue is a host:port from spec.controlPlaneEndpoint.
type EndpointValue struct {
	Host string
	Port int64
}

// ReadInfraCluster reads the contract fields of an infrastructure cluster object.
func ReadInfraCluster(u *unstructured.Unstructured) (InfraClusterState, error) {
	var s InfraClusterState
	var err error
	ready := InfraClusterStatusReady
	if hasV1Beta2Status(u) {
		ready = InfraClusterStatusProvisioned
	}
	if s.Ready, err = Bool(u, ready); err != nil {
		return s, err
	}
	host, _, err := String(u, append(InfraClusterEndpoint, "host"))
	if err != nil {
		return s, err
	}
	port, _, err := Int64(u, append(InfraClusterEndpoint, "port"))
	if err != nil {
		return s, err
	}
	if host != "" && port != 0 {
		s.Endpoint = &EndpointValue{Host: host, Port: port}
	}
	s.FailureMessage, _, _ = String(u, ProviderFailureMessage)
	return s, nil
}

// hasV1Beta2Status says whether a provider object reports status by the v1beta2 contract. Its
// API version does not tell (a provider's v1beta2 may implement the v1beta1 contract), but the
// v1beta2 contract's status.initialization does, and v1beta1 objects never have it. Before the
// provider reports anything both read as not ready.
func hasV1Beta2Status(u *unstructured.Unstructured) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(u.Object, StatusInitialization...)
	return found
}
