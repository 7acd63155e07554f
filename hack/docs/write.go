package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra/doc"

	"github.com/kubectl-cassandra/kubectl-cassandra/hack/docs/examples"
)

// pagePrefix starts the name of every generated Markdown page (cobra names a page after
// its command path: kubectl_cassandra_scale.md).
const pagePrefix = "kubectl_cassandra"

// header is the first line of every generated page, so nobody edits one by hand.
const header = "<!-- Generated from the command tree by `make docs` (hack/docs); do not edit. -->\n\n"

// writeMarkdown replaces the generated pages in dir with the ones the commands make now
// (a page of a command that is gone is removed; other files in dir are left alone).
func writeMarkdown(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, pagePrefix+"*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	return doc.GenMarkdownTreeCustom(examples.Tree(), dir, func(string) string { return header }, func(s string) string { return s })
}

// writeMan writes the man pages (section 1) into dir. Their date is the commit's
// (SOURCE_DATE_EPOCH, as goreleaser and reproducible builds set it), else a fixed one:
// never the clock, so two runs on one commit write the same bytes.
func writeMan(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var sec int64
		if _, err := fmt.Sscan(s, &sec); err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: %v", s, err)
		}
		date = time.Unix(sec, 0).UTC()
	}
	h := &doc.GenManHeader{Title: strings.ToUpper(pagePrefix), Section: "1", Source: "kubectl-cassandra", Manual: "kubectl cassandra", Date: &date}
	return doc.GenManTree(examples.Tree(), h, dir)
}
