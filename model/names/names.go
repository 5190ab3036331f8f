// Package names generates names for topology objects the way Cluster API does: a Go template
// naming strategy with .cluster.name, .random and the pool's topology name, and a
// "prefix + 5 random characters" scheme for cloned templates. Randomness is injected so tests
// and `plan --seed` are reproducible.
package names

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
)

// alphabet has no vowels (so no words) and no look-alike characters; it is the alphabet
// Kubernetes uses for generateName suffixes.
const alphabet = "bcdfghjklmnpqrstvwxz2456789"

const (
	maxNameLength = 63
	randomLength  = 5
)

// Random yields random suffixes.
type Random interface {
	String(n int) string
}

type seeded struct{ r *rand.Rand }

// NewRandom returns a Random that is deterministic for a seed.
func NewRandom(seed uint64) Random {
	return &seeded{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Source hands out one Random per object, keyed by the object's role in the topology (for
// example "machineDeployment/md-0/bootstrap"). Because every key gets its own stream derived
// from one seed, the name an object is given does not depend on which other objects already
// exist: a retried computation after a partial apply picks the same names again.
type Source struct{ Seed uint64 }

// For returns the Random for one object.
func (s Source) For(key string) Random {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	return NewRandom(s.Seed ^ h.Sum64())
}

// SeedFrom turns a string (a Cluster UID) into a seed.
func SeedFrom(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func (s *seeded) String(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[s.r.IntN(len(alphabet))]
	}
	return string(b)
}

// Default naming templates (book 002).
const (
	DefaultControlPlaneTemplate      = "{{ .cluster.name }}-{{ .random }}"
	DefaultInfraClusterTemplate      = "{{ .cluster.name }}-{{ .random }}"
	DefaultMachineDeploymentTemplate = "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}"
	DefaultMachinePoolTemplate       = "{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}"
)

// Input is what a naming template may reference.
type Input struct {
	ClusterName string
	// MachineDeploymentTopologyName or MachinePoolTopologyName is set for worker pools.
	MachineDeploymentTopologyName string
	MachinePoolTopologyName       string
}

// FromTemplate renders a naming strategy template. An empty template uses def. Names longer than
// 63 characters are cut to 58 and given 5 random characters, as Cluster API does.
func FromTemplate(tmpl, def string, in Input, r Random) (string, error) {
	if tmpl == "" {
		tmpl = def
	}
	t, err := template.New("name").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("parsing naming template %q: %w", tmpl, err)
	}
	data := map[string]any{
		"cluster": map[string]any{"name": in.ClusterName},
		"random":  r.String(randomLength),
	}
	if in.MachineDeploymentTopologyName != "" {
		data["machineDeployment"] = map[string]any{"topologyName": in.MachineDeploymentTopologyName}
	}
	if in.MachinePoolTopologyName != "" {
		data["machinePool"] = map[string]any{"topologyName": in.MachinePoolTopologyName}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering naming template %q: %w", tmpl, err)
	}
	name := b.String()
	if len(name) > maxNameLength {
		name = name[:maxNameLength-randomLength] + r.String(randomLength)
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("naming template %q produced invalid name %q: %s", tmpl, name, strings.Join(errs, "; "))
	}
	return name, nil
}

// WithRandomSuffix returns prefix + 5 random characters, cutting the prefix so the name fits
// in 63 characters (the generateName rule Cluster API uses for cloned templates).
func WithRandomSuffix(prefix string, r Random) string {
	if len(prefix) > maxNameLength-randomLength {
		prefix = prefix[:maxNameLength-randomLength]
	}
	return prefix + r.String(randomLength)
}
