package activities

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
)

// countingExtensions counts calls; fail makes them fail.
type countingExtensions struct {
	generates, validates int
	fail                 bool
}

func (c *countingExtensions) GeneratePatches(string, map[string]string, *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
	c.generates++
	if c.fail {
		return nil, errors.New("down")
	}
	return &hooksv1.GeneratePatchesResponse{CommonResponse: hooksv1.CommonResponse{Status: hooksv1.ResponseStatusSuccess}}, nil
}

func (c *countingExtensions) ValidateTopology(string, map[string]string, *hooksv1.ValidateTopologyRequest) error {
	c.validates++
	if c.fail {
		return errors.New("invalid")
	}
	return nil
}

func TestAnswerCache(t *testing.T) {
	now := time.Unix(1000, 0)
	cache := newAnswerCache()
	cache.now = func() time.Time { return now }
	next := &countingExtensions{}
	var notes []string
	ext := cachedExtensions{next: next, cache: cache, calls: &notes}
	req := func(tag string) *hooksv1.GeneratePatchesRequest {
		return &hooksv1.GeneratePatchesRequest{Variables: []hooksv1.Variable{{Name: tag}}}
	}
	settings := map[string]string{"a": "1"}

	for range 3 {
		_, err := ext.GeneratePatches("h.e", settings, req("x"))
		require.NoError(t, err)
		require.NoError(t, ext.ValidateTopology("v.e", settings, &hooksv1.ValidateTopologyRequest{}))
	}
	assert.Equal(t, 1, next.generates, "the same request is answered once")
	assert.Equal(t, 1, next.validates)
	assert.Equal(t, []string{
		"GeneratePatches h.e: 0 patch(es)", "ValidateTopology v.e: valid",
		"GeneratePatches h.e: 0 patch(es) (answer reused)", "ValidateTopology v.e: valid (answer reused)",
		"GeneratePatches h.e: 0 patch(es) (answer reused)", "ValidateTopology v.e: valid (answer reused)",
	}, notes, "each answer is noted for the activity's result")

	_, _ = ext.GeneratePatches("h.e", settings, req("y"))
	_, _ = ext.GeneratePatches("h.e", map[string]string{"a": "2"}, req("x"))
	_, _ = ext.GeneratePatches("other.e", settings, req("x"))
	assert.Equal(t, 4, next.generates, "another request, settings or handler is another answer")

	now = now.Add(answerTTL + time.Second)
	_, _ = ext.GeneratePatches("h.e", settings, req("x"))
	assert.Equal(t, 5, next.generates, "answers expire")

	next.fail = true
	for range 2 {
		_, err := ext.GeneratePatches("h.e", settings, req("z"))
		require.Error(t, err)
		require.Error(t, ext.ValidateTopology("v.e", settings, &hooksv1.ValidateTopologyRequest{Variables: []hooksv1.Variable{{Name: "z"}}}))
	}
	assert.Equal(t, 7, next.generates, "failures are not kept")
	assert.Equal(t, 3, next.validates)

	// No cache (a zero Activities): every call goes out.
	plain := cachedExtensions{next: &countingExtensions{}}
	_, _ = plain.GeneratePatches("h.e", nil, req("x"))
	_, _ = plain.GeneratePatches("h.e", nil, req("x"))
	assert.Equal(t, 2, plain.next.(*countingExtensions).generates)
}
