package checkpoint

import (
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// ErrLost means another writer changed the checkpoint since this process last wrote it.
var ErrLost = errors.New("the checkpoint was changed by someone else")

// ErrRemoved (also ErrLost) means the checkpoint was removed from the cluster resource
// while this process held it: nobody holds the operation now (a GitOps sync, a
// `kubectl annotate …-`).
var ErrRemoved = fmt.Errorf("%w: it was removed", ErrLost)

// ErrExists means a checkpoint already exists where a new one was to be created.
var ErrExists = errors.New("an operation is already in flight on this cluster")

// Store reads and writes the checkpoint annotation with resourceVersion preconditions.
// It never overwrites blindly: on a conflict it re-reads, and retries only if the
// checkpoint on the server is still the one it wrote (or read) last — same operation,
// same seq and same holder session. The session with the seq is the fencing token: a
// run that lost the checkpoint to another session can never write it again (issue 15's
// lost-write sequence, internal/checkpoint/lock_test.go). A Store is used by one goroutine
// at a time (the engine serializes its writes and fences).
type Store struct {
	Obj record.Object
	// Kinds are the operation kinds the build knows (what Load accepts); Operator, when
	// set, is the operator whose adapter reads the cluster (Load refuses a checkpoint
	// planned for another: Checkpoint.Operator).
	Kinds    Schemas
	Operator string
	Now      func() time.Time
	rv       string
	uid      string
	// seen is the checkpoint on the server as of the last read or write at rv, and
	// seenValue the annotation's exact value then (what a content-fenced write tests).
	seen      token
	seenValue string
	// pending is the seq of a write whose outcome is unknown (a timeout, a broken
	// connection): it may have been applied, under this run's session.
	pending int
	// opened is the cluster resource as the command's first read returned it (Seed),
	// until LoadAsOpened takes it up.
	opened *openedRead
}

// openedRead is one read of the cluster resource: what Load needs of it.
type openedRead struct {
	ann     map[string]string
	uid, rv string
}

// token is what tells whose checkpoint is on the server: the operation, its seq and
// the holder's session.
type token struct {
	op      string
	seq     int
	session string
}

func tokenOf(cp *record.Checkpoint) token {
	if cp == nil {
		return token{}
	}
	return token{op: cp.OperationID, seq: cp.Seq, session: cp.Holder.Session}
}

// Load reads the current checkpoint; nil when there is none. A corrupt checkpoint, one
// from a newer schema, another cluster or another operator is an error.
func (s *Store) Load(ctx context.Context) (*record.Checkpoint, error) {
	ann, uid, rv, err := s.Obj.ReadAnnotations(ctx)
	if err != nil {
		return nil, err
	}
	return s.load(ann, uid, rv)
}

// Seed keeps the cluster resource as the command's first read returned it (its
// annotations, UID and resourceVersion), for LoadAsOpened.
func (s *Store) Seed(ann map[string]string, uid, rv string) {
	s.opened = &openedRead{ann: ann, uid: uid, rv: rv}
}

// LoadAsOpened is Load from the read that opened the command (Seed), once, instead of
// a read of its own; without one, or a second time, it is Load. A new operation's first
// question (is one in flight?) is asked right after that read: a read repeated
// milliseconds later would only delay the plan. Nothing rests on it being fresher: the
// checkpoint's create tests the resourceVersion read, so a write since (another run's
// checkpoint, the operator's status) makes it read again and judge anew.
func (s *Store) LoadAsOpened(ctx context.Context) (*record.Checkpoint, error) {
	o := s.opened
	s.opened = nil
	if o == nil {
		return s.Load(ctx)
	}
	return s.load(o.ann, o.uid, o.rv)
}

// load decodes the checkpoint from a read of the cluster resource and keeps the read's
// resourceVersion for the next guarded write.
func (s *Store) load(ann map[string]string, uid, rv string) (*record.Checkpoint, error) {
	s.rv, s.uid, s.seen, s.seenValue, s.pending = rv, uid, token{}, "", 0
	v, ok := ann[Annotation]
	if !ok {
		return nil, nil
	}
	cp, err := Decode(v, uid, s.Kinds)
	if err == nil {
		if err := PlannedFor(cp, s.Operator); err != nil {
			return nil, err
		}
	}
	s.seen, s.seenValue = tokenOf(cp), v
	return cp, err
}

// LastOperation reads the record of the last finished operation, if any.
func (s *Store) LastOperation(ctx context.Context) (*LastOperation, error) {
	ann, _, _, err := s.Obj.ReadAnnotations(ctx)
	if err != nil {
		return nil, err
	}
	v, ok := ann[LastOperationAnnotation]
	if !ok {
		return nil, nil
	}
	var lo LastOperation
	if err := json.Unmarshal([]byte(v), &lo); err != nil {
		return nil, fmt.Errorf("annotation %s is not valid JSON: %w", LastOperationAnnotation, err)
	}
	return &lo, nil
}

// Create writes a new checkpoint; it fails with ErrExists if one appeared meanwhile.
func (s *Store) Create(ctx context.Context, cp *record.Checkpoint) error {
	if s.rv == "" {
		if existing, err := s.Load(ctx); err != nil {
			return err
		} else if existing != nil {
			return fmt.Errorf("%w (operation %s)", ErrExists, existing.OperationID)
		}
	}
	if cp.ClusterUID != s.uid {
		return fmt.Errorf("%w: plan made for UID %s, object is %s", ErrOtherCluster, cp.ClusterUID, s.uid)
	}
	cp.Seq = 1
	cp.UpdatedAt = s.now()
	v, err := Encode(cp, s.Kinds)
	if err != nil {
		return err
	}
	rv, err := s.Obj.PatchAnnotations(ctx, s.rv, map[string]*string{Annotation: &v})
	if apierrors.IsConflict(err) {
		// Someone wrote the object since we read it: maybe another run created its own
		// checkpoint. Re-read and let the caller decide.
		if existing, lerr := s.Load(ctx); lerr != nil {
			return lerr
		} else if existing != nil {
			return fmt.Errorf("%w (operation %s, started by %s)", ErrExists, existing.OperationID, existing.StartedBy)
		}
		return s.Create(ctx, cp)
	}
	if err != nil {
		return fmt.Errorf("cannot write the checkpoint: %w", err)
	}
	s.rv, s.seen, s.seenValue, s.pending = rv, tokenOf(cp), v, 0
	return nil
}

// Save writes cp (with Seq incremented) over the checkpoint this process wrote or read
// last. A failed write leaves cp as it was (Seq and UpdatedAt): the seq this run last
// wrote is the only one it may build on.
func (s *Store) Save(ctx context.Context, cp *record.Checkpoint) error {
	seq, updated := cp.Seq, cp.UpdatedAt
	cp.Seq = seq + 1
	cp.UpdatedAt = s.now()
	v, err := Encode(cp, s.Kinds)
	if err == nil {
		err = s.write(ctx, cp, map[string]*string{Annotation: &v})
	}
	if err != nil {
		cp.Seq, cp.UpdatedAt = seq, updated
	}
	return err
}

// Fence proves, with a fresh read, that the checkpoint on the server is still cp's
// operation, at the seq this run last wrote, held by cp's session: the engine calls it
// right before an action whose start it did not write. A foreign write to the object
// (the operator's status, the run's own spec update) is no loss: its resourceVersion is
// adopted, so the next write does not conflict.
func (s *Store) Fence(ctx context.Context, cp *record.Checkpoint) error {
	return s.stillOurs(ctx, cp, "cannot read the checkpoint to check that this run still holds it")
}

// stillOurs re-reads the object and says whether it shows the checkpoint this run last
// wrote or read, held by cp's session (or, after a write with an unknown outcome, that
// write); if so it adopts the object's resourceVersion, as Fence and write's retry both
// need. readFailed is the caller's words for a failed read, which says why it read.
func (s *Store) stillOurs(ctx context.Context, cp *record.Checkpoint, readFailed string) error {
	ann, uid, rv, err := s.Obj.ReadAnnotations(ctx)
	if err != nil {
		return fmt.Errorf("%s: %w", readFailed, err)
	}
	if uid != s.uid {
		return fmt.Errorf("%w: the cluster resource was deleted and re-created (UID %s, was %s)", ErrLost, uid, s.uid)
	}
	v, ok := ann[Annotation]
	if !ok {
		return fmt.Errorf("%w (this run wrote seq %d)", ErrRemoved, s.seen.seq)
	}
	cur, derr := Decode(v, uid, s.Kinds)
	if derr != nil {
		return fmt.Errorf("%w (it is unreadable now: %v; this run wrote seq %d)", ErrLost, derr, s.seen.seq)
	}
	got := tokenOf(cur)
	want := s.seen
	if s.pending > 0 && got.seq == s.pending {
		want = token{op: cp.OperationID, seq: s.pending, session: cp.Holder.Session}
	}
	if got != want || want.op != cp.OperationID {
		return fmt.Errorf("%w (now operation %s seq %d, held by %s session %s; this run wrote seq %d as session %s)",
			ErrLost, cur.OperationID, cur.Seq, cur.Holder, nonEmpty(cur.Holder.Session, "(none)"), s.seen.seq, nonEmpty(s.seen.session, "(none)"))
	}
	s.rv, s.seen, s.seenValue, s.pending = rv, got, v, 0
	return nil
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Finish removes the checkpoint and records the last operation, in one write.
func (s *Store) Finish(ctx context.Context, cp *record.Checkpoint, last LastOperation) error {
	b, err := json.Marshal(last)
	if err != nil {
		return err
	}
	v := string(b)
	if err := s.write(ctx, cp, map[string]*string{Annotation: nil, LastOperationAnnotation: &v}); err != nil {
		return err
	}
	s.seen, s.seenValue = token{}, ""
	return nil
}

// write writes set over the checkpoint this run last wrote or read. First fenced by
// content where the Object can (writeIfUnchanged): the operator's status writes then
// cost no conflict. Else, or if that was refused, at the last seen resourceVersion: on a
// conflict it re-reads, and if the checkpoint on the server is still the one this run
// last wrote or read (stillOurs) it retries, else ErrLost.
func (s *Store) write(ctx context.Context, cp *record.Checkpoint, set map[string]*string) error {
	if done, err := s.writeIfUnchanged(ctx, cp, set); done || err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		rv, err := s.Obj.PatchAnnotations(ctx, s.rv, set)
		if err == nil {
			s.wrote(cp, rv, set)
			return nil
		}
		if !apierrors.IsConflict(err) {
			return s.writeFailed(cp, set, err)
		}
		if attempt >= 10 {
			return fmt.Errorf("cannot write the checkpoint: still conflicting after %d attempts: %w", attempt, err)
		}
		if err := s.stillOurs(ctx, cp, "cannot re-read the cluster after a write conflict"); err != nil {
			return err
		}
	}
}

// writeIfUnchanged writes set only while the object is this run's (its UID) and the
// checkpoint annotation is, byte for byte, the value this run last wrote or read: the
// same fence as write's resourceVersion path after stillOurs, since the token stillOurs
// compares is part of that value, but checked by the API server as it applies the write,
// so a write to the rest of the object meanwhile does not refuse it. done is false when
// it did not write: the Object cannot (not a record.ContentFenced), the outcome of this
// run's last write is unknown (pending: the server may hold either value), or the
// server refused it (record.ErrContentChanged: the resourceVersion path then re-reads
// and judges, as on a conflict).
func (s *Store) writeIfUnchanged(ctx context.Context, cp *record.Checkpoint, set map[string]*string) (done bool, err error) {
	cf, ok := s.Obj.(record.ContentFenced)
	if !ok || s.pending > 0 || s.seenValue == "" || s.uid == "" {
		return false, nil
	}
	rv, err := cf.PatchAnnotationsIf(ctx, s.uid, Annotation, s.seenValue, set)
	if errors.Is(err, record.ErrContentChanged) {
		return false, nil
	}
	if err != nil {
		return false, s.writeFailed(cp, set, err)
	}
	s.wrote(cp, rv, set)
	return true, nil
}

// wrote records a write of set that the server applied at rv.
func (s *Store) wrote(cp *record.Checkpoint, rv string, set map[string]*string) {
	s.rv, s.seen, s.seenValue, s.pending = rv, tokenOf(cp), "", 0
	if v := set[Annotation]; v != nil {
		s.seenValue = *v
	}
}

// writeFailed is a write's error other than a conflict: its outcome is unknown, so a
// checkpoint write may have been applied under this run's session.
func (s *Store) writeFailed(cp *record.Checkpoint, set map[string]*string, err error) error {
	if set[Annotation] != nil && cp.Holder.Session != "" {
		s.pending = cp.Seq // it may have been applied
	}
	return fmt.Errorf("cannot write the checkpoint: %w", err)
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}
