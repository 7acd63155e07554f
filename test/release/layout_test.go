package release

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAdaptersImportOnlyPkg: an operator adapter and the operation kinds it offers
// (every package under plugins/) are written against the public API under pkg/, never
// the plugin's internals: adding an operator is packages under plugins/ plus one line
// in main.go. They, and pkg/ itself, import only pkg/ (plugins/ also its own packages),
// client-go, apimachinery, the API types of k8s.io/api, pflag and the standard library; and
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
		case path == "github.com/spf13/pflag":
			// A kind's command registers its flags (pkg/operation.Command.Flags): a plain
			// flag library, no CLI framework.
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
			imports, err := fileImports(f)
			if err != nil {
				return err
			}
			for _, path := range imports {
				if !allowed(dir, path) {
					t.Errorf("%s imports %s: an adapter, its operation kinds and the public API import only pkg/, client-go, apimachinery, k8s.io/api, pflag and the standard library", rel, path)
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

// TestCoreTestsRunOnNeutralAdapter: the core's tests (every *_test.go under internal/
// but internal/cli's, which test the composed build on both real adapters) reach no
// operator adapter, directly or through a package they import (test/world is built on
// plugins/casskop and plugins/cassoperator): they run on the neutral adapter
// (test/fakeadapter), so none can lean on one operator's conventions. The neutral
// adapter is written, as the real ones are, against pkg/ only.
func TestCoreTestsRunOnNeutralAdapter(t *testing.T) {
	g := importGraph{reached: map[string][]string{}}
	cli := filepath.Join(repoRoot, "internal", "cli")
	err := filepath.WalkDir(filepath.Join(repoRoot, "internal"), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path == cli:
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, "_test.go"):
			return nil
		}
		imports, err := fileImports(path)
		if err != nil {
			return err
		}
		for _, imp := range imports {
			if chain := g.reaches(t, imp, modulePath+"/plugins/"); chain != nil {
				t.Errorf("%s imports %s: the core's tests run on test/fakeadapter, never on an operator's adapter",
					strings.TrimPrefix(path, repoRoot+"/"), strings.Join(chain, " -> "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range g.dirImports(t, filepath.Join(repoRoot, "test", "fakeadapter")) {
		if strings.HasPrefix(imp, modulePath+"/") && !strings.HasPrefix(imp, modulePath+"/pkg/") {
			t.Errorf("test/fakeadapter imports %s: an adapter, even the neutral one, imports only pkg/", imp)
		}
	}
}

// importGraph follows the module's imports through the non-test files of each package.
type importGraph struct {
	// reached is, by package, the chain from it to a package of the prefix asked (nil:
	// none); one prefix per graph.
	reached map[string][]string
}

// reaches returns the import chain from pkg to a package whose path starts with
// prefix, or nil when there is none. Packages outside the module are not followed.
func (g importGraph) reaches(t *testing.T, pkg, prefix string) []string {
	if !strings.HasPrefix(pkg, modulePath+"/") {
		return nil
	}
	if strings.HasPrefix(pkg, prefix) {
		return []string{pkg}
	}
	if chain, ok := g.reached[pkg]; ok {
		return chain
	}
	g.reached[pkg] = nil
	for _, imp := range g.dirImports(t, filepath.Join(repoRoot, strings.TrimPrefix(pkg, modulePath+"/"))) {
		if chain := g.reaches(t, imp, prefix); chain != nil {
			g.reached[pkg] = append([]string{pkg}, chain...)
			return g.reached[pkg]
		}
	}
	return nil
}

// dirImports lists what the non-test Go files of dir import.
func (g importGraph) dirImports(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		imports, err := fileImports(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, imports...)
	}
	return out
}

// fileImports lists the import paths of one Go file.
func fileImports(path string) ([]string, error) {
	parsed, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range parsed.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		out = append(out, p)
	}
	return out, nil
}
