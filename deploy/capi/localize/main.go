package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/topoflow/topoflow/model/decode"
)

func main() {
	var o options
	var caFile, drop string
	flag.StringVar(&o.url, "url", "", "base URL of the provider's webhook server (https://127.0.0.1:PORT)")
	flag.StringVar(&caFile, "ca-file", "", "PEM CA that signed the webhook server's certificate")
	flag.StringVar(&o.prefix, "prefix", "", "prefix of the webhook configurations' names")
	flag.StringVar(&o.provider, "provider", "", "value of the cluster.x-k8s.io/provider label on CRDs")
	flag.StringVar(&drop, "drop", "", "comma-separated resources whose admission webhooks are left out")
	flag.Parse()
	if err := run(o, caFile, drop); err != nil {
		fmt.Fprintln(os.Stderr, "localize:", err)
		os.Exit(1)
	}
}

// run reads the manifests on stdin and writes the localized ones on stdout.
func run(o options, caFile, drop string) error {
	if o.url == "" || caFile == "" {
		return fmt.Errorf("-url and -ca-file are required")
	}
	var err error
	if o.ca, err = os.ReadFile(caFile); err != nil {
		return err
	}
	if drop != "" {
		o.drop = strings.Split(drop, ",")
	}
	docs, err := decode.Documents(os.Stdin)
	if err != nil {
		return fmt.Errorf("reading manifests: %w", err)
	}
	out, err := localize(docs, o)
	if err != nil {
		return err
	}
	for _, d := range out {
		b, err := yaml.Marshal(d.Object)
		if err != nil {
			return err
		}
		fmt.Printf("---\n%s", b)
	}
	return nil
}
