package names

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFromTemplate(t *testing.T) {
	cluster := Input{ClusterName: "prod"}
	md := Input{ClusterName: "prod", MachineDeploymentTopologyName: "md-0"}
	mp := Input{ClusterName: "prod", MachinePoolTopologyName: "mp-0"}
	for _, tc := range []struct {
		name, tmpl, def string
		in              Input
		want            string // regexp
		wantErr         string
	}{
		{"control plane default", "", DefaultControlPlaneTemplate, cluster, `^prod-[bcdfghjklmnpqrstvwxz2456789]{5}$`, ""},
		{"machine deployment default", "", DefaultMachineDeploymentTemplate, md, `^prod-md-0-[bcdfghjklmnpqrstvwxz2456789]{5}$`, ""},
		{"machine pool default", "", DefaultMachinePoolTemplate, mp, `^prod-mp-0-[bcdfghjklmnpqrstvwxz2456789]{5}$`, ""},
		{"custom without random", "{{ .cluster.name }}-cp", DefaultControlPlaneTemplate, cluster, `^prod-cp$`, ""},
		{"unknown key is an error", "{{ .cluster.nmae }}", "", cluster, "", "nmae"},
		{"pool name outside a pool is an error", "{{ .machineDeployment.topologyName }}", "", cluster, "", "machineDeployment"},
		{"unparsable", "{{ .cluster.name ", "", cluster, "", "parsing naming template"},
		{"invalid name", "{{ .cluster.name }}_Bad", "", cluster, "", "invalid name"},
		{"long names are cut to 58 plus 5 random", strings.Repeat("a", 70), "", cluster, `^a{58}[bcdfghjklmnpqrstvwxz2456789]{5}$`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromTemplate(tc.tmpl, tc.def, tc.in, NewRandom(1))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Regexp(t, tc.want, got)
			assert.LessOrEqual(t, len(got), 63)
		})
	}
}

func TestWithRandomSuffix(t *testing.T) {
	assert.Regexp(t, `^prod-md-0-[bcdfghjklmnpqrstvwxz2456789]{5}$`, WithRandomSuffix("prod-md-0-", NewRandom(3)))
	long := WithRandomSuffix(strings.Repeat("x", 80), NewRandom(3))
	assert.Len(t, long, 63)
	assert.True(t, strings.HasPrefix(long, strings.Repeat("x", 58)))
}

func TestSourceIsDeterministicPerKey(t *testing.T) {
	a, b := Source{Seed: 9}, Source{Seed: 9}
	assert.Equal(t, a.For("controlPlane").String(5), b.For("controlPlane").String(5))
	assert.NotEqual(t, a.For("controlPlane").String(12), a.For("infrastructureCluster").String(12))
	assert.NotEqual(t, Source{Seed: 1}.For("x").String(12), Source{Seed: 2}.For("x").String(12))
	assert.Equal(t, SeedFrom("uid-1"), SeedFrom("uid-1"))
	assert.NotEqual(t, SeedFrom("uid-1"), SeedFrom("uid-2"))
}
