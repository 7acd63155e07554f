package checkpoint

import (
	"fmt"
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

// Lock tells whether self may take the checkpoint now; for HeldElsewhere it also
// returns how long until the lease expires, and why it is free otherwise.
func (cp *Checkpoint) Lock(self Holder, now time.Time, alive func(pid int) bool) (LockState, time.Duration, string) {
	h := cp.Holder
	if h.Session != "" && h.Session == self.Session {
		return Mine, 0, ""
	}
	if h.ReleasedAt != nil {
		return Free, 0, fmt.Sprintf("the previous run (%s) stopped at %s", h, h.ReleasedAt.Format(time.RFC3339))
	}
	if h.Host == self.Host {
		if h.PID > 0 && alive(h.PID) {
			return HeldHere, 0, ""
		}
		return Free, 0, fmt.Sprintf("process %d on %s is gone", h.PID, h.Host)
	}
	lease := time.Duration(h.LeaseSeconds) * time.Second
	if lease <= 0 {
		lease = DefaultLease
	}
	last := h.RenewedAtOr(cp.UpdatedAt)
	if left := last.Add(lease).Sub(now); left > 0 {
		return HeldElsewhere, left, ""
	}
	return Free, 0, fmt.Sprintf("lease of %s expired at %s", h, last.Add(lease).Format(time.RFC3339))
}

// TakeOver makes self the holder and records the takeover.
func (cp *Checkpoint) TakeOver(self Holder, now time.Time, reason string) {
	if cp.Holder.Session != self.Session {
		cp.Takeovers = append(cp.Takeovers, Takeover{From: cp.Holder, By: self, At: now, Reason: reason})
	}
	r := now
	self.RenewedAt = &r
	self.ReleasedAt = nil
	cp.Holder = self
}

// RenewedAtOr is when the holder last showed it was alive, or fallback.
func (h Holder) RenewedAtOr(fallback time.Time) time.Time {
	if h.RenewedAt != nil && h.RenewedAt.After(fallback) {
		return *h.RenewedAt
	}
	return fallback
}
