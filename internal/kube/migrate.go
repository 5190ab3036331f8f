package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// MigrateStorage rewrites every object of a CRD whose status.storedVersions names a version
// other than its storage version, so etcd holds them all in the storage version, then sets
// storedVersions to it alone: only then can an old version stop being served. It follows Cluster
// API's CRD migrator (controllers/crdmigrator, storage version phase): a merge patch carrying
// only the object's identity and resourceVersion, sent to the status subresource when the CRD has
// one (admission webhooks are not called there), changes nothing but makes the API server encode
// the object again; an object deleted or written meanwhile needs nothing more. It returns how many
// objects it rewrote (0 when storedVersions was already the storage version alone).
func (c *Client) MigrateStorage(ctx context.Context, crdName string) (int, error) {
	crd, err := c.Dynamic.Resource(CustomResourceDefinitions).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	var spec struct {
		Group string `json:"group"`
		Names struct {
			Plural string `json:"plural"`
			Kind   string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name         string         `json:"name"`
			Storage      bool           `json:"storage"`
			Subresources map[string]any `json:"subresources"`
		} `json:"versions"`
	}
	js, err := json.Marshal(crd.Object["spec"])
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(js, &spec); err != nil {
		return 0, fmt.Errorf("CRD %s: %w", crdName, err)
	}
	storage, hasStatus := "", false
	for _, v := range spec.Versions {
		if v.Storage {
			_, hasStatus = v.Subresources["status"]
			storage = v.Name
		}
	}
	if storage == "" {
		return 0, fmt.Errorf("CRD %s has no storage version", crdName)
	}
	stored, _, _ := unstructured.NestedStringSlice(crd.Object, "status", "storedVersions")
	if slices.Equal(stored, []string{storage}) {
		return 0, nil
	}

	gvr := schema.GroupVersionResource{Group: spec.Group, Version: storage, Resource: spec.Names.Plural}
	apiVersion := gvr.GroupVersion().String()
	var subresources []string
	if hasStatus {
		subresources = []string{"status"}
	}
	migrated, cont := 0, ""
	for {
		list, err := c.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return migrated, fmt.Errorf("listing %s: %w", gvr.Resource, err)
		}
		for _, o := range list.Items {
			patch, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": spec.Names.Kind,
				"metadata": map[string]any{"name": o.GetName(), "namespace": o.GetNamespace(), "resourceVersion": o.GetResourceVersion()}})
			if err != nil {
				return migrated, err
			}
			_, err = c.Dynamic.Resource(gvr).Namespace(o.GetNamespace()).Patch(ctx, o.GetName(), types.MergePatchType, patch,
				metav1.PatchOptions{FieldManager: "topoflow-storage-migration"}, subresources...)
			if err != nil && !IsNotFound(err) && !IsConflict(err) {
				return migrated, fmt.Errorf("rewriting %s %s/%s in %s: %w", spec.Names.Kind, o.GetNamespace(), o.GetName(), apiVersion, err)
			}
			migrated++
		}
		if cont = list.GetContinue(); cont == "" {
			break
		}
	}
	// With the CRD's resourceVersion: if it changed meanwhile (a new version added), the next
	// migration starts over.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": crd.GetResourceVersion()},
		"status": map[string]any{"storedVersions": []string{storage}}})
	if err != nil {
		return migrated, err
	}
	if _, err := c.Dynamic.Resource(CustomResourceDefinitions).Patch(ctx, crdName, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return migrated, fmt.Errorf("setting CRD %s status.storedVersions to [%s]: %w", crdName, storage, err)
	}
	return migrated, nil
}
