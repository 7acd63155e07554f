package steps

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// repairDeletePVCs is deletePVCs for a repair: on top of its checks, no pod may mount
// the claims (a leftover claim found in the operator's status could have been picked
// up by something else).
type repairDeletePVCs struct{ *deletePVCs }

// Safe: deletePVCs' checks, and no pod uses the claims.
func (s *repairDeletePVCs) Safe(ctx context.Context) error {
	if err := s.deletePVCs.Safe(ctx); err != nil {
		return err
	}
	pods, err := s.w.Kube.CoreV1().Pods(s.w.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("cannot list pods to check the claims are unused: %w", err)
	}
	planned := map[string]bool{}
	for _, c := range s.n.PVCs {
		planned[c.Name] = true
	}
	var used []string
	for _, p := range pods.Items {
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && planned[v.PersistentVolumeClaim.ClaimName] {
				used = append(used, fmt.Sprintf("PVC %s is used by pod %s", v.PersistentVolumeClaim.ClaimName, p.Name))
			}
		}
	}
	if len(used) > 0 {
		return fmt.Errorf("%s", strings.Join(used, "; "))
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
