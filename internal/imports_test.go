// Package internal holds the parts both the worker's activities and the admission webhooks use;
// this test keeps its imports (and the model's) running one way: down, never back up to the
// activities or the workflows.
package internal

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/topoflow/topoflow/"

// TestImportsRunOneWay fails when a package under internal/ or model/ imports one of the floors
// above it (activities, workflows, cmd).
func TestImportsRunOneWay(t *testing.T) {
	above := []string{"activities", "workflows", "cmd", "tests"}
	checked := 0
	for _, root := range []string{".", "../model"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, a := range above {
					if strings.HasPrefix(p, module+a+"/") || p == module+a {
						t.Errorf("%s imports %s: internal/ and model/ must not import %s/", path, p, a)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: the walk missed the tree", checked)
	}
}
