// Package temporalx connects topoflow processes to Temporal: dialing with structured logs and
// registering the search attributes the Cluster workflows keep current.
package temporalx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
)

// Options says where Temporal is.
type Options struct {
	Address   string
	Namespace string
}

// FromEnv fills unset options from TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE, then defaults.
func (o Options) FromEnv() Options {
	if o.Address == "" {
		o.Address = os.Getenv("TEMPORAL_ADDRESS")
	}
	if o.Address == "" {
		o.Address = "127.0.0.1:7233"
	}
	if o.Namespace == "" {
		o.Namespace = os.Getenv("TEMPORAL_NAMESPACE")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	return o
}

// Dial connects to Temporal, retrying for up to a minute (the server may still be starting).
func Dial(ctx context.Context, o Options, log *slog.Logger) (client.Client, error) {
	o = o.FromEnv()
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := client.DialContext(ctx, client.Options{
			HostPort:  o.Address,
			Namespace: o.Namespace,
			Logger:    tlog.NewStructuredLogger(log),
		})
		if err == nil {
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to Temporal at %s: %w", o.Address, err)
		}
		log.Info("waiting for Temporal", "address", o.Address, "error", err)
		time.Sleep(2 * time.Second)
	}
}

// EnsureKeywordSearchAttributes registers Keyword search attributes; existing ones are fine.
func EnsureKeywordSearchAttributes(ctx context.Context, c client.Client, namespace string, names []string) error {
	attrs := map[string]enumspb.IndexedValueType{}
	for _, n := range names {
		attrs[n] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	_, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		SearchAttributes: attrs,
		Namespace:        namespace,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("registering search attributes %v: %w", names, err)
	}
	return nil
}
