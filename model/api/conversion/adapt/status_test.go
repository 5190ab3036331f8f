package adapt_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topoflow/topoflow/model/api/conversion/adapt"
	"github.com/topoflow/topoflow/model/api/v1beta1"
)

// Property: on random Clusters, a v1beta1 conditions list converts as ClusterToHub converts it
// (held against Cluster API's conversion above) and back to itself.
func TestStatusAdaptersRoundTrip(t *testing.T) {
	for seed := int64(0); seed < 300; seed++ {
		var c v1beta1.Cluster
		testFiller(seed, 16).Fill(reflect.ValueOf(&c).Elem(), 0)
		c.Spec.InfrastructureRef, c.Spec.ControlPlaneRef = nil, nil // apiVersions that parse
		hub, err := adapt.ClusterToHub(&c)
		require.NoError(t, err)

		conds := adapt.ConditionsToHub(c.Status.Conditions)
		if c.Status.Conditions != nil {
			require.NotNil(t, hub.Status.Deprecated, "seed %d", seed)
			assert.Equal(t, hub.Status.Deprecated.V1Beta1.Conditions, conds, "seed %d", seed)
		}
		assert.Equal(t, c.Status.Conditions, adapt.ConditionsFromHub(conds), "seed %d", seed)
	}
	assert.Nil(t, adapt.ConditionsToHub(nil))
	assert.Nil(t, adapt.ConditionsFromHub(nil))
}
