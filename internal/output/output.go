// Package output prints for people and scripts: data on stdout (text, JSON or YAML),
// progress, warnings and prompts on stderr, colour only on a terminal, and meaning that
// never depends on colour ([OK], [!!], [XX]).
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"
	"golang.org/x/term"
	"sigs.k8s.io/yaml"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// ColorEnabled decides colour for one stream: mode always/never wins; auto means a
// terminal, no NO_COLOR, and TERM not dumb.
func ColorEnabled(mode string, w any, getenv func(string) string) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	return IsTerminal(w)
}

// Painter colours text, or not.
type Painter struct{ On bool }

func (p Painter) paint(attr color.Attribute, s string) string {
	if !p.On {
		return s
	}
	c := color.New(attr)
	c.EnableColor()
	return c.Sprint(s)
}

// OK, Warn, Bad and Bold colour a label.
func (p Painter) OK(s string) string   { return p.paint(color.FgGreen, s) }
func (p Painter) Warn(s string) string { return p.paint(color.FgYellow, s) }
func (p Painter) Bad(s string) string  { return p.paint(color.FgRed, s) }
func (p Painter) Bold(s string) string { return p.paint(color.Bold, s) }

// Print writes v as JSON or YAML.
func Print(w io.Writer, format string, v any) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown format %q", format)
}

// Progress reports engine progress on stderr: a live line on a terminal, plain
// timestamped lines otherwise (waiting lines at most every WaitEvery per step).
type Progress struct {
	W         io.Writer
	TTY       bool
	Paint     Painter
	Now       func() time.Time
	WaitEvery time.Duration
	// Mode is the --progress mode (progress.go; "" is auto); PlainEvery the interval of
	// plain progress lines (0: DefaultPlainEvery).
	Mode       string
	PlainEvery time.Duration

	mu           sync.Mutex
	lastWait     map[string]time.Time
	lastProgress map[string]time.Time
	live         bool
	barID        string // the step whose progress bar is on the live line
}

// NewProgress builds a Progress for w.
func NewProgress(w io.Writer, colorMode string) *Progress {
	return &Progress{W: w, TTY: IsTerminal(w), Paint: Painter{On: ColorEnabled(colorMode, w, os.Getenv)}, Now: time.Now, WaitEvery: 10 * time.Second}
}

func (p *Progress) line(tag, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprint(p.W, "\r\033[K")
		p.live = false
		p.barID = ""
	}
	fmt.Fprintf(p.W, "%s %s %s\n", p.Now().Format("15:04:05"), tag, msg)
}

// StepStarted implements engine.Reporter.
func (p *Progress) StepStarted(id, desc string, attempt int) {
	msg := desc
	if attempt > 1 {
		msg += fmt.Sprintf(" (attempt %d)", attempt)
	}
	p.line(p.Paint.Bold("[..]"), msg)
}

// StepDone implements engine.Reporter.
func (p *Progress) StepDone(id, desc string, already bool) {
	if already {
		desc += " (already done)"
	}
	p.line(p.Paint.OK("[OK]"), desc)
}

// StepFailed implements engine.Reporter.
func (p *Progress) StepFailed(id, desc string, err error) {
	p.line(p.Paint.Bad("[XX]"), fmt.Sprintf("%s: %v", desc, err))
}

// Waiting implements engine.Reporter.
func (p *Progress) Waiting(id, what string, elapsed time.Duration) {
	msg := fmt.Sprintf("%s (%s)", what, elapsed.Round(time.Second))
	if p.waitLineDue(id, msg) {
		p.line("[..]", msg)
	}
}

// waitLineDue says whether a plain waiting line is due (one every WaitEvery per step).
// On a terminal it shows the line in place instead, unless the step's progress bar is
// there (it says more).
func (p *Progress) waitLineDue(id, msg string) (due bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.live && p.barID == id:
		return false
	case p.TTY:
		fmt.Fprintf(p.W, "\r\033[K%s %s", p.Paint.Bold("[..]"), truncate(msg, 150))
		p.live = true
		return false
	}
	if p.lastWait == nil {
		p.lastWait = map[string]time.Time{}
	}
	now := p.Now()
	if last, seen := p.lastWait[id]; seen && now.Sub(last) < p.WaitEvery {
		return false
	}
	p.lastWait[id] = now
	return true
}

// Warn implements engine.Reporter.
func (p *Progress) Warn(id, msg string) { p.line(p.Paint.Warn("[!!]"), msg) }

// Info prints a plain progress line.
func (p *Progress) Info(msg string) { p.line("    ", msg) }

func truncate(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
