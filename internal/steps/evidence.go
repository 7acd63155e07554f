package steps

import (
	"context"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// A driven wait (the operator acts, the plugin verifies) used to read the operator's
// evidence every poll interval, so each of its steps was seen up to a poll late. The
// evidence is on objects the API server streams: the operator's resource (progress,
// conditions, nodeStatuses), the pods (the operator's node-state label, Ready), the
// claims, the operator's tasks. An EvidenceFeed follows them with one watch each for the
// whole run; a wait reads the world again when an object it reads changed, and only
// after a slow safety-net interval otherwise. What a change means is judged by the same
// reads as before: an event only says when to read. The watches replace the polls, they
// add none: a round of reads follows a change of one of the objects the wait reads.

// Keys of the feed: what changed, as a wait names what it reads.
const (
	keyResource = "resource"
	keyAny      = "*" // a watch was (re)opened: what it missed is unknown
	keyPods     = "pods"
)

func keyPod(name string) string  { return "pod/" + name }
func keyPVC(name string) string  { return "pvc/" + name }
func keyTask(name string) string { return "task/" + name }

// safetyNetPolls is how many poll intervals a wait on a working feed lets pass with no
// change before it reads anyway (a missed event, an evidence nobody streams).
const safetyNetPolls = 6

// EvidenceFeed follows the operator's evidence for one run (NewEvidenceFeed).
type EvidenceFeed struct {
	w      *World
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// seq counts the changes seen; changed is the seq of each key's last change.
	seq     uint64
	changed map[string]uint64
	// wake is closed (and replaced) at each change.
	wake chan struct{}
	// open counts the watches open now, of sources.
	open, sources int
	// last is when the last change was seen (Seen).
	last time.Time
}

// fromCache starts a watch from the API server's watch cache (resourceVersion "0"): it
// misses no change after the state it starts from (every event only wakes a wait, which
// reads the world itself), and opens at once, where a watch from the latest state first
// waits for that cache to catch up with etcd (up to ~70 ms after the checkpoint's write,
// measured on the local control plane: the run's first step waited for it).
const fromCache = "0"

// evidenceSource is one watched collection: how to open its watch, the key of each of
// its objects, and the key of any change in it ("": none).
type evidenceSource struct {
	open  func(ctx context.Context) (watch.Interface, error)
	key   func(name string) string
	group string
}

// NewEvidenceFeed starts following the evidence of w's operator when it acts (Scaler)
// and can be watched (Watches); nil otherwise: the waits then poll as they always did.
// Stop ends it.
func NewEvidenceFeed(ctx context.Context, w *World) *EvidenceFeed {
	if w.Scaler == nil || w.Watches == nil || w.CP == nil {
		return nil
	}
	ns, name := w.CP.Namespace, w.CP.Cluster
	srcs := []evidenceSource{
		{func(ctx context.Context) (watch.Interface, error) { return w.Watches.WatchResource(ctx, ns, name) },
			func(string) string { return keyResource }, ""},
		{func(ctx context.Context) (watch.Interface, error) {
			return w.Kube.CoreV1().Pods(w.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: w.ClusterSelector, ResourceVersion: fromCache})
		}, keyPod, keyPods},
		{func(ctx context.Context) (watch.Interface, error) {
			return w.Kube.CoreV1().PersistentVolumeClaims(w.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: fromCache})
		}, keyPVC, ""},
	}
	if w.Tasks != nil {
		srcs = append(srcs, evidenceSource{func(ctx context.Context) (watch.Interface, error) { return w.Watches.WatchTasks(ctx, ns) }, keyTask, ""})
	}
	ctx, cancel := context.WithCancel(ctx)
	f := &EvidenceFeed{w: w, cancel: cancel, changed: map[string]uint64{}, wake: make(chan struct{}), sources: len(srcs)}
	// The watches are opened here, one after the other, before the run's first step:
	// every change from then on is seen, and the requests come in the same order in
	// every run (the in-memory worlds step their operator at each request).
	for _, s := range srcs {
		wi, err := s.open(ctx)
		if err == nil {
			f.open++
		}
		f.wg.Go(func() { f.follow(ctx, s, wi) })
	}
	w.mu.Lock()
	w.feed = f
	w.mu.Unlock()
	return f
}

// Stop ends the watches and waits for their goroutines.
func (f *EvidenceFeed) Stop() {
	if f == nil {
		return
	}
	f.cancel()
	f.wg.Wait()
	f.w.mu.Lock()
	if f.w.feed == f {
		f.w.feed = nil
	}
	f.w.mu.Unlock()
}

