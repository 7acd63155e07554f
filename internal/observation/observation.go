// Package observation keeps the answers of a run's reads of the world (pods,
// StatefulSets, nodetool's view, …) from the moment the run last waited until it next
// waits. One step's Done, Safe and Do, and the next step's Done right after, ask the same
// questions within milliseconds: one answer serves them all, and one read under way
// serves everyone who asks meanwhile. Whoever waits (a poll sleep, a watch, a long
// nodetool call) or acts in a way the cache does not follow calls Forget, so no decision
// rests on a read older than the moment the run last paused. Errors are never kept:
// unknown stays unknown.
//
// The package knows neither what is read nor in what order: the caller names each kind
// of read (Kind) and passes the read itself, and decides which reads to start ahead.
package observation

import (
	"context"
	"sync"
	"time"
)

// Kind names one kind of read and the type of its answers, so that a kept answer comes
// back with the type it was kept with. Two kinds must not share a name.
type Kind[V any] string

// entry is one kept answer's, or one read's under way, place: its kind and its key
// (a pod's name, …).
type entry struct{ kind, key string }

// Cache is the answers kept since the last Forget and the reads under way. Its zero
// value is an empty cache, ready to use.
type Cache struct {
	mu   sync.Mutex
	kept map[entry]any
	// flights are the reads under way (Get waits for them); gen counts the Forgets, so
	// that a read that began before one is not kept.
	flights map[entry]chan struct{}
	gen     int
	// uncached makes every read go to the world (tests of one step's answers, which
	// change the world between two questions without letting time pass).
	uncached bool
}

// SetUncached turns keeping answers off (on: every Get reads, nothing is waited for or
// found kept) or back on.
func (c *Cache) SetUncached(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.uncached = on
}

// Uncached reports whether keeping answers is off (SetUncached).
func (c *Cache) Uncached() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.uncached
}

// Forget drops every kept answer; a read under way finishes but is not kept.
func (c *Cache) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept = nil
	c.gen++
}

// Get returns the kept answer for key, or reads it and keeps it. A read of the same
// thing already under way (one started ahead, see Ahead) is waited for instead of
// repeated; its answer is used only if nothing was forgotten meanwhile, else it is read
// again.
func Get[V any](ctx context.Context, c *Cache, k Kind[V], key string, read func(context.Context) (V, error)) (V, error) {
	e := entry{string(k), key}
	for {
		c.mu.Lock()
		v, ok := c.kept[e]
		if ok && !c.uncached {
			c.mu.Unlock()
			return as[V](v), nil
		}
		if ch := c.flights[e]; ch != nil && !c.uncached {
			c.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				var zero V
				return zero, ctx.Err()
			}
		}
		f := c.beginLocked(e)
		c.mu.Unlock()
		r, err := read(ctx)
		c.finish(f, r, err)
		return r, err
	}
}

// Ahead registers a read of key as under way now, in the caller's goroutine, and returns
// it to be run in the background (ReadAhead); nil when an answer is kept or a read is
// under way already. Registered before the caller goes on, it is joined by whoever asks
// next however late its goroutine starts, and it never repeats a read made meanwhile.
func Ahead[V any](c *Cache, k Kind[V], key string, read func(context.Context) (V, error)) func(context.Context) {
	e := entry{string(k), key}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.kept[e]; ok || c.uncached || c.flights[e] != nil {
		return nil
	}
	f := c.beginLocked(e)
	return func(ctx context.Context) {
		v, err := read(ctx)
		c.finish(f, v, err)
	}
}

// ReadAhead runs reads registered by Ahead in the background (nil ones are skipped).
// They are not cut short when ctx ends (a caller's wait ends with its context
// cancelled right after): the steps that come next are the ones that need the answers.
// A minute bounds them.
func ReadAhead(ctx context.Context, reads ...func(context.Context)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	var wg sync.WaitGroup
	for _, r := range reads {
		if r != nil {
			wg.Go(func() { r(ctx) })
		}
	}
	go func() { wg.Wait(); cancel() }()
}

// Keep records what a read, a watch event or a write showed.
func Keep[V any](c *Cache, k Kind[V], key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keepLocked(entry{string(k), key}, v)
}

// Kept is the answer kept for key, if there is one (none while uncached).
func Kept[V any](c *Cache, k Kind[V], key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.kept[entry{string(k), key}]
	if !ok || c.uncached {
		var zero V
		return zero, false
	}
	return as[V](v), true
}

// Drop forgets one answer (a write made it stale).
func Drop[V any](c *Cache, k Kind[V], key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.kept, entry{string(k), key})
}

// flight is a read under way, registered so that others asking the same wait for it.
type flight struct {
	e   entry
	ch  chan struct{}
	gen int
}

// beginLocked registers a read of e as under way (c.mu held).
func (c *Cache) beginLocked(e entry) flight {
	f := flight{e: e, ch: make(chan struct{}), gen: c.gen}
	if c.flights == nil {
		c.flights = map[entry]chan struct{}{}
	}
	c.flights[e] = f.ch
	return f
}

// finish keeps a read's answer unless it failed or something was forgotten since it
// began, and releases whoever waits for it.
func (c *Cache) finish(f flight, v any, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && f.gen == c.gen && !c.uncached {
		c.keepLocked(f.e, v)
	}
	if c.flights[f.e] == f.ch {
		delete(c.flights, f.e)
	}
	close(f.ch)
}

func (c *Cache) keepLocked(e entry, v any) {
	if c.kept == nil {
		c.kept = map[entry]any{}
	}
	c.kept[e] = v
}

// as is a kept answer with its kind's type (a nil interface kept stays the zero V).
func as[V any](v any) V {
	x, _ := v.(V)
	return x
}
