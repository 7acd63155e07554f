// Command docs writes the command reference from the cobra command tree: one Markdown page
// per command into docs/reference (`make docs`), and with -man a man page set (the release
// archives carry it: .goreleaser.yaml's before hook). It lives here, not in the plugin, so
// the plugin binary does not link the generators. TestReferenceUpToDate fails when the
// committed pages differ from what the commands generate.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	md := flag.String("md", "", "write the Markdown reference into this directory (make docs: docs/reference)")
	man := flag.String("man", "", "write the man pages (section 1) into this directory")
	flag.Parse()
	if *md == "" && *man == "" {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/docs [-md DIR] [-man DIR]")
		os.Exit(2)
	}
	if *md != "" {
		if err := writeMarkdown(*md); err != nil {
			fmt.Fprintln(os.Stderr, "docs:", err)
			os.Exit(1)
		}
	}
	if *man != "" {
		if err := writeMan(*man); err != nil {
			fmt.Fprintln(os.Stderr, "docs:", err)
			os.Exit(1)
		}
	}
}