// follow keeps one source's watch (wi, opened by NewEvidenceFeed; nil: not open) open
// until ctx ends, noting each change; a watch
// that closes is reopened (what it missed is unknown: every wait reads again), one that
// cannot be opened is tried again after a poll interval (the waits poll meanwhile).
func (f *EvidenceFeed) follow(ctx context.Context, s evidenceSource, wi watch.Interface) {
	if wi != nil {
		f.drain(ctx, wi, s)
		wi.Stop()
		f.setOpen(-1)
	}
	for ctx.Err() == nil {
		wi, err := s.open(ctx)
		if err != nil {
			if sleep(ctx, f.w.poll()) != nil {
				return
			}
			continue
		}
		f.setOpen(+1)
		f.note(keyAny)
		f.drain(ctx, wi, s)
		wi.Stop()
		f.setOpen(-1)
	}
}

// drain notes the changes of one open watch until it ends or ctx does.
func (f *EvidenceFeed) drain(ctx context.Context, wi watch.Interface, s evidenceSource) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				if m, err := meta.Accessor(ev.Object); err == nil {
					f.note(s.key(m.GetName()), s.group)
				}
			case watch.Error:
				return
			}
		}
	}
}

func (f *EvidenceFeed) setOpen(d int) {
	f.mu.Lock()
	f.open += d
	f.mu.Unlock()
}

// note records a change of keys ("" ignored) and wakes the waits.
func (f *EvidenceFeed) note(keys ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	for _, k := range keys {
		if k != "" {
			f.changed[k] = f.seq
		}
	}
	f.last = f.w.Clock()
	close(f.wake)
	f.wake = make(chan struct{})
}

// mark is the point a wait reads from: a change after it is one the read may not have
// seen.
func (f *EvidenceFeed) mark() uint64 {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seq
}

// changedSince reports whether any of keys (or a reopened watch) changed after since,
// the channel that is closed at the next change, and whether every watch is open.
func (f *EvidenceFeed) changedSince(since uint64, keys []string) (bool, <-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed[keyAny] > since {
		return true, f.wake, f.open == f.sources
	}
	for _, k := range keys {
		if f.changed[k] > since {
			return true, f.wake, f.open == f.sources
		}
	}
	return false, f.wake, f.open == f.sources
}

// unchangedSince reports whether none of keys changed after since while every watch
// stayed open (a reopened one counts as a change): a read begun after since still says
// what those objects are, as far as their watches tell. False without a feed.
func (f *EvidenceFeed) unchangedSince(since uint64, keys ...string) bool {
	if f == nil {
		return false
	}
	changed, _, whole := f.changedSince(since, keys)
	return !changed && whole
}

// Seen is when the feed last saw a change (zero: none yet); the bench's reaction
// latency counts from the evidence to the plugin's next step.
func (f *EvidenceFeed) Seen() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// evidence is the run's feed (nil: none).
func (w *World) evidence() *EvidenceFeed {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.feed
}

// markEvidence is the point a wait's next round of reads starts from (0 without a feed).
func (w *World) markEvidence() uint64 { return w.evidence().mark() }

// awaitEvidence waits, after a round of reads that started at since, until one of the
// objects named by keys changes, at most upTo and at most the safety net (upTo 0: the
// safety net); then forgets the kept
// reads, as sleep does. Without a feed, or while one of its watches is not open, it
// sleeps polled instead, at most (the waits poll as they did before).
func (w *World) awaitEvidence(ctx context.Context, since uint64, polled, upTo time.Duration, keys ...string) error {
	f := w.evidence()
	if f == nil {
		return w.sleep(ctx, polled)
	}
	if upTo <= 0 || upTo > w.safetyNet() {
		upTo = w.safetyNet()
	}
	defer w.Forget()
	t := time.NewTimer(upTo)
	defer t.Stop()
	for {
		changed, wake, whole := f.changedSince(since, keys)
		switch {
		case changed:
			return nil
		case !whole:
			// A watch is not open: its changes would go unseen; poll meanwhile.
			return sleep(ctx, min(upTo, polled))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case <-wake:
		}
	}
}

// safetyNet is the longest a wait on a working feed goes without reading.
func (w *World) safetyNet() time.Duration { return safetyNetPolls * w.poll() }

// unknownDue is the most a wait on the feed lets pass before reading again after a
// round that found what: upTo, but the poll interval after a read that failed (its
// words start "cannot " or "state unknown"): no object change need follow a failed read.
func (w *World) unknownDue(what string, upTo time.Duration) time.Duration {
	if strings.HasPrefix(what, "cannot ") || strings.HasPrefix(what, "state unknown") {
		if upTo <= 0 || upTo > w.poll() {
			return w.poll()
		}
	}
	return upTo
}
