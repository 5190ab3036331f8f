package kube

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/spec3"
)

// schemas types objects for the no-op check (model/ssa) with the API server's own OpenAPI v3
// schemas, one document per group version, fetched when first needed. A document older than
// schemaMaxAge, or one without the kind asked for (a CRD installed or changed since), is fetched
// again.
type schemas struct {
	cfg *rest.Config
	log *slog.Logger

	mu   sync.Mutex
	byGV map[schema.GroupVersion]typedGV
}

type typedGV struct {
	tc      managedfields.TypeConverter
	kinds   map[string]bool
	fetched time.Time
}

const (
	schemaMaxAge = 10 * time.Minute
	// schemaRetry: a document without the kind asked for is fetched again after this long.
	schemaRetry = 30 * time.Second
)

func newSchemas(cfg *rest.Config, log *slog.Logger) *schemas {
	return &schemas{cfg: cfg, log: log, byGV: map[schema.GroupVersion]typedGV{}}
}

// converter returns a type converter that knows gvk.
func (s *schemas) converter(gv schema.GroupVersion, gvk schema.GroupVersionKind) (managedfields.TypeConverter, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.byGV[gv]; ok && time.Since(t.fetched) < schemaMaxAge {
		switch {
		case t.kinds[gvk.Kind]:
			return t.tc, nil
		case time.Since(t.fetched) < schemaRetry:
			return nil, fmt.Errorf("the OpenAPI schema of %s has no kind %s", gv, gvk.Kind)
		}
	}
	t, err := s.fetch(gv)
	if err != nil {
		return nil, err
	}
	s.byGV[gv] = t
	if !t.kinds[gvk.Kind] {
		return nil, fmt.Errorf("the OpenAPI schema of %s has no kind %s", gv, gvk.Kind)
	}
	return t.tc, nil
}

func (s *schemas) fetch(gv schema.GroupVersion) (typedGV, error) {
	disco, err := discovery.NewDiscoveryClientForConfig(s.cfg)
	if err != nil {
		return typedGV{}, err
	}
	paths, err := disco.OpenAPIV3().Paths()
	if err != nil {
		return typedGV{}, fmt.Errorf("OpenAPI v3 paths: %w", err)
	}
	path := "apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "api/" + gv.Version
	}
	doc, ok := paths[path]
	if !ok {
		return typedGV{}, fmt.Errorf("no OpenAPI v3 document for %s", gv)
	}
	raw, err := doc.Schema(runtime.ContentTypeJSON)
	if err != nil {
		return typedGV{}, fmt.Errorf("OpenAPI v3 document for %s: %w", gv, err)
	}
	var spec spec3.OpenAPI
	if err := json.Unmarshal(raw, &spec); err != nil {
		return typedGV{}, fmt.Errorf("decoding the OpenAPI v3 document for %s: %w", gv, err)
	}
	if spec.Components == nil {
		return typedGV{}, fmt.Errorf("the OpenAPI v3 document for %s has no schemas", gv)
	}
	kinds := map[string]bool{}
	for _, sch := range spec.Components.Schemas {
		gvks, _ := sch.Extensions["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			m, _ := g.(map[string]any)
			if m["group"] == gv.Group && m["version"] == gv.Version {
				if k, ok := m["kind"].(string); ok {
					kinds[k] = true
				}
			}
		}
	}
	tc, err := managedfields.NewTypeConverter(spec.Components.Schemas, false)
	if err != nil {
		return typedGV{}, fmt.Errorf("typing the schemas of %s: %w", gv, err)
	}
	s.log.Debug("fetched OpenAPI schema", "groupVersion", gv.String(), "kinds", len(kinds))
	return typedGV{tc: tc, kinds: kinds, fetched: time.Now()}, nil
}
