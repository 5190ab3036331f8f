package v1beta1

import (
	"errors"
	"fmt"
	"net"
)

// IP families of a Cluster's network, as builtin.cluster.network.ipFamily names them.
const (
	IPv4IPFamily      = "IPv4"
	IPv6IPFamily      = "IPv6"
	DualStackIPFamily = "DualStack"
	InvalidIPFamily   = "Invalid"
)

// IPFamily works out the Cluster's IP family from its pod and service CIDR blocks, with the
// rules of Cluster API's Cluster.GetIPFamily: no CIDRs at all is IPv4; one list alone decides;
// with both, dual-stack pods win, otherwise the two must agree. The error says which list is at
// fault; the family is then Invalid.
func (c *Cluster) IPFamily() (string, error) {
	var pods, services []string
	if n := c.Spec.ClusterNetwork; n != nil {
		if n.Pods != nil {
			pods = n.Pods.CIDRBlocks
		}
		if n.Services != nil {
			services = n.Services.CIDRBlocks
		}
	}
	if len(pods) == 0 && len(services) == 0 {
		return IPv4IPFamily, nil
	}
	podFamily, err := cidrFamily(pods)
	if err != nil {
		return InvalidIPFamily, fmt.Errorf("pods: %w", err)
	}
	if len(services) == 0 {
		return podFamily, nil
	}
	serviceFamily, err := cidrFamily(services)
	if err != nil {
		return InvalidIPFamily, fmt.Errorf("services: %w", err)
	}
	switch {
	case len(pods) == 0:
		return serviceFamily, nil
	case podFamily == DualStackIPFamily:
		return DualStackIPFamily, nil
	case podFamily != serviceFamily:
		return InvalidIPFamily, errors.New("pods and services IP family mismatch")
	}
	return podFamily, nil
}

func cidrFamily(cidrs []string) (string, error) {
	if len(cidrs) > 2 {
		return InvalidIPFamily, errors.New("too many CIDRs specified")
	}
	var v4, v6 bool
	for _, cidr := range cidrs {
		ip, _, err := net.ParseCIDR(cidr)
		if err != nil {
			return InvalidIPFamily, fmt.Errorf("could not parse CIDR: %w", err)
		}
		if ip.To4() != nil {
			v4 = true
		} else {
			v6 = true
		}
	}
	switch {
	case v4 && v6:
		return DualStackIPFamily, nil
	case v4:
		return IPv4IPFamily, nil
	case v6:
		return IPv6IPFamily, nil
	}
	return InvalidIPFamily, nil // an empty list; the other list decides
}
