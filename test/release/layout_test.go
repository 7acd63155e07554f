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
