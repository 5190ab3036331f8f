package v1beta1

import "k8s.io/apimachinery/pkg/util/intstr"

// Cluster API v1.14 computes a Cluster from its v1beta2 form, where a MachineDeployment's
// strategy.remediation.maxInFlight moved into the health check (healthCheck.remediation.maxInFlight)
// and a health check counts as defined when any of its v1beta2 fields is set. The helpers below
// answer "is a health check defined" the way v1.14 does after converting a v1beta1 object, so the
// desired state, validation and status agree with it.

// Defined says the check sets a field that survives the v1beta1 to v1beta2 conversion: a
// condition, a startup timeout, a remediation trigger or a remediation template. Empty lists, an
// empty unhealthyRange and an empty template reference convert to nothing. Nil is not defined.
func (m *MachineHealthCheckClass) Defined() bool {
	if m == nil {
		return false
	}
	return len(m.UnhealthyConditions) > 0 || len(m.UnhealthyMachineConditions) > 0 || m.NodeStartupTimeout != nil ||
		m.MaxUnhealthy != nil || (m.UnhealthyRange != nil && *m.UnhealthyRange != "") || remediationTemplateSet(m)
}

func remediationTemplateSet(m *MachineHealthCheckClass) bool {
	r := m.RemediationTemplate
	return r != nil && (r.APIVersion != "" || r.Kind != "" || r.Name != "")
}

// RemediationMaxInFlight is strategy.remediation.maxInFlight, nil when unset (or s is nil).
func (s *MachineDeploymentStrategy) RemediationMaxInFlight() *intstr.IntOrString {
	if s == nil || s.Remediation == nil {
		return nil
	}
	return s.Remediation.MaxInFlight
}

// HealthCheckDefined says the class defines a MachineHealthCheck as Cluster API v1.14 sees it:
// a defined machineHealthCheck, or strategy.remediation.maxInFlight alone (it converts to
// healthCheck.remediation.maxInFlight).
func (c *MachineDeploymentClass) HealthCheckDefined() bool {
	return c.MachineHealthCheck.Defined() || c.Strategy.RemediationMaxInFlight() != nil
}

// HealthCheckDefined says the topology overrides the class's MachineHealthCheck as Cluster API
// v1.14 sees it: a defined machineHealthCheck, or strategy.remediation.maxInFlight alone. An
// override replaces the class's checks and remediation as a whole.
func (t *MachineDeploymentTopology) HealthCheckDefined() bool {
	var own *MachineHealthCheckClass
	if t.MachineHealthCheck != nil {
		own = &t.MachineHealthCheck.MachineHealthCheckClass
	}
	return own.Defined() || t.Strategy.RemediationMaxInFlight() != nil
}
