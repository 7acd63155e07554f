package output

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// openPTY opens a pseudo-terminal (master, slave); nil where the platform has no helper
// (pty_linux_test.go sets it), in which case the terminal cases are skipped.
var openPTY func() (master, slave *os.File, err error)

// terminal returns the slave side of a fresh pseudo-terminal: a writer that isatty
// accepts, so "auto" has a real terminal to say yes to.
func terminal(t *testing.T) *os.File {
	t.Helper()
	if openPTY == nil {
		t.Skip("no pseudo-terminal helper on this platform")
	}
	m, s, err := openPTY()
	if err != nil {
		t.Skipf("cannot open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return s
}

// regularFile has an Fd() but is not a terminal: "auto" must not be fooled by the mere
// presence of a file descriptor.
func regularFile(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestIsTerminal(t *testing.T) {
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is not a terminal")
	}
	if IsTerminal(regularFile(t)) {
		t.Error("a regular file is not a terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil is not a terminal")
	}
	if !IsTerminal(terminal(t)) {
		t.Error("a pseudo-terminal is a terminal")
	}
}

// TestColorEnabled pins the colour rules of the README: colour only on a terminal, off
// with NO_COLOR (non-empty, per no-color.org) or TERM=dumb; --color=always/never are
// explicit per-invocation choices and win over the environment (no-color.org: command
// line arguments override NO_COLOR).
func TestColorEnabled(t *testing.T) {
	buf := &bytes.Buffer{}
	file := regularFile(t)
	var tty *os.File
	if openPTY != nil {
		if m, s, err := openPTY(); err == nil {
			t.Cleanup(func() { s.Close(); m.Close() })
			tty = s
		}
	}
	cases := []struct {
		name  string
		mode  string
		w     any
		env   func(string) string
		want  bool
		ttyed bool // needs the pseudo-terminal
	}{
		{name: "auto, buffer", mode: "auto", w: buf, env: env("TERM", "xterm-256color"), want: false},
		{name: "auto, regular file", mode: "auto", w: file, env: env("TERM", "xterm-256color"), want: false},
		{name: "auto, terminal", mode: "auto", w: tty, env: env("TERM", "xterm-256color"), want: true, ttyed: true},
		{name: "auto, terminal, TERM unset", mode: "auto", w: tty, env: env(), want: true, ttyed: true},
		{name: "auto, terminal, NO_COLOR=1", mode: "auto", w: tty, env: env("TERM", "xterm", "NO_COLOR", "1"), want: false, ttyed: true},
		{name: "auto, terminal, NO_COLOR=0 still counts", mode: "auto", w: tty, env: env("NO_COLOR", "0"), want: false, ttyed: true},
		{name: "auto, terminal, NO_COLOR empty is unset", mode: "auto", w: tty, env: env("NO_COLOR", ""), want: true, ttyed: true},
		{name: "auto, terminal, TERM=dumb", mode: "auto", w: tty, env: env("TERM", "dumb"), want: false, ttyed: true},
		{name: "always, buffer", mode: "always", w: buf, env: env(), want: true},
		{name: "always, buffer, NO_COLOR", mode: "always", w: buf, env: env("NO_COLOR", "1"), want: true},
		{name: "always, buffer, TERM=dumb", mode: "always", w: buf, env: env("TERM", "dumb"), want: true},
		{name: "never, buffer", mode: "never", w: buf, env: env(), want: false},
		{name: "never, terminal", mode: "never", w: tty, env: env("TERM", "xterm"), want: false, ttyed: true},
		{name: "empty mode is auto (buffer)", mode: "", w: buf, env: env(), want: false},
		{name: "empty mode is auto (terminal)", mode: "", w: tty, env: env("TERM", "xterm"), want: true, ttyed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ttyed && tty == nil {
				t.Skip("no pseudo-terminal")
			}
			if got := ColorEnabled(tc.mode, tc.w, tc.env); got != tc.want {
				t.Fatalf("ColorEnabled(%q) = %v, want %v", tc.mode, got, tc.want)
			}
		})
	}
}

func TestPainter(t *testing.T) {
	off := Painter{On: false}
	for _, f := range []func(string) string{off.OK, off.Warn, off.Bad, off.Bold} {
		if got := f("[OK]"); got != "[OK]" {
			t.Errorf("painter off changed the text: %q", got)
		}
	}
	on := Painter{On: true}
	// Exact SGR sequences: the marker itself must survive inside the colour, so meaning
	// never depends on colour.
	for _, tc := range []struct {
		got, want string
	}{
		{on.OK("[OK]"), "\x1b[32m[OK]\x1b[0m"},
		{on.Warn("[!!]"), "\x1b[33m[!!]\x1b[0m"},
		{on.Bad("[XX]"), "\x1b[31m[XX]\x1b[0m"},
		{on.Bold("[..]"), "\x1b[1m[..]\x1b[22m"}, // bold is reset with 22, not a full reset
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestPrint(t *testing.T) {
	v := struct {
		Result string   `json:"result"`
		Next   string   `json:"next"`
		List   []string `json:"list"`
	}{"done", "kubectl cassandra status -n ns c", []string{}}
	var b bytes.Buffer
	if err := Print(&b, "json", v); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"result\": \"done\",\n  \"next\": \"kubectl cassandra status -n ns c\",\n  \"list\": []\n}\n"
	if b.String() != want {
		t.Errorf("json:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := Print(&b, "yaml", v); err != nil {
		t.Fatal(err)
	}
	if want := "list: []\nnext: kubectl cassandra status -n ns c\nresult: done\n"; b.String() != want {
		t.Errorf("yaml:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := Print(&b, "xml", v); err == nil || !strings.Contains(err.Error(), `unknown format "xml"`) {
		t.Errorf("xml: err = %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("xml wrote %q", b.String())
	}
	if err := Print(&b, "json", func() {}); err == nil {
		t.Error("an unmarshalable value must be an error, not half a document")
	}
}

// clock is an injected, manually advanced clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)} }

func TestProgressPlainLines(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	p := &Progress{W: &b, Now: c.Now, WaitEvery: 10 * time.Second}
	p.Info("operation op-1: 2 steps")
	p.StepStarted("decommission/p-1", "nodetool decommission on p-1", 1)
	c.Add(61 * time.Second)
	p.StepStarted("decommission/p-1", "nodetool decommission on p-1", 2)
	p.Warn("decommission/p-1", "node p-1 is LEAVING with no stream")
	p.StepFailed("verify-left/p-1", "verify p-1 left", errors.New("ring unreadable"))
	c.Add(time.Hour)
	p.StepDone("decommission/p-1", "nodetool decommission on p-1", false)
	p.StepDone("verify-left/p-1", "verify p-1 left", true)
	want := `14:00:00      operation op-1: 2 steps
14:00:00 [..] nodetool decommission on p-1
14:01:01 [..] nodetool decommission on p-1 (attempt 2)
14:01:01 [!!] node p-1 is LEAVING with no stream
14:01:01 [XX] verify p-1 left: ring unreadable
15:01:01 [OK] nodetool decommission on p-1
15:01:01 [OK] verify p-1 left (already done)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.ContainsAny(b.String(), "\r\x1b") {
		t.Errorf("a non-terminal got control bytes: %q", b.String())
	}
}

// TestProgressWaitingRateLimited: in a log (not a terminal) a wait of hours must not
// print a line per poll: at most one line per WaitEvery, per step, so two steps waiting
// at once each keep their own rhythm.
func TestProgressWaitingRateLimited(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	p := &Progress{W: &b, Now: c.Now, WaitEvery: 10 * time.Second}
	wait := func(id string, elapsed time.Duration) { p.Waiting(id, "waiting for "+id, elapsed) }
	wait("a", 0)                                // 14:00:00 printed: first wait of a
	c.Add(5 * time.Second)                      // 14:00:05
	wait("a", 5*time.Second)                    // suppressed
	wait("b", 0)                                // printed: b has its own limit
	c.Add(4*time.Second + 999*time.Millisecond) // 14:00:09.999
	wait("a", 9*time.Second)                    // suppressed: 1ms short
	c.Add(time.Millisecond)                     // 14:00:10
	wait("a", 10*time.Second)                   // printed
	wait("b", 5*time.Second)                    // suppressed (5s after b's line)
	c.Add(5 * time.Second)                      // 14:00:15
	wait("b", 10*time.Second)                   // printed
	wait("a", 15*time.Second)                   // suppressed
	c.Add(1500 * time.Millisecond)              // 14:00:16.5
	wait("a", 16500*time.Millisecond)           // suppressed; elapsed would round to 17s
	c.Add(4 * time.Second)                      // 14:00:20.5
	wait("a", 20500*time.Millisecond)           // printed, elapsed rounded to the second
	want := `14:00:00 [..] waiting for a (0s)
14:00:05 [..] waiting for b (0s)
14:00:10 [..] waiting for a (10s)
14:00:15 [..] waiting for b (10s)
14:00:20 [..] waiting for a (21s)
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// render plays raw terminal output the way a terminal shows it: \r returns to column 0,
// ESC[K erases to the end of the line, \n ends a line. The last element is the live
// (unterminated) line, "" when the cursor sits on an empty line.
func render(raw string) []string {
	var lines []string
	var cur []rune
	col := 0
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\r':
			col = 0
		case rs[i] == '\n':
			lines = append(lines, string(cur))
			cur, col = nil, 0
		case rs[i] == '\x1b' && i+2 < len(rs) && rs[i+1] == '[' && rs[i+2] == 'K':
			cur = cur[:col]
			i += 2
		default:
			if col < len(cur) {
				cur[col] = rs[i]
			} else {
				cur = append(cur, rs[i])
			}
			col++
		}
	}
	return append(lines, string(cur))
}

func TestRender(t *testing.T) {
	// The emulator itself must be right for the TTY test to mean anything.
	got := render("abc\r\x1b[Kxy\nlong line\rAB\x1b[K\nlive")
	want := []string{"xy", "AB", "live"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("render = %q, want %q", got, want)
	}
}

// TestProgressTTYLiveLine: on a terminal a wait is one live line, rewritten in place with
// \r (not a new line per poll), and the next progress line replaces it.
func TestProgressTTYLiveLine(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	p := &Progress{W: &b, TTY: true, Now: c.Now, WaitEvery: 10 * time.Second}
	p.StepStarted("decommission/p-1", "nodetool decommission on p-1", 1)
	p.Waiting("decommission/p-1", "waiting for p-1 to leave the ring: streaming 3 files", time.Second)
	c.Add(time.Second)
	// Not rate-limited on a terminal: every poll refreshes the live line.
	p.Waiting("decommission/p-1", "waiting for p-1 to leave", 2*time.Second)
	raw := b.String()
	if got := render(raw); fmt.Sprint(got) != fmt.Sprint([]string{"14:00:00 [..] nodetool decommission on p-1", "[..] waiting for p-1 to leave (2s)"}) {
		t.Fatalf("screen while waiting: %q (raw %q)", got, raw)
	}
	if strings.Count(raw, "\n") != 1 {
		t.Fatalf("waiting lines must not end with a newline on a terminal: %q", raw)
	}
	c.Add(3 * time.Second)
	p.StepDone("decommission/p-1", "nodetool decommission on p-1", false)
	raw = b.String()
	want := "14:00:00 [..] nodetool decommission on p-1\n" +
		"\r\x1b[K[..] waiting for p-1 to leave the ring: streaming 3 files (1s)" +
		"\r\x1b[K[..] waiting for p-1 to leave (2s)" +
		"\r\x1b[K14:00:04 [OK] nodetool decommission on p-1\n"
	if raw != want {
		t.Fatalf("raw:\n%q\nwant\n%q", raw, want)
	}
	if got := render(raw); fmt.Sprint(got) != fmt.Sprint([]string{"14:00:00 [..] nodetool decommission on p-1", "14:00:04 [OK] nodetool decommission on p-1", ""}) {
		t.Fatalf("screen after the step: %q", got)
	}
	// After a plain line, the next line must not start with an erase: nothing is live.
	p.Info("next")
	if !strings.HasSuffix(b.String(), "[OK] nodetool decommission on p-1\n14:00:04      next\n") {
		t.Fatalf("a line after a finished line was altered: %q", b.String())
	}
}

func TestProgressTTYTruncatesLiveLine(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{W: &b, TTY: true, Now: newClock().Now}
	long := strings.Repeat("x", 300) + "\nsecond line"
	p.Waiting("s", long, 0)
	line := strings.TrimPrefix(b.String(), "\r\x1b[K[..] ")
	// A live line longer than the terminal would wrap and \r would then only rewrite
	// its last row; a newline inside would break the live line the same way.
	if len(line) != 150 || !strings.HasSuffix(line, "...") || strings.Contains(line, "\n") {
		t.Fatalf("live line not cut to 150 characters on one line: %d %q", len(line), line)
	}
}

// TestNewProgress: the constructor decides terminal and colour from the writer; a buffer
// (a pipe, a log file, CI) gets neither, unless --color=always asks for colour.
func TestNewProgress(t *testing.T) {
	var b bytes.Buffer
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	p := NewProgress(&b, "auto")
	if p.TTY || p.Paint.On {
		t.Fatalf("buffer: TTY=%v colour=%v, want both off", p.TTY, p.Paint.On)
	}
	if p.WaitEvery <= 0 || p.Now == nil {
		t.Fatalf("defaults missing: WaitEvery=%v Now=%v", p.WaitEvery, p.Now != nil)
	}
	p.StepDone("s", "done", false)
	if strings.Contains(b.String(), "\x1b") {
		t.Fatalf("ANSI bytes to a buffer in auto mode: %q", b.String())
	}
	b.Reset()
	p = NewProgress(&b, "always")
	if p.TTY || !p.Paint.On {
		t.Fatalf("always: TTY=%v colour=%v, want no live line but colour", p.TTY, p.Paint.On)
	}
	p.StepDone("s", "done", false)
	if !strings.Contains(b.String(), "\x1b[32m[OK]\x1b[0m done") || strings.Contains(b.String(), "\r") {
		t.Fatalf("always to a buffer: %q", b.String())
	}

	tty := terminal(t)
	p = NewProgress(tty, "auto")
	if !p.TTY || !p.Paint.On {
		t.Fatalf("terminal: TTY=%v colour=%v, want both on", p.TTY, p.Paint.On)
	}
	t.Setenv("NO_COLOR", "1")
	p = NewProgress(tty, "auto")
	if !p.TTY || p.Paint.On {
		t.Fatalf("terminal with NO_COLOR: TTY=%v colour=%v, want live line without colour", p.TTY, p.Paint.On)
	}
}

// TestProgressConcurrent: the engine reports from several goroutines (waits and steps);
// the race detector checks the locking, and every line must come out whole.
func TestProgressConcurrent(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{W: &b, Now: newClock().Now, WaitEvery: time.Nanosecond}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("s%d", i)
			for j := 0; j < 50; j++ {
				p.Waiting(id, "waiting "+id, 0)
				p.StepStarted(id, "step "+id, 1)
			}
		}(i)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	// Waiting is rate-limited per step with a frozen clock: once per step, plus 400 starts.
	if len(lines) != 8+400 {
		t.Fatalf("%d lines, want %d", len(lines), 408)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "14:00:00 [..] ") {
			t.Fatalf("mangled line %q", l)
		}
	}
}
