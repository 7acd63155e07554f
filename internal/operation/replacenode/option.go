package replacenode

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// configMap reads the ConfigMap of the planned name as it is now ((nil, nil): gone).
// One re-created since the plan (another UID) is read as it is: what it holds of the
// operation's block is what the pods run. Only writing the block needs the planned one
// (plannedConfigMap).
func (r *run) configMap(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := r.w.Kube.CoreV1().ConfigMaps(r.w.CP.Namespace).Get(ctx, r.rep.ConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read ConfigMap %s: %w", r.rep.ConfigMap, err)
	}
	return cm, nil
}

// plannedConfigMap is configMap for a write of the block: one of that name with another
// UID is not the one planned, and the run stops while abort can still end the
// operation with nothing discarded. Past the point of no return the block must reach
// the pods whatever ConfigMap of that name they mount: the write goes on, said.
func (r *run) plannedConfigMap(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := r.configMap(ctx)
	if err != nil || cm == nil || string(cm.UID) == r.rep.ConfigMapUID {
		return cm, err
	}
	past, err := r.pastNoReturn(ctx)
	if err != nil {
		return nil, err
	}
	if past == "" {
		return nil, &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("ConfigMap %s/%s was re-created since the plan (UID %s, planned %s): the replace option is not written into a ConfigMap nobody checked; "+
			"nothing of the dead node was discarded: abort this operation (kubectl cassandra abort -n %s %s) and plan again", r.w.CP.Namespace, r.rep.ConfigMap, cm.UID, r.rep.ConfigMapUID, r.w.CP.Namespace, r.w.CP.Cluster)}
	}
	if r.w.Reporter != nil {
		r.w.Reporter.Warn(StepSetOption+"/"+r.rep.Pod, fmt.Sprintf("ConfigMap %s/%s was re-created since the plan (UID %s, planned %s); %s, so the replace option is written into it: the new pod needs it",
			r.w.CP.Namespace, r.rep.ConfigMap, cm.UID, r.rep.ConfigMapUID, past))
	}
	return cm, nil
}

// script is the planned key of cm, and whether it is there.
func (r *run) script(cm *corev1.ConfigMap) (string, bool) {
	if cm == nil {
		return "", false
	}
	s, ok := cm.Data[r.rep.Key]
	return s, ok
}

// setOption writes the operation's block into the start script, so that the
// replacement (and only it) starts with -Dcassandra.replace_address_first_boot=<dead
// node's address> in the file its version reads. _first_boot: a restart of the
// replacement once bootstrapped ignores it (§4.1).
type setOption struct{ *run }

func (s *setOption) Describe() string {
	return fmt.Sprintf("write the replace option for %s into ConfigMap %s (%s)", s.rep.Pod, s.rep.ConfigMap, s.rep.Key)
}

// PlanText implements steps.PlanTexter.
func (s *setOption) PlanText() string {
	return fmt.Sprintf("append to key %s of ConfigMap %s a block that, on pod %s only, appends -Dcassandra.replace_address_first_boot=%s to %s (the file Cassandra %s reads); on every other pod it does nothing and exits 0",
		s.rep.Key, s.rep.ConfigMap, s.rep.Pod, s.rep.Address, s.rep.File, s.rep.Version)
}

// Done: the block is in the script, or the replace went past it (pastOption: the
// steps after it ran, and the last one may have taken the block out again: a run that
// died before its checkpoint write recorded them leaves this step pending). A block
// taken out (a GitOps sync) before the planned pod went is written again.
func (s *setOption) Done(ctx context.Context) (bool, error) {
	if ok, err := s.written(ctx); err != nil || ok {
		return ok, err
	}
	return s.pastOption(ctx)
}

// pastOption reports whether the replace went past the block: the dead node's data
// and pod are both discarded (its planned claims gone or being deleted, none planned;
// its planned pod gone, none planned), so the replacement has started from then on.
// A pod deleted by someone else on claims still intact is not: it runs the dead node
// again.
func (r *run) pastOption(ctx context.Context) (bool, error) {
	if len(r.n.PVCs) == 0 && r.n.PodUID == "" {
		return false, nil
	}
	left, err := r.claimsLeft(ctx)
	if err != nil || len(left) > 0 {
		return false, err
	}
	if r.n.PodUID == "" {
		return true, nil
	}
	return r.plannedPodGone(ctx)
}

