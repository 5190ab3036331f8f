// Command sdkextension is a Runtime Extension built on Cluster API v1.14.2's own Runtime SDK
// (exp/runtime/server and the hook types of its API module), for the real-providers profile:
// it shows that an extension written for Cluster API answers topoflow unchanged and reads the
// Cluster topoflow sends in the types it was built with (v1beta2 since Cluster API v1.13).
//
// It serves every lifecycle hook. Each blocking hook named in --block-first answers "retry"
// once per Cluster and version; BeforeClusterDelete keeps answering "retry" for
// --block-delete-for after its first call. Every call is recorded with what the SDK decoded
// from it, and GET /calls returns the record (JSON), so a test can check order and content.
//
// It is its own Go module so topoflow's module does not take on Cluster API's controller-runtime
// dependencies; deploy/capi/build.sh builds it into the tools cache.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimecatalog "sigs.k8s.io/cluster-api/api/runtime/catalog"
	runtimehooksv1 "sigs.k8s.io/cluster-api/api/runtime/hooks/v1alpha1"
	"sigs.k8s.io/cluster-api/exp/runtime/server"
)

// Call is one request as the SDK decoded it, and the answer sent.
type Call struct {
	Hook string    `json:"hook"`
	At   time.Time `json:"at"`
	// Cluster is "<namespace>/<name>"; the other Cluster fields are read from the v1beta2 type.
	Cluster           string `json:"cluster"`
	ClusterAPIVersion string `json:"clusterAPIVersion"`
	ClassRef          string `json:"classRef"`
	TopologyVersion   string `json:"topologyVersion"`
	InfrastructureRef string `json:"infrastructureRef,omitempty"` // apiGroup/kind/name
	ControlPlaneRef   string `json:"controlPlaneRef,omitempty"`
	HasStatus         bool   `json:"hasStatus,omitempty"`
	// Version is the request's kubernetesVersion, else its toKubernetesVersion.
	Version              string   `json:"version,omitempty"`
	FromVersion          string   `json:"fromVersion,omitempty"`
	ControlPlaneUpgrades []string `json:"controlPlaneUpgrades,omitempty"`
	WorkersUpgrades      []string `json:"workersUpgrades,omitempty"`
	RetryAfterSeconds    int32    `json:"retryAfterSeconds,omitempty"`
}

type recorder struct {
	mu          sync.Mutex
	calls       []Call
	blockFirst  map[string]bool
	blocked     map[string]bool
	retryAfter  int32
	deleteFor   time.Duration
	deleteSince map[string]time.Time
}

// answer records a call and says how long the caller should wait (0: go on).
func (r *recorder) answer(c Call, cluster *clusterv1.Cluster) int32 {
	c.At = time.Now()
	c.Cluster = cluster.Namespace + "/" + cluster.Name
	c.ClusterAPIVersion = cluster.APIVersion
	c.ClassRef = cluster.Spec.Topology.ClassRef.Name
	c.TopologyVersion = cluster.Spec.Topology.Version
	c.InfrastructureRef = ref(cluster.Spec.InfrastructureRef)
	c.ControlPlaneRef = ref(cluster.Spec.ControlPlaneRef)
	c.HasStatus = cluster.Status.Phase != "" || len(cluster.Status.Conditions) > 0
	r.mu.Lock()
	defer r.mu.Unlock()
	key := c.Hook + "|" + c.Cluster + "|" + c.Version
	switch {
	case c.Hook == runtimecatalog.HookName(runtimehooksv1.BeforeClusterDelete) && r.deleteFor > 0:
		if _, ok := r.deleteSince[c.Cluster]; !ok {
			r.deleteSince[c.Cluster] = c.At
		}
		if c.At.Sub(r.deleteSince[c.Cluster]) < r.deleteFor {
			c.RetryAfterSeconds = r.retryAfter
		}
	case r.blockFirst[c.Hook] && !r.blocked[key]:
		r.blocked[key] = true
		c.RetryAfterSeconds = r.retryAfter
	}
	r.calls = append(r.calls, c)
	return c.RetryAfterSeconds
}

func ref(r clusterv1.ContractVersionedObjectReference) string {
	if !r.IsDefined() {
		return ""
	}
	return r.APIGroup + "/" + r.Kind + "/" + r.Name
}

func versions(steps []runtimehooksv1.UpgradeStepInfo) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Version)
	}
	return out
}

func retry(resp *runtimehooksv1.CommonRetryResponse, seconds int32) {
	resp.Status = runtimehooksv1.ResponseStatusSuccess
	resp.RetryAfterSeconds = seconds
	if seconds > 0 {
		resp.Message = "not yet"
	}
}

