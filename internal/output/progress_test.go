package output

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

func TestProgressFormats(t *testing.T) {
	p := record.Progress{Operation: "decommission", Pod: "demo-dc1-rack1-3", DoneBytes: 44237863731, TotalBytes: 103079215104, BytesPerSecond: 48 << 20, ETASeconds: 19 * 60}
	if got, want := ProgressText(p), "decommission demo-dc1-rack1-3: 41.2 GiB / 96.0 GiB (42 %), 48 MiB/s, ETA 19m"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	for d, want := range map[time.Duration]string{45 * time.Second: "45s", 19 * time.Minute: "19m", 2*time.Hour + 5*time.Minute: "2h05m"} {
		if got := eta(d); got != want {
			t.Errorf("eta(%s) = %q, want %q", d, got, want)
		}
	}
	if got := rate(2.5 * (1 << 20)); got != "2.5 MiB/s" {
		t.Errorf("rate %q", got)
	}
	if got := bar(record.Progress{DoneBytes: 1, TotalBytes: 2}, 10); got != "[=====>    ]" {
		t.Errorf("bar %q", got)
	}
	if got := bar(record.Progress{DoneBytes: 2, TotalBytes: 2}, 10); got != "[==========]" {
		t.Errorf("full bar %q", got)
	}
}

// TestProgressModes: bar redraws in place (and hides the step's waiting line), plain
// prints every PlainEvery by the reads' own times, none prints nothing.
func TestProgressModes(t *testing.T) {
	at := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	p := record.Progress{Operation: "bootstrap", Pod: "p", DoneBytes: 1, TotalBytes: 4, At: at}
	clock := func() time.Time { return at }

	var bar bytes.Buffer
	r := &Progress{W: &bar, Now: clock, Mode: ProgressBar}
	r.Progress("s", p)
	r.Waiting("s", "node is UJ", time.Second)
	r.Progress("s", p)
	if got := bar.String(); strings.Count(got, "\r\033[K") != 2 || strings.Contains(got, "UJ") || strings.Contains(got, "\n") {
		t.Errorf("bar: %q", got)
	}

	var plain bytes.Buffer
	r = &Progress{W: &plain, Now: clock, Mode: ProgressPlain, PlainEvery: time.Minute}
	for i := 0; i < 5; i++ {
		q := p
		q.At = at.Add(time.Duration(i) * 30 * time.Second)
		r.Progress("s", q)
	}
	if n := strings.Count(plain.String(), "\n"); n != 3 {
		t.Errorf("plain: %d lines, want 3 (0s, 60s, 120s):\n%s", n, plain.String())
	}

	var none bytes.Buffer
	r = &Progress{W: &none, Now: clock, Mode: ProgressNone}
	r.Progress("s", p)
	if none.Len() != 0 {
		t.Errorf("none: %q", none.String())
	}
	// auto: a bar on a terminal, plain elsewhere.
	if (&Progress{TTY: true}).mode() != ProgressBar || (&Progress{}).mode() != ProgressPlain {
		t.Error("auto mode")
	}
}
