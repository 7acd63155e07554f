//go:build linux

package output

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// TestScreenRedrawsInPlace draws a status three times through a real pseudo-terminal of
// 80 and of 160 columns (its size read by the Screen from the kernel, as `status -w`
// does), with an Operation line wider than either, then plays the bytes the terminal
// received on a small terminal model: the header shows exactly once (nothing scrolled
// away above the drawing), no line wrapped, and the screen shows the last drawing.
func TestScreenRedrawsInPlace(t *testing.T) {
	for _, cols := range []int{80, 160} {
		t.Run(fmt.Sprintf("%d columns", cols), func(t *testing.T) {
			const rows = 24
			m, s := sizedTerminal(t, cols, rows)
			got := make(chan []byte, 1)
			go func() { got <- readAll(m) }()
			scr := NewScreen(s)
			if c, r := scr.Size(); c != cols || r != rows {
				t.Fatalf("size read from the terminal %dx%d, want %dx%d", c, r, cols, rows)
			}
			for i := 1; i <= 3; i++ {
				if err := scr.Draw(statusText(i)); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			b := <-got
			if n := strings.Count(string(b), "\033[J"); n != 3 {
				t.Fatalf("the terminal received %d drawings, want 3:\n%q", n, b)
			}
			vt := newVTerm(cols, rows)
			vt.play(b)
			all := append(append([]string{}, vt.scrolled...), vt.lines()...)
			if n := strings.Count(strings.Join(all, "\n"), "CassandraCluster cassandra/demo"); n != 1 {
				t.Errorf("the header shows %d times, want once:\n%s", n, strings.Join(all, "\n"))
			}
			if vt.wrapped > 0 || len(vt.scrolled) > 0 {
				t.Errorf("%d lines wrapped, %d scrolled off", vt.wrapped, len(vt.scrolled))
			}
			screen := vt.lines()
			op := screen[1]
			if !strings.HasPrefix(op, "Operation:  [..] scale-down op-3,") || !strings.HasSuffix(op, "…") || utf8.RuneCountInString(op) != cols-1 {
				t.Errorf("operation line %q (%d columns), want the third drawing's, cut to %d with …", op, utf8.RuneCountInString(op), cols-1)
			}
			if screen[len(statusLines(3))] != "" {
				t.Errorf("a line of an earlier, longer drawing is left below the last: %q", screen[len(statusLines(3))])
			}
		})
	}
}

// statusText is the i-th drawing of a status: each one line shorter than the last, its
// Operation line 200 columns wide.
func statusText(i int) string {
	return strings.Join(statusLines(i), "\n") + "\n"
}

func statusLines(i int) []string {
	l := []string{
		"CassandraCluster cassandra/demo (casskop, db.orange.com/v2, Cassandra 4.1.0)",
		fmt.Sprintf("Operation:  [..] scale-down op-%d, datacenter dc1 racks rack1 -> 2 nodes, step %d/11 done, started by alice@cassandra-tools (pid 1) at 2026-12-04T03:00:00Z %s", i, i, strings.Repeat("=", 60)),
		"            holder alice@cassandra-tools (pid 1): running (a live process on this machine)",
		"CassKop:    [OK] idle",
	}
	for p := 0; p < 8-i; p++ {
		l = append(l, fmt.Sprintf("    demo-dc1-rack1-%d  [OK]   UN    1.6 GiB  33.3%%  00000000-0000-4000-8000-00000000001%d  10.244.0.1%d", p, p, p))
	}
	return l
}

// sizedTerminal is a fresh pseudo-terminal of cols x rows (the master, and the slave
// a program writes to).
func sizedTerminal(t *testing.T, cols, rows int) (master, slave interface {
	io.ReadWriteCloser
	Fd() uintptr
}) {
	t.Helper()
	if openPTY == nil {
		t.Skip("no pseudo-terminal helper on this platform")
	}
	m, s, err := openPTY()
	if err != nil {
		t.Skipf("cannot open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	if err := unix.IoctlSetWinsize(int(m.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: uint16(rows)}); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// readAll reads the master until the slave is closed (EIO once drained).
func readAll(r io.Reader) []byte {
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if !errors.Is(err, syscall.EIO) && !errors.Is(err, io.EOF) {
				out = append(out, []byte("\nread error: "+err.Error())...)
			}
			return out
		}
	}
}

// vterm is what a terminal of cols x rows makes of the bytes it receives, as far as
// the Screen uses it: text with automatic wrap at the right margin, CR, LF (scrolling
// at the bottom), and the sequences ESC[nA, ESC[H, ESC[J, ESC[2J, ESC[K and colours.
type vterm struct {
	cols, rows int
	grid       [][]rune
	r, c       int
	// pending: the last column was just written; the next character wraps.
	pending  bool
	wrapped  int
	scrolled []string
}

func newVTerm(cols, rows int) *vterm {
	vt := &vterm{cols: cols, rows: rows}
	for range rows {
		vt.grid = append(vt.grid, vt.blank())
	}
	return vt
}

func (vt *vterm) blank() []rune { return []rune(strings.Repeat(" ", vt.cols)) }

func (vt *vterm) lines() []string {
	var out []string
	for _, row := range vt.grid {
		out = append(out, strings.TrimRight(string(row), " "))
	}
	return out
}

func (vt *vterm) lineFeed() {
	if vt.r < vt.rows-1 {
		vt.r++
		return
	}
	vt.scrolled = append(vt.scrolled, strings.TrimRight(string(vt.grid[0]), " "))
	vt.grid = append(vt.grid[1:], vt.blank())
}

func (vt *vterm) play(b []byte) {
	s := string(b)
	for i := 0; i < len(s); {
		switch s[i] {
		case '\r':
			vt.c, vt.pending = 0, false
			i++
		case '\n':
			vt.lineFeed()
			vt.pending = false
			i++
		case '\033':
			i += vt.escape(s[i:])
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if vt.pending {
				vt.wrapped++
				vt.c, vt.pending = 0, false
				vt.lineFeed()
			}
			vt.grid[vt.r][vt.c] = r
			if vt.c == vt.cols-1 {
				vt.pending = true
			} else {
				vt.c++
			}
		}
	}
}

// escape applies the CSI sequence s starts with and says how long it is.
func (vt *vterm) escape(s string) int {
	n := escapeLen(s)
	if n == 0 {
		return 1
	}
	params, final := s[2:n-1], s[n-1]
	arg := func(def int) int {
		if v, err := strconv.Atoi(strings.Split(params, ";")[0]); err == nil {
			return v
		}
		return def
	}
	vt.pending = false
	switch final {
	case 'A':
		vt.r = max(vt.r-arg(1), 0)
	case 'H':
		vt.r, vt.c = 0, 0
	case 'J':
		from := vt.r
		if arg(0) == 2 {
			from = 0
		} else {
			copy(vt.grid[vt.r][vt.c:], vt.blank())
			from++
		}
		for r := from; r < vt.rows; r++ {
			vt.grid[r] = vt.blank()
		}
	case 'K':
		copy(vt.grid[vt.r][vt.c:], vt.blank())
	}
	return n
}