func main() {
	port := flag.Int("port", 9443, "port of the TLS server")
	certDir := flag.String("cert-dir", "", "directory with tls.crt and tls.key")
	retryAfter := flag.Int("retry-after", 2, "retryAfterSeconds of a blocking answer")
	blockFirst := flag.String("block-first", "BeforeClusterCreate,BeforeClusterUpgrade,BeforeControlPlaneUpgrade,BeforeWorkersUpgrade",
		"blocking hooks that answer retry once per Cluster and version")
	deleteFor := flag.Duration("block-delete-for", 10*time.Second, "BeforeClusterDelete answers retry this long after its first call")
	flag.Parse()

	r := &recorder{blockFirst: map[string]bool{}, blocked: map[string]bool{}, retryAfter: int32(*retryAfter),
		deleteFor: *deleteFor, deleteSince: map[string]time.Time{}}
	for _, h := range strings.Split(*blockFirst, ",") {
		if h = strings.TrimSpace(h); h != "" {
			r.blockFirst[h] = true
		}
	}

	catalog := runtimecatalog.New()
	if err := runtimehooksv1.AddToCatalog(catalog); err != nil {
		fail(err)
	}
	srv, err := server.New(server.Options{Catalog: catalog, Port: *port, Host: "127.0.0.1", CertDir: *certDir})
	if err != nil {
		fail(err)
	}
	name := func(h runtimecatalog.Hook) string { return strings.ToLower(runtimecatalog.HookName(h)) }
	handlers := []server.ExtensionHandler{
		{Hook: runtimehooksv1.BeforeClusterCreate, Name: name(runtimehooksv1.BeforeClusterCreate),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.BeforeClusterCreateRequest, resp *runtimehooksv1.BeforeClusterCreateResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "BeforeClusterCreate"}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.AfterControlPlaneInitialized, Name: name(runtimehooksv1.AfterControlPlaneInitialized),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.AfterControlPlaneInitializedRequest, resp *runtimehooksv1.AfterControlPlaneInitializedResponse) {
				r.answer(Call{Hook: "AfterControlPlaneInitialized"}, &req.Cluster)
				resp.Status = runtimehooksv1.ResponseStatusSuccess
			}},
		{Hook: runtimehooksv1.BeforeClusterUpgrade, Name: name(runtimehooksv1.BeforeClusterUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.BeforeClusterUpgradeRequest, resp *runtimehooksv1.BeforeClusterUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "BeforeClusterUpgrade", Version: req.ToKubernetesVersion, FromVersion: req.FromKubernetesVersion,
					ControlPlaneUpgrades: versions(req.ControlPlaneUpgrades), WorkersUpgrades: versions(req.WorkersUpgrades)}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.BeforeControlPlaneUpgrade, Name: name(runtimehooksv1.BeforeControlPlaneUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.BeforeControlPlaneUpgradeRequest, resp *runtimehooksv1.BeforeControlPlaneUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "BeforeControlPlaneUpgrade", Version: req.ToKubernetesVersion, FromVersion: req.FromKubernetesVersion,
					ControlPlaneUpgrades: versions(req.ControlPlaneUpgrades), WorkersUpgrades: versions(req.WorkersUpgrades)}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.AfterControlPlaneUpgrade, Name: name(runtimehooksv1.AfterControlPlaneUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.AfterControlPlaneUpgradeRequest, resp *runtimehooksv1.AfterControlPlaneUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "AfterControlPlaneUpgrade", Version: req.KubernetesVersion,
					ControlPlaneUpgrades: versions(req.ControlPlaneUpgrades), WorkersUpgrades: versions(req.WorkersUpgrades)}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.BeforeWorkersUpgrade, Name: name(runtimehooksv1.BeforeWorkersUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.BeforeWorkersUpgradeRequest, resp *runtimehooksv1.BeforeWorkersUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "BeforeWorkersUpgrade", Version: req.ToKubernetesVersion, FromVersion: req.FromKubernetesVersion,
					ControlPlaneUpgrades: versions(req.ControlPlaneUpgrades), WorkersUpgrades: versions(req.WorkersUpgrades)}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.AfterWorkersUpgrade, Name: name(runtimehooksv1.AfterWorkersUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.AfterWorkersUpgradeRequest, resp *runtimehooksv1.AfterWorkersUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "AfterWorkersUpgrade", Version: req.KubernetesVersion,
					ControlPlaneUpgrades: versions(req.ControlPlaneUpgrades), WorkersUpgrades: versions(req.WorkersUpgrades)}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.AfterClusterUpgrade, Name: name(runtimehooksv1.AfterClusterUpgrade),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.AfterClusterUpgradeRequest, resp *runtimehooksv1.AfterClusterUpgradeResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "AfterClusterUpgrade", Version: req.KubernetesVersion}, &req.Cluster))
			}},
		{Hook: runtimehooksv1.BeforeClusterDelete, Name: name(runtimehooksv1.BeforeClusterDelete),
			HandlerFunc: func(_ context.Context, req *runtimehooksv1.BeforeClusterDeleteRequest, resp *runtimehooksv1.BeforeClusterDeleteResponse) {
				retry(&resp.CommonRetryResponse, r.answer(Call{Hook: "BeforeClusterDelete"}, &req.Cluster))
			}},
	}
	for _, h := range handlers {
		if err := srv.AddExtensionHandler(h); err != nil {
			fail(fmt.Errorf("adding the %s handler: %w", h.Name, err))
		}
	}
	srv.Register("/calls", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(r.calls)
	}))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Start(ctx); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "sdkextension:", err)
	os.Exit(1)
}
