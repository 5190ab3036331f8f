// Package docs checks that the Markdown documentation stays true to the repository: relative
// links and their anchors resolve, every `make <target>` names a Makefile target, every
// `starter ...` command names subcommands and flags the built starter has (and `worker` flags
// alike), every repository path in code exists, and docs/README.md lists every page. Run it
// with `make docs-check`; `make test` runs it before the stack comes up. The check is
// docs_test.go.
package docs
