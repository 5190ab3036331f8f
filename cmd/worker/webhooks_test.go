package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/validation"
)

// TestParseGates: --feature-gates as Cluster API's flag; unknown gates and non-booleans are
// errors naming them.
func TestParseGates(t *testing.T) {
	g, err := parseGates("")
	require.NoError(t, err)
	assert.Equal(t, validation.Gates{}, g)
	g, err = parseGates("MachineTaintPropagation=true")
	require.NoError(t, err)
	assert.True(t, g.MachineTaintPropagation)
	_, err = parseGates("ClusterTopology=true")
	assert.EqualError(t, err, `--feature-gates: unknown gate "ClusterTopology" (known: MachineTaintPropagation)`)
	_, err = parseGates("MachineTaintPropagation=yes")
	assert.EqualError(t, err, `--feature-gates: MachineTaintPropagation: want true or false, got "yes"`)
}
