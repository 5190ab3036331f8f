package revision

import (
	"fmt"
	"sort"
)

// Pin is one Cluster of a class and the revision annotation it carries.
type Pin struct {
	Cluster string // "namespace/name"
	Pin     string // PinAnnotation's value ("" when absent)
}

// HandBackRefusals says why Cluster API cannot take a class's Clusters back as they are: Cluster
// API computes every Cluster from the live class, so the newest revision must hold the live class
// (liveHash: its content's hash), and each Cluster must be on it. A class without revisions has
// nothing to refuse.
func HandBackRefusals(namespace, class, liveHash string, revisions []Recorded, clusters []Pin) []string {
	newest := Newest(revisions)
	if newest == nil {
		return nil
	}
	var out []string
	if newest.Hash != liveHash {
		out = append(out, fmt.Sprintf("ClusterClass %s/%s has changes its newest revision, %s, does not hold yet: wait until topoflow records them", namespace, class, newest.Name))
	}
	for _, c := range clusters {
		n, ok := PinnedTo(map[string]string{PinAnnotation: c.Pin}, class)
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("Cluster %s (ClusterClass %s/%s) is pinned to no revision of its class yet; the newest is %s", c.Cluster, namespace, class, newest.Name))
		case n != newest.Revision:
			out = append(out, fmt.Sprintf("Cluster %s is on revision %s of ClusterClass %s/%s, behind the newest, %s: move it with a Rollout (change.classRevision: latest)", c.Cluster, c.Pin, namespace, class, newest.Name))
		}
	}
	sort.Strings(out)
	return out
}
