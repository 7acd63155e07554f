package release

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAdaptersImportOnlyPkg: an operator adapter is written against the public API
// under pkg/ (and client-go), never the plugin's internals: adding an operator is one
// package under plugins/ plus one line in main.go. The operators' own operation kinds
// (plugins/*/repair) still use internal/operation and internal/steps: their contracts
// have not moved to pkg/ yet.
func TestAdaptersImportOnlyPkg(t *testing.T) {
	for _, dir := range []string{"plugins/casskop", "plugins/cassoperator", "pkg/operator", "pkg/topology", "pkg/record"} {
		files, err := filepath.Glob(filepath.Join(repoRoot, dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if strings.HasPrefix(path, modulePath+"/internal/") {
					t.Errorf("%s imports %s: an adapter and the public API import only pkg/", strings.TrimPrefix(f, repoRoot+"/"), path)
				}
			}
		}
	}
}
