package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// maxLines bounds what is repeated of one failed test (its last lines are kept: the
// failure is at the end).
const maxLines = 120

type digest struct {
	out      map[string][]string // "pkg test" -> output lines
	failed   map[string]bool     // "pkg test" ("pkg " for a package)
	results  int                 // package-level pass/fail/skip events
	keys     []string            // failed tests in the order they failed
	children map[string]bool     // "pkg test" having a failed subtest
}

func newDigest() *digest {
	return &digest{out: map[string][]string{}, failed: map[string]bool{}, children: map[string]bool{}}
}

// read copies the text output to w and records each test's lines and result.
func (d *digest) read(r io.Reader, w io.Writer) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (go's own messages): pass it on as it is.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output", "build-output":
			fmt.Fprint(w, e.Output)
			d.out[key] = append(d.out[key], e.Output)
		case "fail", "build-fail":
			if !d.failed[key] {
				d.failed[key] = true
				d.keys = append(d.keys, key)
			}
			if e.Test != "" {
				for p := parent(e.Test); p != ""; p = parent(p) {
					d.children[e.Package+" "+p] = true
				}
			}
		}
		if e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			d.results++
		}
	}
	return sc.Err()
}

func parent(test string) string {
	if i := strings.LastIndexByte(test, '/'); i >= 0 {
		return test[:i]
	}
	return ""
}

// ok: every package reported, none failed.
func (d *digest) ok() bool { return len(d.keys) == 0 && d.results > 0 }

// print repeats the output of each failed leaf test (a failed package without a failed
// test: the package's own output, e.g. a panic or a timeout).
func (d *digest) print(w io.Writer) {
	if len(d.keys) == 0 {
		if d.results == 0 {
			fmt.Fprintln(w, "\n==== no test result was reported ====")
		}
		return
	}
	var leaves []string
	for _, k := range d.keys {
		pkg, test, _ := strings.Cut(k, " ")
		if d.children[k] || (test == "" && d.anyTestFailed(pkg)) {
			continue
		}
		leaves = append(leaves, k)
	}
	sort.Strings(leaves)
	fmt.Fprintf(w, "\n==== %d failed: their whole output ====\n", len(leaves))
	for _, k := range leaves {
		lines := d.out[k]
		fmt.Fprintf(w, "\n---- %s (%d lines", k, len(lines))
		if len(lines) > maxLines {
			fmt.Fprintf(w, ", the last %d", maxLines)
			lines = lines[len(lines)-maxLines:]
		}
		fmt.Fprintln(w, ")")
		for _, l := range lines {
			fmt.Fprint(w, l)
		}
	}
	fmt.Fprintf(w, "\n==== failed: %s ====\n", strings.Join(leaves, ", "))
}

func (d *digest) anyTestFailed(pkg string) bool {
	for _, k := range d.keys {
		if p, test, _ := strings.Cut(k, " "); p == pkg && test != "" {
			return true
		}
	}
	return false
}
