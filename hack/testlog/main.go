// Command testlog reads `go test -json` on stdin, prints the tests' text output as
// `go test -v` would, and ends with the whole output of every failed test, so that the
// reason of a failure is in the last lines of a long log (CI shows a log's end). It
// exits 1 when a test or package failed, or when no package reported a result.
//
//	go test -json ./... | go run ./hack/testlog
package main

import (
	"fmt"
	"os"
)

func main() {
	d := newDigest()
	if err := d.read(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "testlog: %v\n", err)
		os.Exit(1)
	}
	d.print(os.Stdout)
	if !d.ok() {
		os.Exit(1)
	}
}
