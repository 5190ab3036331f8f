// Command starter watches the management cluster and starts or signals one Temporal workflow per
// managed Cluster. It is also the operator CLI.
//
//	starter [run]    watch and drive workflows (default)
//	starter plan     preview a Cluster's objects and changes (offline from a file, or online, read only)
//	starter status   where a managed Cluster stands (API server and workflow); --watch, -o json
//	starter version  the build's version
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd(os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "starter:", err)
		os.Exit(1)
	}
}