// written reports whether the block is in the script now.
func (s *setOption) written(ctx context.Context) (bool, error) {
	cm, err := s.configMap(ctx)
	if err != nil {
		return false, err
	}
	text, _ := s.script(cm)
	return hasBlock(text, s.w.CP.OperationID), nil
}

// Safe: the ConfigMap is still there (the block cannot be written into nothing), and
// the node is still dead.
func (s *setOption) Safe(ctx context.Context) error {
	return s.w.WaitSafe(ctx, s.id(), func() (string, error) {
		cm, err := s.plannedConfigMap(ctx)
		if err != nil {
			return "", err
		}
		if cm == nil {
			return "", &operation.Fatal{Code: operation.ExitRefused, Err: fmt.Errorf("ConfigMap %s/%s is gone: nothing was written; abort this operation (kubectl cassandra abort -n %s %s)", s.w.CP.Namespace, s.rep.ConfigMap, s.w.CP.Namespace, s.w.CP.Cluster)}
		}
		return s.stillDead(ctx)
	})
}

func (s *setOption) id() string { return StepSetOption + "/" + s.rep.Pod }

// Do appends the block, guarded by the resourceVersion read (a ConfigMap changed
// since fails the write, and the engine retries from a fresh read).
func (s *setOption) Do(ctx context.Context) error {
	cm, err := s.plannedConfigMap(ctx)
	var fatal *operation.Fatal
	if errorsAs(err, &fatal) {
		return err
	}
	if err != nil || cm == nil {
		return &operation.Retryable{Err: fmt.Errorf("ConfigMap %s not readable: %v", s.rep.ConfigMap, err)}
	}
	b, err := block(s.w.CP.OperationID, s.rep.Pod, s.rep.Address, s.rep.File)
	if err != nil {
		return &operation.Fatal{Code: operation.ExitRefused, Err: err}
	}
	text, exists := s.script(cm)
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[s.rep.Key] = withBlock(text, exists, s.w.CP.OperationID, b)
	return s.update(ctx, cm)
}

// update writes cm at the resourceVersion it was read at.
func (r *run) update(ctx context.Context, cm *corev1.ConfigMap) error {
	_, err := r.w.Kube.CoreV1().ConfigMaps(cm.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return &operation.Retryable{Err: fmt.Errorf("ConfigMap %s changed while it was written: %w", cm.Name, err)}
	}
	return err
}

func (s *setOption) Evident() {}

// removeOption takes the operation's block out of the start script, leaving the rest
// as it was (the key goes when the operation created it and nothing else is left).
type removeOption struct{ *run }

func (s *removeOption) Describe() string {
	return fmt.Sprintf("take the replace option for %s out of ConfigMap %s", s.rep.Pod, s.rep.ConfigMap)
}

func (s *removeOption) Done(ctx context.Context) (bool, error) {
	cm, err := s.configMap(ctx)
	if err != nil {
		return false, err
	}
	text, _ := s.script(cm)
	return !hasBlock(text, s.w.CP.OperationID), nil
}

func (s *removeOption) Safe(context.Context) error { return nil }

func (s *removeOption) Do(ctx context.Context) error {
	return s.removeBlock(ctx)
}

func (s *removeOption) Evident() {}

// removeBlock takes the block out of the ConfigMap (nothing to do when it is not
// there), at the resourceVersion read.
func (r *run) removeBlock(ctx context.Context) error {
	cm, err := r.configMap(ctx)
	if err != nil || cm == nil {
		return err
	}
	text, _ := r.script(cm)
	rest, empty := withoutBlock(text, r.w.CP.OperationID)
	if rest == text {
		return nil
	}
	cm = cm.DeepCopy()
	if empty {
		delete(cm.Data, r.rep.Key)
	} else {
		cm.Data[r.rep.Key] = rest
	}
	return r.update(ctx, cm)
}

var _ operation.PlanTexter = (*setOption)(nil)
