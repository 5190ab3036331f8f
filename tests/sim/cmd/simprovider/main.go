// Command simprovider runs the simulated providers against an API server (see tests/sim/provider).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/tests/sim/provider"
)

func main() {
	var (
		kubeconfig = flag.String("kubeconfig", "", "kubeconfig (default: $KUBECONFIG)")
		namespace  = flag.String("namespace", "", "serve only this namespace (default: all)")
		provision  = flag.Duration("provision-delay", 2*time.Second, "default time until objects are ready")
		rollout    = flag.Duration("rollout-duration", 5*time.Second, "default time a rollout takes")
		deleteWait = flag.Duration("delete-delay", time.Second, "default time deletion takes")
	)
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, provider.Options{Namespace: *namespace, ProvisionDelay: *provision, RolloutDuration: *rollout, DeleteDelay: *deleteWait}, log); err != nil {
		fmt.Fprintln(os.Stderr, "simprovider:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig string, opts provider.Options, log *slog.Logger) error {
	cfg, err := kube.RESTConfig(kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return provider.New(dyn, opts, log).Run(ctx)
}
