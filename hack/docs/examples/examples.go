// Package examples finds the `kubectl cassandra …` example lines of the documentation
// (README.md, docs/**/*.md) and checks them against the command tree, so that a page never
// shows a command or flag the plugin does not have. hack/docs's unit test parses every
// line; test/e2e runs them against the local control plane.
//
// An example is a line starting with "kubectl cassandra " inside a ```sh fence, or in the
// Examples section of a generated page of docs/reference. Its trailing "# …" comment may
// carry marks, shown in the page as written:
//
//	# needs a real cluster    not run by the e2e test (parsed all the same)
//	# runs until Ctrl-C       not run by the e2e test (a live view that never ends)
//	# exit N                  the exit code it documents (default 0)
package examples

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cli"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop/repair"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator"
	cassrepair "github.com/kubectl-cassandra/kubectl-cassandra/plugins/cassoperator/repair"
)

// The marks an example's comment may carry.
const (
	MarkRealCluster = "needs a real cluster"
	MarkUntilCtrlC  = "runs until Ctrl-C"
)

// Example is one documented command line.
type Example struct {
	File string // relative to the repository root
	Line int
	// Shell is the command as a shell runs it (comment removed; redirections kept).
	Shell string
	// Args are the plugin's arguments: the words after "kubectl cassandra", up to the
	// first shell operator (>, |, ;, &&).
	Args    []string
	Comment string
	// Skip says why the e2e test does not run it ("" = it runs).
	Skip string
	// Exit is the exit code the page documents for it.
	Exit int
}

func (e Example) String() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Shell) }

// Tree is the plugin's command tree as cmd/kubectl-cassandra composes it (the same
// operators), with the generated pages' stable settings: no "Auto generated … on <date>"
// line, and flag defaults under this machine's home directory written as $HOME/….
func Tree() *cobra.Command {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	o := cli.NewOptions(streams, repair.Operator{Plugin: casskop.Plugin{}}, cassrepair.Operator{Plugin: cassoperator.Plugin{}})
	root := cli.NewRootCmd(o)
	home, _ := os.UserHomeDir()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags(), c.InheritedFlags()} {
			fs.VisitAll(func(f *pflag.Flag) { f.DefValue = stableDefault(f.DefValue, home) })
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}

// stableDefault writes a default under the home directory (kubectl's --cache-dir) as
// $HOME/…, so the pages do not depend on who generated them.
func stableDefault(def, home string) string {
	if home == "" || home == string(filepath.Separator) || !strings.HasPrefix(def, home) {
		return def
	}
	return "$HOME" + strings.TrimPrefix(def, home)
}

// Files are the documentation files examples are taken from, relative to root.
func Files(root string) ([]string, error) {
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	return files, err
}

// All extracts the examples of every documentation file under root.
func All(root string) ([]Example, error) {
	files, err := Files(root)
	if err != nil {
		return nil, err
	}
	var out []Example
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		ex, err := Extract(f, string(b))
		if err != nil {
			return nil, err
		}
		out = append(out, ex...)
	}
	return out, nil
}

var exitMark = regexp.MustCompile(`\bexit (\d)\b`)

// Extract finds the examples of one Markdown file (named file, for messages).
func Extract(file, text string) ([]Example, error) {
	generated := strings.HasPrefix(filepath.Base(file), "kubectl_cassandra")
	var out []Example
	inFence, runnable, inExamples := false, false, false
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if inFence {
				inFence = false
				continue
			}
			inFence = true
			info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			runnable = info == "sh" || info == "bash" || (generated && inExamples && info == "")
			continue
		}
		if !inFence && strings.HasPrefix(line, "#") {
			inExamples = generated && strings.TrimSpace(strings.TrimLeft(line, "#")) == "Examples"
			continue
		}
		if !inFence || !runnable || !strings.HasPrefix(trimmed, "kubectl cassandra ") {
			continue
		}
		if strings.HasSuffix(trimmed, `\`) {
			return nil, fmt.Errorf("%s:%d: an example must fit on one line (no \\ continuation)", file, n)
		}
		ex, err := parseLine(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, n, err)
		}
		ex.File, ex.Line = file, n
		out = append(out, ex)
	}
	return out, sc.Err()
}

// parseLine splits a shell line into the command, its plugin arguments and its comment.
func parseLine(line string) (Example, error) {
	var words []string
	var cur strings.Builder
	have, quote, stopped := false, byte(0), false
	comment := ""
	shellEnd := len(line)
	flush := func() {
		if have && !stopped {
			words = append(words, cur.String())
		}
		cur.Reset()
		have = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, have = c, true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !have:
			comment = strings.TrimSpace(line[i+1:])
			shellEnd = i
			i = len(line)
		case strings.ContainsRune("><|;&", rune(c)):
			flush()
			stopped = true
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	if quote != 0 {
		return Example{}, fmt.Errorf("unterminated quote")
	}
	flush()
	ex := Example{Shell: strings.TrimSpace(line[:shellEnd]), Args: words[2:], Comment: comment}
	switch {
	case strings.Contains(comment, MarkRealCluster):
		ex.Skip = MarkRealCluster
	case strings.Contains(comment, MarkUntilCtrlC):
		ex.Skip = MarkUntilCtrlC
	}
	if m := exitMark.FindStringSubmatch(comment); m != nil {
		ex.Exit, _ = strconv.Atoi(m[1])
	}
	return ex, nil
}

// Check parses an example against a fresh command tree as the plugin would: an unknown
// command, an unknown flag, a bad flag value or the wrong number of arguments is an
// error. It returns the command's name and its positional arguments.
func Check(ex Example) (cmd *cobra.Command, positional []string, err error) {
	root := Tree()
	cmd, rest, err := root.Find(ex.Args)
	if err != nil {
		return nil, nil, err
	}
	if cmd == root {
		return nil, nil, fmt.Errorf("no command in %q", strings.Join(ex.Args, " "))
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, nil, err
	}
	positional = cmd.Flags().Args()
	if err := cmd.ValidateArgs(positional); err != nil {
		return nil, nil, err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return nil, nil, err
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return nil, nil, err
	}
	return cmd, positional, nil
}
