package main

import (
	"context"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topoflow/topoflow/internal/admission"
	"github.com/topoflow/topoflow/internal/kube"
)

// storageMigrations are the CRDs whose storage version the worker keeps migrated: ClusterClasses
// and ExtensionConfigs always (Cluster API core migrates them only with its ClusterTopology and
// RuntimeSDK gates on, which are off beside topoflow), Clusters when topoflow converts them
// (deploy/crds-v1beta2; otherwise Cluster API core does).
func storageMigrations(ctx context.Context, k *kube.Client) ([]string, error) {
	names := []string{"clusterclasses.cluster.x-k8s.io", "extensionconfigs.runtime.cluster.x-k8s.io"}
	crd, err := k.Dynamic.Resource(kube.CustomResourceDefinitions).Get(ctx, "clusters.cluster.x-k8s.io", metav1.GetOptions{})
	if err != nil && !kube.IsNotFound(err) {
		return nil, err
	}
	if err == nil && crd.GetLabels()[admission.ConversionLabel] == "true" {
		names = append(names, crd.GetName())
	}
	return names, nil
}

// migrateStorage runs the storage version migration of storageMigrations once at start, again
// every retry until every one has succeeded (the conversion webhook it may need is served by
// this worker and can take a moment), or ctx ends.
func migrateStorage(ctx context.Context, k *kube.Client, log *slog.Logger, retry time.Duration) {
	done := map[string]bool{}
	for {
		names, err := storageMigrations(ctx, k)
		if err != nil {
			log.Warn("storage version migration: reading CRDs", "error", err)
		}
		pending := 0
		for _, name := range names {
			if done[name] {
				continue
			}
			n, err := k.MigrateStorage(ctx, name)
			switch {
			case kube.IsNotFound(err):
				done[name] = true // not installed
			case err != nil:
				pending++
				log.Warn("storage version migration failed; retrying", "crd", name, "error", err, "retryIn", retry)
			default:
				done[name] = true
				if n > 0 {
					log.Info("storage version migrated", "crd", name, "objects", n)
				}
			}
		}
		if err == nil && pending == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
	}
}
