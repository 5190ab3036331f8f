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
	"go.temporal.io/sdk/contrib/envconfig"
	tlog "go.temporal.io/sdk/log"
)

// Options says where Temporal is, when flags say so; the rest of the connection (TLS, API key,
// profile) comes from Temporal's environment configuration (see ClientOptions).
type Options struct {
	Address   string
	Namespace string
	// MetricsHandler receives the SDK's metrics (nil: none).
	MetricsHandler client.MetricsHandler
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

// ClientOptions are the SDK client's options from Temporal's environment configuration (the
// SDK's envconfig: the TOML file in TEMPORAL_CONFIG_FILE or the user config directory, the
// profile in TEMPORAL_PROFILE, then TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS*, ...), with the flags' address and namespace on top, then the local defaults.
func (o Options) ClientOptions(log *slog.Logger) (client.Options, error) {
	co, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{})
	if err != nil {
		return co, fmt.Errorf("Temporal client configuration (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE, TEMPORAL_* variables): %w", err)
	}
	if o.Address != "" {
		co.HostPort = o.Address
	}
	if co.HostPort == "" {
		co.HostPort = "127.0.0.1:7233"
	}
	if o.Namespace != "" {
		co.Namespace = o.Namespace
	}
	if co.Namespace == "" {
		co.Namespace = "default"
	}
	co.Logger = tlog.NewStructuredLogger(log)
	if o.MetricsHandler != nil {
		co.MetricsHandler = o.MetricsHandler
	}
	return co, nil
}

// Dial connects to Temporal, retrying for up to a minute (the server may still be starting)
// unless ctx ends first.
func Dial(ctx context.Context, o Options, log *slog.Logger) (client.Client, error) {
	co, err := o.ClientOptions(log)
	if err != nil {
		return nil, err
	}
	return DialOptions(ctx, co, log)
}

// DialOptions is Dial with the client options already resolved (see ClientOptions).
func DialOptions(ctx context.Context, co client.Options, log *slog.Logger) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		c, err := client.DialContext(ctx, co)
		if err == nil {
			return c, nil
		}
		log.Info("waiting for Temporal", "address", co.HostPort, "error", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to Temporal at %s: %w", co.HostPort, err)
		case <-time.After(2 * time.Second):
		}
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
