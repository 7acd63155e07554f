package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A real `go test -json` of a package whose parallel subtests interleave: the digest
// repeats the failed subtest's own lines (not its sibling's) and reports the failure.
func TestDigestRepeatsTheFailedTestsOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/x\n\ngo 1.22\n")
	write("x_test.go", `package x

import "testing"

func TestGroup(t *testing.T) {
	for _, name := range []string{"good", "bad"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Log("line of " + name)
			if name == "bad" {
				t.Fatal("the reason of bad")
			}
		})
	}
}

func TestOther(t *testing.T) { t.Log("other") }
`)
	cmd := exec.Command("go", "test", "-json", "-count=1", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	js, _ := cmd.Output() // exit 1: a test fails
	d := newDigest()
	var text, tail bytes.Buffer
	if err := d.read(bytes.NewReader(js), &text); err != nil {
		t.Fatal(err)
	}
	d.print(&tail)
	if d.ok() {
		t.Fatalf("a failed run reported ok:\n%s", js)
	}
	if !strings.Contains(text.String(), "--- FAIL: TestGroup/bad") {
		t.Errorf("the -v text was not passed on:\n%s", text.String())
	}
	got := tail.String()
	for _, want := range []string{"---- example.com/x TestGroup/bad", "the reason of bad", "line of bad", "==== failed: example.com/x TestGroup/bad ===="} {
		if !strings.Contains(got, want) {
			t.Errorf("digest lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"line of good", "TestOther", "---- example.com/x TestGroup ("} {
		if strings.Contains(got, unwanted) {
			t.Errorf("digest has %q (not a failed leaf test):\n%s", unwanted, got)
		}
	}
}

func TestDigestWithoutResultsIsNotOK(t *testing.T) {
	d := newDigest()
	var out bytes.Buffer
	if err := d.read(strings.NewReader("go: cannot find main module\n"), &out); err != nil {
		t.Fatal(err)
	}
	if d.ok() {
		t.Fatal("no package result, yet ok")
	}
	if !strings.Contains(out.String(), "cannot find main module") {
		t.Fatalf("non-JSON line not passed on: %q", out.String())
	}
}
