package checkpoint

import (
	"fmt"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"time"
)

// DefaultLease is how long a holder's claim lasts without renewal.
const DefaultLease = 60 * time.Second

// LockState says whether another run holds the checkpoint.
type LockState int

// Lock states, from the point of view of a run that wants the checkpoint.
const (
	// Mine: this run holds it.
	Mine LockState = iota
	// Free: the holder provably stopped (same host, process gone) or its lease expired.
	Free
	// HeldHere: a live process on this host holds it.
	HeldHere
	// HeldElsewhere: a holder on another host whose lease still runs.
	HeldElsewhere
)

// Lock tells whether self may take the checkpoint now, and why it is free. For
// HeldElsewhere it returns the holder's lease: the time this run must see the holder's
// record unchanged, by its own clock, before taking over (Record, and client-go's
// leader election: another machine's timestamps are never compared with our clock).
//
// alive tells whether the process h names still runs on this machine; it is asked only
// when h ran on this machine (sameMachine), and never for our own PID: a holder with our
// PID and another session is our dead predecessor (a container restarted in place runs
// as PID 1 again).
func Lock(cp *record.Checkpoint, self record.Holder, now time.Time, alive func(h record.Holder) bool) (LockState, time.Duration, string) {
	h := cp.Holder
	if h.Session != "" && h.Session == self.Session {
		return Mine, 0, ""
	}
	if h.ReleasedAt != nil {
		return Free, 0, fmt.Sprintf("the previous run (%s) stopped at %s", h, h.ReleasedAt.Format(time.RFC3339))
	}
	switch sameMachine(h, self) {
	case Same:
		if h.PID == self.PID {
			return Free, 0, fmt.Sprintf("%s is this run's dead predecessor (same machine and PID, another session)", h)
		}
		if h.PID > 0 && alive(h) {
			return HeldHere, 0, ""
		}
		return Free, 0, fmt.Sprintf("process %d on %s is gone", h.PID, h.Host)
	case SameHost:
		// A holder without machine identity (an older plugin, no procfs): the host
		// name is all there is, as before. Our own PID proves nothing there.
		if h.PID != self.PID {
			if h.PID > 0 && alive(h) {
				return HeldHere, 0, ""
			}
			return Free, 0, fmt.Sprintf("process %d on %s is gone", h.PID, h.Host)
		}
	}
	return HeldElsewhere, lease(h), ""
}

// lease is how long the holder's claim lasts without a change to its record.
func lease(h record.Holder) time.Duration {
	if h.LeaseSeconds <= 0 {
		return DefaultLease
	}
	return time.Duration(h.LeaseSeconds) * time.Second
}

// Where says how another holder's machine relates to ours.
type Where int

const (
	// Elsewhere: another machine (or one we cannot tell is ours).
	Elsewhere Where = iota
	// SameHost: the same host name, without machine identity on one side.
	SameHost
	// Same: the same machine and PID namespace: its PID can be looked up here.
	Same
)

// sameMachine tells whether h ran where self runs: the same host name and, when both
// record it, the same machine identity.
func sameMachine(h, self record.Holder) Where {
	switch {
	case h.Host != self.Host:
		return Elsewhere
	case h.Machine == "" || self.Machine == "":
		return SameHost
	case h.Machine == self.Machine:
		return Same
	}
	return Elsewhere
}

// Sighting is a holder's record as this machine watches it: the record last read and
// when, by this machine's clock, it was first read so. A holder elsewhere is alive
// while its record changes; its own timestamps are never compared with our clock.
type Sighting struct {
	Record string
	Since  time.Time
}

// Sight folds a read of cp made at now (our clock) into what was seen: a record that
// changed (the holder wrote, or another holder or operation came) starts afresh.
func (s Sighting) Sight(cp *record.Checkpoint, now time.Time) Sighting {
	if r := cp.Record(); r != s.Record || s.Since.IsZero() {
		return Sighting{Record: r, Since: now}
	}
	return s
}

// Quiet is how long the record has stayed unchanged, by our clock.
func (s Sighting) Quiet(now time.Time) time.Duration {
	return now.Sub(s.Since)
}

// Liveness is what a run makes of the holder of a checkpoint it watches (Judge).
type Liveness struct {
	// Stopped: released, provably gone (on this machine, its process), or, on another
	// machine, its record unchanged for a whole lease of this machine's clock.
	Stopped bool
	// Why says how the holder was judged, in words.
	Why string
	// Quiet is how long a holder elsewhere has left its record unchanged by our clock,
	// out of its Lease (both 0 for a holder judged otherwise).
	Quiet, Lease time.Duration
}

// Judge is Lock's rule for a run that watches the holder (status, or resume waiting
// for a lease): seen is what was seen of the record before this read of cp at now
// (our clock; the zero Sighting at the first read); Judge returns it updated. Only a
// holder elsewhere needs time: it is stopped once its record has not changed for a
// whole lease since seen, so a first read never finds it stopped.
func Judge(cp *record.Checkpoint, self record.Holder, seen Sighting, now time.Time, alive func(h record.Holder) bool) (Liveness, Sighting) {
	seen = seen.Sight(cp, now)
	state, lease, reason := Lock(cp, self, now, alive)
	switch state {
	case Free:
		return Liveness{Stopped: true, Why: reason}, seen
	case HeldHere:
		return Liveness{Why: "a live process on this machine"}, seen
	case Mine:
		return Liveness{Why: "this run"}, seen
	}
	l := Liveness{Quiet: seen.Quiet(now), Lease: lease}
	if l.Quiet >= lease {
		l.Stopped = true
		l.Why = fmt.Sprintf("the lease of %s expired: its checkpoint did not change for %s of this machine's clock", cp.Holder, lease.Round(time.Second))
	} else {
		l.Why = fmt.Sprintf("on another machine: alive while its checkpoint changes, stopped once it stays unchanged for %s", lease.Round(time.Second))
	}
	return l, seen
}
