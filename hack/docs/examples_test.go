package main

import (
	"path/filepath"
	"testing"

	"github.com/kubectl-cassandra/kubectl-cassandra/hack/docs/examples"
)

// TestExamplesParse: every `kubectl cassandra …` example of README.md and docs/ names a
// command and flags the plugin has, with a valid number of arguments (test/e2e's
// TestDocs runs them). A documented bad usage (# exit 2) must fail to parse.
func TestExamplesParse(t *testing.T) {
	all, err := examples.All(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 20 {
		t.Fatalf("%d examples found, want the README's, the runbooks' and the reference's", len(all))
	}
	for _, ex := range all {
		_, _, err := examples.Check(ex)
		switch {
		case ex.Exit == 2 && err == nil:
			t.Errorf("%s: documented as bad usage (exit 2) but parses", ex)
		case ex.Exit != 2 && err != nil:
			t.Errorf("%s: %v (a command or flag the plugin does not have? the reference is `make docs`)", ex, err)
		}
	}
	t.Logf("%d examples parsed", len(all))
}

func TestExtract(t *testing.T) {
	page := "# Title\n\n```sh\nkubectl cassandra status -n ns demo   # a comment\nkubectl get pods\n" +
		"kubectl cassandra completion kubectl-shim > ~/x  # needs a real cluster\n" +
		"kubectl cassandra scale demo --nodes x   # exit 2\n```\n\n```\nkubectl cassandra usage [flags]\n```\n"
	ex, err := examples.Extract("docs/runbooks/x.md", page)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 3 {
		t.Fatalf("got %d examples, want 3: %+v", len(ex), ex)
	}
	if got := ex[0].Args; len(got) != 4 || got[0] != "status" || got[3] != "demo" || ex[0].Shell != "kubectl cassandra status -n ns demo" {
		t.Errorf("first example %+v", ex[0])
	}
	if got := ex[1].Args; len(got) != 2 || ex[1].Skip != examples.MarkRealCluster || ex[1].Line != 6 {
		t.Errorf("second example %+v", ex[1])
	}
	if ex[2].Exit != 2 {
		t.Errorf("third example %+v", ex[2])
	}
	if _, _, err := examples.Check(ex[2]); err == nil {
		t.Errorf("--nodes x parsed")
	}
	if _, _, err := examples.Check(examples.Example{Args: []string{"scael", "demo"}}); err == nil {
		t.Errorf("an unknown command parsed")
	}
	if _, _, err := examples.Check(examples.Example{Args: []string{"status", "--no-such-flag"}}); err == nil {
		t.Errorf("an unknown flag parsed")
	}
}
