package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReferenceUpToDate fails when docs/reference's generated pages differ from what the
// command tree generates now, so a flag is never documented wrong.
func TestReferenceUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := writeMarkdown(dir); err != nil {
		t.Fatal(err)
	}
	want := pages(t, dir)
	have := pages(t, filepath.Join("..", "..", "docs", "reference"))
	for name, w := range want {
		h, ok := have[name]
		switch {
		case !ok:
			t.Errorf("docs/reference/%s is missing: run `make docs` and commit the pages", name)
		case h != w:
			t.Errorf("docs/reference/%s differs from what the commands generate: run `make docs` and commit the pages", name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/reference/%s is no command's page any more: run `make docs` (it removes it)", name)
		}
	}
}

// TestManPages: the man page set the release archives carry is written, one page per
// command, the same bytes on every run.
func TestManPages(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		if err := writeMan(d); err != nil {
			t.Fatal(err)
		}
	}
	pa, pb := pages(t, a), pages(t, b)
	if len(pa) < 10 {
		t.Fatalf("%d man pages, want one per command", len(pa))
	}
	for name, s := range pa {
		if pb[name] != s {
			t.Errorf("man page %s differs between two runs", name)
		}
	}
}

// pages reads the generated files of dir (the Markdown pages or the man pages) by name.
func pages(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, glob := range []string{pagePrefix + "*.md", "kubectl-cassandra*.1"} {
		files, err := filepath.Glob(filepath.Join(dir, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(f)] = string(b)
		}
	}
	return out
}

// TestGoreleaserManPages: the release archives list every man page the commands generate,
// and only those (.goreleaser.yaml names them one by one: a missing file fails a release).
func TestGoreleaserManPages(t *testing.T) {
	dir := t.TempDir()
	if err := writeMan(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(b), "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "- man/"); ok {
			listed = append(listed, f)
		}
	}
	var want []string
	for name := range pages(t, dir) {
		want = append(want, name)
	}
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf(".goreleaser.yaml's archives list the man pages %v, the commands generate %v: list each as man/<page> under archives[0].files", listed, want)
	}
}
