package output

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/term"
)

// Screen redraws a text in place on a terminal (`status -w`): every drawing starts at
// the top-left corner and overwrites the last one line by line, then clears what is
// left below. A line the terminal would wrap, or a drawing taller than the terminal,
// would scroll and leave copies of the first lines above the next drawing; so lines
// are cut to the terminal's width and the drawing to its height (Fit).
type Screen struct {
	W io.Writer
	// Size is the terminal's columns and rows, read at every drawing (it may be resized).
	Size  func() (cols, rows int)
	drawn bool
}

// NewScreen draws on w, sized by the terminal w is.
func NewScreen(w io.Writer) *Screen {
	return &Screen{W: w, Size: func() (int, int) { return TerminalSize(w) }}
}

// TerminalSize is the size of the terminal w is, or 80x24 when it cannot be read.
func TerminalSize(w any) (cols, rows int) {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if c, r, err := term.GetSize(int(f.Fd())); err == nil && c > 0 && r > 0 {
			return c, r
		}
	}
	return 80, 24
}

// Draw replaces what the screen shows with text (lines ending in "\n"): the first
// drawing clears the screen, the next ones overwrite it in place.
func (s *Screen) Draw(text string) error {
	cols, rows := s.Size()
	var b strings.Builder
	b.WriteString("\033[H")
	if !s.drawn {
		b.WriteString("\033[2J")
	}
	for _, l := range Fit(text, cols, rows) {
		b.WriteString(l)
		b.WriteString("\033[K\n") // the rest of the last drawing's longer line goes
	}
	b.WriteString("\033[J") // and its lines below this drawing's
	_, err := io.WriteString(s.W, b.String())
	s.drawn = true
	return err
}

// Fit cuts text to a terminal of cols x rows so that nothing wraps or scrolls: each
// line to cols-1 columns, the last one ending in "…" when cut (the last column stays
// free: a character there leaves the cursor on it, and the erase that follows each
// line would take it), and the lines to rows-1 (the cursor rests on the row after the
// last), the last of them saying how many more there are. Escape sequences (colour)
// take no column; a line cut inside a colour ends with a reset.
func Fit(text string, cols, rows int) []string {
	if text == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if maxLines := max(rows-1, 1); len(lines) > maxLines {
		more := len(lines) - maxLines + 1
		lines = append(lines[:maxLines-1:maxLines-1], fmt.Sprintf("… %d more lines (a taller terminal shows them)", more))
	}
	width := max(cols-1, 1)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cut(l, width)
	}
	return out
}

// cut shortens line to width columns, ending it with "…" when it was longer.
func cut(line string, width int) string {
	if visible(line) <= width {
		return line
	}
	var b strings.Builder
	n, escaped := 0, false
	for i := 0; i < len(line); {
		if l := escapeLen(line[i:]); l > 0 {
			b.WriteString(line[i : i+l])
			i += l
			escaped = true
			continue
		}
		r, size := utf8.DecodeRuneInString(line[i:])
		if n == width-1 {
			break
		}
		b.WriteRune(r)
		n++
		i += size
	}
	b.WriteString("…")
	if escaped {
		b.WriteString("\033[0m")
	}
	return b.String()
}

// visible is how many columns line takes: its runes, escape sequences aside.
func visible(line string) int {
	n := 0
	for i := 0; i < len(line); {
		if l := escapeLen(line[i:]); l > 0 {
			i += l
			continue
		}
		_, size := utf8.DecodeRuneInString(line[i:])
		n++
		i += size
	}
	return n
}

// escapeLen is the length of the CSI escape sequence s starts with (ESC [ parameters,
// then a final byte from @ to ~), 0 if it starts with none.
func escapeLen(s string) int {
	if len(s) < 2 || s[0] != '\033' || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		if s[i] >= 0x40 && s[i] <= 0x7e {
			return i + 1
		}
	}
	return 0
}
