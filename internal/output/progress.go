package output

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Progress display modes (--progress).
const (
	ProgressAuto  = "auto"  // a bar on a terminal, plain lines otherwise
	ProgressBar   = "bar"   // redrawn in place on stderr
	ProgressPlain = "plain" // one line every PlainEvery
	ProgressNone  = "none"
)

// ProgressModes lists the values --progress accepts.
var ProgressModes = []string{ProgressAuto, ProgressBar, ProgressPlain, ProgressNone}

// DefaultPlainEvery is how often a plain progress line is printed.
const DefaultPlainEvery = 30 * time.Second

// Bytes prints a size the way people read it: binary units, one decimal ("41.2 GiB").
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v, i := binary(float64(n), len(units))
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// rate prints bytes per second: "48 MiB/s", "2.5 MiB/s".
func rate(bps float64) string {
	units := []string{"B/s", "KiB/s", "MiB/s", "GiB/s"}
	v, i := binary(bps, len(units))
	if v >= 10 || i == 0 {
		return fmt.Sprintf("%.0f %s", math.Round(v), units[i])
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// binary divides v by 1024 while it is 1024 or more and a larger one of n units is
// left; i is the index of the unit reached.
func binary(v float64, n int) (float64, int) {
	i := 0
	for v >= 1024 && i < n-1 {
		v /= 1024
		i++
	}
	return v, i
}

// eta prints a remaining time: "45s", "19m", "2h05m".
func eta(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Round(time.Minute).Minutes()))
	}
	d = d.Round(time.Minute)
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// ProgressText is one progress report:
// "decommission demo-dc1-rack1-3: 41.2 GiB / 96.0 GiB (43 %), 48 MiB/s, ETA 19m".
func ProgressText(p record.Progress) string {
	s := fmt.Sprintf("%s %s: %s / %s (%d %%)", p.Operation, p.Pod, Bytes(p.DoneBytes), Bytes(p.TotalBytes), p.Percent())
	if p.BytesPerSecond <= 0 {
		return s + ", rate not known yet"
	}
	return s + ", " + rate(p.BytesPerSecond) + ", ETA " + eta(time.Duration(p.ETASeconds)*time.Second)
}

// bar draws a width-wide bar for p: "[=========>          ]".
func bar(p record.Progress, width int) string {
	n := p.Percent() * width / 100
	n = min(max(n, 0), width)
	head := ""
	if n < width {
		head = ">"
	}
	fill := strings.Repeat("=", n)
	return "[" + fill + head + strings.Repeat(" ", max(width-n-len(head), 0)) + "]"
}

func (p *Progress) mode() string {
	switch p.Mode {
	case ProgressBar, ProgressPlain, ProgressNone:
		return p.Mode
	}
	if p.TTY {
		return ProgressBar
	}
	return ProgressPlain
}

// Progress implements engine.ProgressReporter: on a terminal (or --progress=bar) a bar
// redrawn in place; otherwise a line when a step's progress is first seen and then
// every PlainEvery, judged by the reads' own times (p.At), so tests need no clock.
func (p *Progress) Progress(id string, pr record.Progress) {
	switch p.mode() {
	case ProgressNone:
		return
	case ProgressBar:
		p.mu.Lock()
		fmt.Fprintf(p.W, "\r\033[K%s %s %s", p.Paint.Bold("[..]"), bar(pr, 20), truncate(ProgressText(pr), 120))
		p.live = true
		p.barID = id
		p.mu.Unlock()
		return
	}
	every := p.PlainEvery
	if every <= 0 {
		every = DefaultPlainEvery
	}
	p.mu.Lock()
	if p.lastProgress == nil {
		p.lastProgress = map[string]time.Time{}
	}
	last, seen := p.lastProgress[id]
	if seen && pr.At.Sub(last) < every {
		p.mu.Unlock()
		return
	}
	p.lastProgress[id] = pr.At
	p.mu.Unlock()
	p.line("[..]", ProgressText(pr))
}
