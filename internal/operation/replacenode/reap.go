package replacenode

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Every block carries its operation's ID (script.go). A block whose operation is gone
// (no checkpoint holds that ID: its record wiped, its cluster deleted, it ended without
// taking it out) would append the replace option at every start of its pod, and a
// fresh volume there would try to replace an address long gone. Later commands reap
// such blocks, as they reap stale pause holders.

// Stands says whether operation id still stands (a checkpoint holds it). An error
// leaves it standing: unknown is never gone.
type Stands func(id string) (bool, error)

// StaleBlocks lists the blocks in key of ConfigMap ns/name whose operation is gone,
// and returns the ConfigMap as read (nil: gone, nothing to reap).
func StaleBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands Stands) (*corev1.ConfigMap, []string, error) {
	cm, err := kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("cannot read ConfigMap %s/%s: %w", ns, name, err)
	}
	var stale []string
	for _, id := range blockIDs(cm.Data[key]) {
		ok, err := stands(id)
		if err == nil && !ok {
			stale = append(stale, id)
		}
	}
	return cm, stale, nil
}

// ReapBlocks takes the blocks of operations that are gone out of key of ConfigMap
// ns/name, leaving the rest of the script as it was, in one write guarded by the
// resourceVersion read (the ConfigMap is read before the operations are judged: a
// block written since fails the write). It lists the operations whose blocks went.
func ReapBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands Stands) ([]string, error) {
	cm, stale, err := StaleBlocks(ctx, kube, ns, name, key, stands)
	if err != nil || len(stale) == 0 {
		return nil, err
	}
	text := cm.Data[key]
	empty := false
	for _, id := range stale {
		text, empty = withoutBlock(text, id)
	}
	cm = cm.DeepCopy()
	if empty {
		delete(cm.Data, key)
	} else {
		cm.Data[key] = text
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("cannot take the blocks of operations that are gone (%v) out of ConfigMap %s/%s: %w", stale, ns, name, err)
	}
	return stale, nil
}

// StaleScriptBlocks lists the operations, gone, whose blocks key of ConfigMap ns/name
// still holds (StaleBlocks): the lifecycle's reaping asks each kind that writes the
// start script (internal/operation/lifecycle, staleblocks.go).
func (Kind) StaleScriptBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands func(id string) (bool, error)) ([]string, error) {
	_, stale, err := StaleBlocks(ctx, kube, ns, name, key, stands)
	return stale, err
}

// ReapScriptBlocks takes those blocks out (ReapBlocks) and lists their operations.
func (Kind) ReapScriptBlocks(ctx context.Context, kube kubernetes.Interface, ns, name, key string, stands func(id string) (bool, error)) ([]string, error) {
	return ReapBlocks(ctx, kube, ns, name, key, stands)
}
