package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	admissionregv1 "k8s.io/api/admissionregistration/v1"

	"github.com/topoflow/topoflow/activities"
	"github.com/topoflow/topoflow/internal/admission"
	"github.com/topoflow/topoflow/internal/kube"
	"github.com/topoflow/topoflow/internal/selfsigned"
	"github.com/topoflow/topoflow/model/validation"
)

// webhookFlags configure the admission webhooks the worker serves (off unless --webhook-addr).
type webhookFlags struct {
	addr, certDir, registerURL string
	selfSigned                 bool
	gates                      validation.Gates
}

func (f *webhookFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "webhook-addr", "", "serve the admission webhooks (Cluster, ClusterClass, ExtensionConfig, the delete hold) and the Cluster and ClusterClass conversion webhook on this address (e.g. :9443); off when empty")
	fs.StringVar(&f.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory with the webhooks' tls.crt and tls.key (re-read when they change)")
	fs.BoolVar(&f.selfSigned, "webhook-self-signed", false, "create a CA and a certificate for 127.0.0.1 in --webhook-cert-dir when it has none (local stack)")
	// Parsed with the flags, so a bad value stops the worker whether or not it serves webhooks.
	fs.Func("feature-gates", "Cluster API feature gates whose admission rules the webhooks follow, as Cluster API's flag: MachineTaintPropagation=true allows taints in ClusterClasses and topologies (default: off, as in Cluster API v1.14)",
		func(s string) (err error) { f.gates, err = parseGates(s); return err })
	fs.StringVar(&f.registerURL, "webhook-register-url", "", "register the webhook configurations, and the conversion of CRDs labelled topoflow.dev/conversion, with this base URL and the cert dir's ca.crt (local stack; in a cluster the deploy/ manifests register them)")
}

func (f *webhookFlags) serve(ctx context.Context, kc *kube.Client, acts *activities.Activities, log *slog.Logger) error {
	if f.selfSigned {
		if _, err := selfsigned.WriteDir(f.certDir, "127.0.0.1", "localhost"); err != nil {
			return fmt.Errorf("--webhook-self-signed: %w", err)
		}
	}
	if f.registerURL != "" {
		ca, err := readCA(f.certDir)
		if err != nil {
			return err
		}
		url := f.registerURL
		m, v := admission.Configurations(admissionregv1.WebhookClientConfig{URL: &url, CABundle: ca}, nil, "")
		if err := admission.Register(ctx, kc, m, v); err != nil {
			return err
		}
		log.Info("admission webhooks registered", "url", url)
		converted, err := admission.RegisterConversion(ctx, kc, url, ca)
		if err != nil {
			return err
		}
		if len(converted) > 0 {
			log.Info("conversion webhook registered", "url", url+admission.PathConvert, "crds", converted)
		}
	}
	srv := &admission.Server{Reads: acts, Log: log, Versions: kc.PreferredVersion, Gates: f.gates}
	return admission.Serve(ctx, f.addr, f.certDir, srv.Handler(), log)
}

func readCA(dir string) ([]byte, error) {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("--webhook-register-url needs the CA in --webhook-cert-dir: %w", err)
	}
	return ca, nil
}

// parseGates reads --feature-gates ("Name=true,Other=false"); an unknown gate or a value that is
// not a boolean is an error naming it.
func parseGates(s string) (validation.Gates, error) {
	var g validation.Gates
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		name, value, _ := strings.Cut(kv, "=")
		on, err := strconv.ParseBool(value)
		if err != nil {
			return g, fmt.Errorf("--feature-gates: %s: want true or false, got %q", name, value)
		}
		switch name {
		case "MachineTaintPropagation":
			g.MachineTaintPropagation = on
		default:
			return g, fmt.Errorf("--feature-gates: unknown gate %q (known: MachineTaintPropagation)", name)
		}
	}
	return g, nil
}
