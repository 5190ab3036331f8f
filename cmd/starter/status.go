package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/topoflow/topoflow/cmd/internal/setup"
	"github.com/topoflow/topoflow/cmd/starter/clusterstatus"
)

// runStatus prints where a managed Cluster stands: the API server's view (phase, conditions,
// versions of the control plane and pools) and the workflows' (step, upgrade plan, what they
// wait for, the latest hook calls).
func runStatus(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	var f setup.Flags
	f.Register(fs)
	// Accept the Cluster before or after the flags.
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		args = append(args[1:], args[0])
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: starter status NAMESPACE/NAME")
	}
	ns, name, ok := strings.Cut(fs.Arg(0), "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("want NAMESPACE/NAME, got %q", fs.Arg(0))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.TemporalAddress = firstNonEmpty(f.TemporalAddress, os.Getenv("TEMPORAL_ADDRESS"))
	conn, err := f.Connect(ctx, f.Logger())
	if err != nil {
		return err
	}
	defer conn.Temporal.Close()

	return clusterstatus.Print(ctx, stdout, conn.Kube, conn.Temporal, ns, name)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
