// Package buildinfo names the build a binary came from. Go stamps the VCS revision itself only
// when it builds inside a git checkout with VCS stamping on; the project's builds (deploy/build.sh,
// the image) pass it explicitly, so `starter version` and the worker's start log always say it.
package buildinfo

import (
	"fmt"
	"runtime/debug"
)

// Revision is the git revision the binary was built from, set at link time:
//
//	go build -ldflags "-X github.com/topoflow/topoflow/cmd/internal/buildinfo.Revision=<sha>[-dirty]"
var Revision string

// Line describes the build: module version, revision (the stamped one first, else Go's VCS
// information), commit time when Go knows it, Go version.
func Line() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Sprintf("topoflow, revision %s (no build information)", orUnknown(Revision))
	}
	rev, at, dirty := "", "", ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = " " + s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = " (modified)"
			}
		}
	}
	if Revision != "" {
		rev, dirty = Revision, ""
	}
	return fmt.Sprintf("topoflow %s, revision %s%s%s, %s", info.Main.Version, orUnknown(rev), dirty, at, info.GoVersion)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
