package casskop

import (
	"context"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Busy lists why CassKop is not idle (docs/how-it-works/casskop.md §4.3), from the CR status. A cluster
// without any status was never reconciled by CassKop: nothing to be busy with.
func Busy(u *unstructured.Unstructured) []string {
	st, ok := u.Object["status"].(map[string]any)
	if !ok || len(st) == 0 {
		return nil
	}
	var why []string
	str := func(m map[string]any, k string) string { v, _ := m[k].(string); return v }
	if p := str(st, "phase"); p != "" && p != "Running" {
		why = append(why, fmt.Sprintf("status.phase is %s (want Running)", p))
	}
	if s := str(st, "lastClusterActionStatus"); s != "" && s != "Done" {
		why = append(why, fmt.Sprintf("status.lastClusterAction %s is %s", str(st, "lastClusterAction"), s))
	}
	racks, _ := st["cassandraRackStatus"].(map[string]any)
	names := make([]string, 0, len(racks))
	for k := range racks {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		rs, _ := racks[name].(map[string]any)
		if la, ok := rs["cassandraLastAction"].(map[string]any); ok {
			if s := str(la, "status"); s != "" && s != "Done" {
				why = append(why, fmt.Sprintf("rack %s: cassandraLastAction %s is %s", name, str(la, "name"), s))
			}
		}
		if po, ok := rs["podLastOperation"].(map[string]any); ok {
			if s := str(po, "status"); s != "" && s != "Done" {
				why = append(why, fmt.Sprintf("rack %s: podLastOperation %s is %s", name, str(po, "name"), s))
			}
		}
	}
	return why
}

// BusyPods lists pods of the cluster carrying a queued or running CassKop pod operation.
func (a *Adapter) BusyPods(ctx context.Context, ns, cluster string) ([]string, error) {
	pods, err := a.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: LabelCluster + "=" + cluster + "," + LabelOperationStatus + " in (ToDo,Ongoing)",
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, fmt.Sprintf("pod %s: operation %s is %s", p.Name, p.Labels["operation-name"], p.Labels[LabelOperationStatus]))
	}
	return out, nil
}
