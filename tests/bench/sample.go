package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/model/decode"
	"github.com/topoflow/topoflow/model/plan"
)

// sample is the sample ClusterClass (with its templates) and Cluster.
type sample struct {
	class    []*unstructured.Unstructured
	cluster0 *unstructured.Unstructured
	// perCluster is how many topology objects one sample Cluster has.
	perCluster int
}

func loadSample(root string) (*sample, error) {
	s := &sample{}
	for _, file := range []string{"deploy/samples/clusterclass.yaml", "deploy/samples/cluster.yaml"} {
		f, err := os.Open(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		docs, err := decode.Documents(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, d := range docs {
			switch d.GetKind() {
			case "":
			case "Cluster":
				s.cluster0 = d
			default:
				s.class = append(s.class, d)
			}
		}
	}
	if s.cluster0 == nil {
		return nil, fmt.Errorf("deploy/samples/cluster.yaml has no Cluster")
	}
	objs, err := s.topology("count", "default")
	if err != nil {
		return nil, err
	}
	s.perCluster = len(objs)
	return s, nil
}

func (s *sample) applyClass(ctx context.Context, kc *kube.Client, ns string) error {
	for _, d := range s.class {
		d = d.DeepCopy()
		d.SetNamespace(ns)
		if _, err := kc.Apply(ctx, d, fieldManager); err != nil {
			return err
		}
	}
	return nil
}

func (s *sample) cluster(name, ns string) *unstructured.Unstructured {
	c := s.cluster0.DeepCopy()
	c.SetName(name)
	c.SetNamespace(ns)
	return c
}

// topology computes the topology objects of the sample Cluster under a name (plan.Compute, as
// `starter plan -f` does): what topoflow writes for it, the Cluster itself left out.
func (s *sample) topology(name, ns string) ([]*unstructured.Unstructured, error) {
	var docs []*unstructured.Unstructured
	for _, d := range s.class {
		d = d.DeepCopy()
		d.SetNamespace(ns)
		docs = append(docs, d)
	}
	docs = append(docs, s.cluster(name, ns))
	in, err := plan.FromObjects(docs, 1)
	if err != nil {
		return nil, err
	}
	res, err := plan.Compute(in)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, o := range res.Objects {
		if o.GetKind() == "Cluster" {
			continue
		}
		ann := o.GetAnnotations()
		delete(ann, plan.ActionAnnotation)
		o.SetAnnotations(ann)
		out = append(out, o)
	}
	return out, nil
}

// rawResult is the API server's own apply rate.
type rawResult struct {
	Objects, Workers int
	Took             time.Duration
}

func (r rawResult) Rate() float64 { return float64(r.Objects) / r.Took.Seconds() }

// rawApply server-side applies the topology objects of n sample Clusters (built beforehand) with
// `workers` appliers, then deletes them.
func rawApply(ctx context.Context, kc *kube.Client, s *sample, ns string, n, workers int) (rawResult, error) {
	if err := applyNamespace(ctx, kc, ns); err != nil {
		return rawResult{}, err
	}
	defer deleteAll(context.Background(), kc, ns)
	var objs []*unstructured.Unstructured
	gvrs := map[string]schema.GroupVersionResource{}
	for i := range n {
		topo, err := s.topology(fmt.Sprintf("raw%04d", i), ns)
		if err != nil {
			return rawResult{}, err
		}
		for _, o := range topo {
			if _, ok := gvrs[o.GetAPIVersion()+o.GetKind()]; !ok {
				gvr, err := kc.ResourceFor(o.GetAPIVersion(), o.GetKind())
				if err != nil {
					return rawResult{}, err
				}
				gvrs[o.GetAPIVersion()+o.GetKind()] = gvr
			}
			// Status and owner references are not part of an apply.
			delete(o.Object, "status")
			o.SetOwnerReferences(nil)
		}
		objs = append(objs, topo...)
	}
	start := time.Now()
	err := parallel(ctx, workers, len(objs), func(i int) error {
		_, err := kc.Apply(ctx, objs[i], fieldManager)
		return err
	})
	if err != nil {
		return rawResult{}, err
	}
	return rawResult{Objects: len(objs), Workers: workers, Took: time.Since(start)}, nil
}
