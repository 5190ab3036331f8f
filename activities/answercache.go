package activities

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	hooksv1 "github.com/topoflow/topoflow/model/api/hooks/v1alpha1"
	"github.com/topoflow/topoflow/model/patches"
	"github.com/topoflow/topoflow/model/upgrade"
)

// answerTTL bounds how long an external patch answer is reused: long enough to cover one pass
// (which computes the topology once per apply scope), short enough that a new extension release
// takes effect at once.
const answerTTL = 30 * time.Second

// answerCacheSize bounds the cache; when full, expired entries go, then everything.
const answerCacheSize = 1024

// answerCache keeps external patch answers briefly, keyed by hook, handler, settings and the whole
// request. Cluster API's contract for external patches is that the same request always gets the
// same answer, so a second computation of an unchanged topology need not call the extension again.
// Only successful answers are kept. A nil cache keeps nothing.
type answerCache struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]cachedAnswer
}

type cachedAnswer struct {
	at       time.Time
	generate *hooksv1.GeneratePatchesResponse // nil for a ValidateTopology success
	plan     *upgrade.ExternalPlan            // a checked GenerateUpgradePlan answer
}

func newAnswerCache() *answerCache {
	return &answerCache{now: time.Now, entries: map[string]cachedAnswer{}}
}

func answerKey(hook, handler string, settings map[string]string, req any) (string, error) {
	js, err := json.Marshal(struct {
		Hook, Handler string
		Settings      map[string]string // encoding/json sorts map keys
		Request       any
	}{hook, handler, settings, req})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(js)
	return hex.EncodeToString(sum[:]), nil
}

func (c *answerCache) get(key string) (cachedAnswer, bool) {
	if c == nil {
		return cachedAnswer{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	a, ok := c.entries[key]
	if !ok || c.now().Sub(a.at) > answerTTL {
		return cachedAnswer{}, false
	}
	return a, true
}

func (c *answerCache) put(key string, a cachedAnswer) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= answerCacheSize {
		for k, e := range c.entries {
			if now.Sub(e.at) > answerTTL {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= answerCacheSize {
			c.entries = map[string]cachedAnswer{}
		}
	}
	a.at = now
	c.entries[key] = a
}

// cachedExtensions serves external patches from the cache, calling next on a miss, and notes
// each answer in calls (when set) for the activity's result.
type cachedExtensions struct {
	next  patches.Extensions
	cache *answerCache
	calls *[]string
}

func (c cachedExtensions) note(format string, args ...any) {
	if c.calls != nil {
		*c.calls = append(*c.calls, fmt.Sprintf(format, args...))
	}
}

func reused(hit bool) string {
	if hit {
		return " (answer reused)"
	}
	return ""
}

func (c cachedExtensions) GeneratePatches(handler string, settings map[string]string, req *hooksv1.GeneratePatchesRequest) (*hooksv1.GeneratePatchesResponse, error) {
	key, err := answerKey(hooksv1.GeneratePatches, handler, settings, req)
	if err != nil {
		return nil, err
	}
	resp, hit := (*hooksv1.GeneratePatchesResponse)(nil), false
	if a, ok := c.cache.get(key); ok {
		resp, hit = a.generate, true
	} else {
		if resp, err = c.next.GeneratePatches(handler, settings, req); err != nil {
			return nil, err
		}
		if resp != nil {
			c.cache.put(key, cachedAnswer{generate: resp})
		}
	}
	if resp == nil {
		c.note("GeneratePatches %s: no answer (failurePolicy Ignore)", handler)
	} else {
		c.note("GeneratePatches %s: %d patch(es)%s", handler, len(resp.Items), reused(hit))
	}
	return resp, nil
}

func (c cachedExtensions) ValidateTopology(handler string, settings map[string]string, req *hooksv1.ValidateTopologyRequest) error {
	key, err := answerKey(hooksv1.ValidateTopology, handler, settings, req)
	if err != nil {
		return err
	}
	_, hit := c.cache.get(key)
	if !hit {
		if err := c.next.ValidateTopology(handler, settings, req); err != nil {
			return err
		}
		c.cache.put(key, cachedAnswer{})
	}
	c.note("ValidateTopology %s: valid%s", handler, reused(hit))
	return nil
}
