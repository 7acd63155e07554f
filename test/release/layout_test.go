package release

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAdaptersImportOnlyPkg: an operator adapter and the operation kinds it offers
// (every package under plugins/) are written against the public API under pkg/, never
// the plugin's internals: adding an operator is packages under plugins/ plus one line
// in main.go. They, and pkg/ itself, import only pkg/ (plugins/ also its own packages),
// client-go, apimachinery, the API types of k8s.io/api and the standard library; and
// the JSON patch library client-go's fake applies patches with, whose test-failed
// error the cass-operator adapter tells apart. Tests are not held to it: a plugin's
// tests run it against the plugin's own engine and the simulated world (test/world).
func TestAdaptersImportOnlyPkg(t *testing.T) {
	allowed := func(dir, path string) bool {
		first, _, _ := strings.Cut(path, "/")
		switch {
		case !strings.Contains(first, "."): // the standard library
			return true
		case path == "gopkg.in/evanphx/json-patch.v4":
			return true
		case strings.HasPrefix(path, modulePath+"/pkg/"):
			return true
		case strings.HasPrefix(path, modulePath+"/plugins/"):
			return dir == "plugins"
		}
		for _, k := range []string{"k8s.io/api/", "k8s.io/apimachinery/", "k8s.io/client-go/"} {
			if strings.HasPrefix(path, k) {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	for _, dir := range []string{"plugins", "pkg"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(f string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
				return err
			}
			rel := strings.TrimPrefix(f, repoRoot+"/")
			seen[filepath.Dir(rel)] = true
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range parsed.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !allowed(dir, path) {
					t.Errorf("%s imports %s: an adapter, its operation kinds and the public API import only pkg/, client-go, apimachinery, k8s.io/api and the standard library", rel, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The walk found the packages the rule is about.
	for _, dir := range []string{"plugins/casskop", "plugins/casskop/repair", "plugins/cassoperator", "plugins/cassoperator/repair",
		"pkg/operator", "pkg/topology", "pkg/record", "pkg/operation", "pkg/nodetool"} {
		if !seen[dir] {
			t.Errorf("%s: no Go files", dir)
		}
	}
}
