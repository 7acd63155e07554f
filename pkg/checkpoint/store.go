package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Object is the resource that carries the checkpoint annotation (the cluster resource).
// It is implemented by the operator plugin, which knows the resource's API.
type Object interface {
	// ReadAnnotations returns the annotations, UID and resourceVersion of the object.
	ReadAnnotations(ctx context.Context) (annotations map[string]string, uid, resourceVersion string, err error)
	// PatchAnnotations sets (non-nil) or removes (nil) annotations, and nothing else,
	// only if the object is still at resourceVersion (a 409 Conflict otherwise).
	PatchAnnotations(ctx context.Context, resourceVersion string, set map[string]*string) (newResourceVersion string, err error)
}

// ErrLost means another writer changed the checkpoint since this process last wrote it.
var ErrLost = errors.New("the checkpoint was changed by someone else")

// ErrExists means a checkpoint already exists where a new one was to be created.
var ErrExists = errors.New("an operation is already in flight on this cluster")

// Store reads and writes the checkpoint annotation with resourceVersion preconditions.
// It never overwrites blindly: on a conflict it re-reads, and retries only if the
// checkpoint on the server is still the one it wrote last.
type Store struct {
	Obj Object
	Now func() time.Time
	rv  string
	uid string
}

// Load reads the current checkpoint; nil when there is none. A corrupt checkpoint, one
// from a newer schema or another cluster is an error.
func (s *Store) Load(ctx context.Context) (*Checkpoint, error) {
	ann, uid, rv, err := s.Obj.ReadAnnotations(ctx)
	if err != nil {
		return nil, err
	}
	s.rv, s.uid = rv, uid
	v, ok := ann[Annotation]
	if !ok {
		return nil, nil
	}
	return Decode(v, uid)
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
func (s *Store) Create(ctx context.Context, cp *Checkpoint) error {
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
	v, err := Encode(cp)
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
	s.rv = rv
	return nil
}

// Save writes cp (with Seq incremented) over the checkpoint this process wrote last.
func (s *Store) Save(ctx context.Context, cp *Checkpoint) error {
	cp.Seq++
	cp.UpdatedAt = s.now()
	v, err := Encode(cp)
	if err != nil {
		cp.Seq--
		return err
	}
	return s.write(ctx, cp, cp.Seq-1, map[string]*string{Annotation: &v})
}

// Finish removes the checkpoint and records the last operation, in one write.
func (s *Store) Finish(ctx context.Context, cp *Checkpoint, last LastOperation) error {
	b, err := json.Marshal(last)
	if err != nil {
		return err
	}
	v := string(b)
	return s.write(ctx, cp, cp.Seq, map[string]*string{Annotation: nil, LastOperationAnnotation: &v})
}

// write patches at the last seen resourceVersion. On a conflict it re-reads: if the
// checkpoint on the server is still ours at wantSeq it retries, else ErrLost.
func (s *Store) write(ctx context.Context, cp *Checkpoint, wantSeq int, set map[string]*string) error {
	for attempt := 0; ; attempt++ {
		rv, err := s.Obj.PatchAnnotations(ctx, s.rv, set)
		if err == nil {
			s.rv = rv
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("cannot write the checkpoint: %w", err)
		}
		if attempt >= 10 {
			return fmt.Errorf("cannot write the checkpoint: still conflicting after %d attempts: %w", attempt, err)
		}
		ann, uid, rv2, rerr := s.Obj.ReadAnnotations(ctx)
		if rerr != nil {
			return fmt.Errorf("cannot re-read the cluster after a write conflict: %w", rerr)
		}
		if uid != s.uid {
			return fmt.Errorf("%w: the cluster resource was deleted and re-created (UID %s, was %s)", ErrLost, uid, s.uid)
		}
		cur, derr := Decode(ann[Annotation], uid)
		if derr != nil || cur.OperationID != cp.OperationID || cur.Seq != wantSeq {
			who := "it was removed"
			if derr == nil {
				who = fmt.Sprintf("now operation %s seq %d, held by %s", cur.OperationID, cur.Seq, cur.Holder)
			}
			return fmt.Errorf("%w (%s; this run wrote seq %d)", ErrLost, who, wantSeq)
		}
		s.rv = rv2
	}
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}
