package casskop

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// CassKop keeps the seeds it gives every Cassandra pod in status.seedlist (lowercase
// key), one hostname per seed: `<pod>.<cluster>.<namespace>`, the pod's name in the
// cluster's headless service (CassKop's InitSeedList, api/v2/cassandracluster_types.go). It does not prune the list after a scale-down: a pod re-added at
// such an ordinal finds its own name among the seeds, starts as a seed and does not
// bootstrap (it owns ranges without their data).

// Seedlist returns status.seedlist as written.
func Seedlist(u *unstructured.Unstructured) []string {
	status, _ := u.Object["status"].(map[string]any)
	return stringList(status["seedlist"])
}

// SeedPod is the pod a seedlist entry names: the first label of its hostname ("" when
// the entry is empty). An entry that is an address, not a name, names no pod.
func SeedPod(entry string) string {
	entry = strings.TrimSpace(entry)
	if i := strings.LastIndexByte(entry, ':'); i >= 0 && !strings.Contains(entry[:i], ":") {
		entry = entry[:i] // host:port
	}
	host, _, _ := strings.Cut(entry, ".")
	if host == "" || strings.ContainsAny(host, ":") || isNumber(host) {
		return ""
	}
	return host
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// SeedPods are the pods named by status.seedlist.
func SeedPods(u *unstructured.Unstructured) []string {
	var pods []string
	for _, e := range Seedlist(u) {
		if p := SeedPod(e); p != "" {
			pods = append(pods, p)
		}
	}
	return pods
}

// SeedEntry returns the status.seedlist entry naming pod, read now ("" when none).
func (d DCSpec) SeedEntry(ctx context.Context, pod string) (string, error) {
	_, u, err := d.A.Get(ctx, d.NS, d.Name)
	if err != nil {
		return "", err
	}
	for _, e := range Seedlist(u) {
		if SeedPod(e) == pod {
			return e, nil
		}
	}
	return "", nil
}

// SeedRefusal says why a pod listed in status.seedlist is not created, and how to
// take it off (operator.Seeds).
func (a *Adapter) SeedRefusal(ns, cluster, pod, entry string) string {
	where := "status.seedlist"
	if entry != "" {
		where = fmt.Sprintf("%q in status.seedlist", entry)
	}
	return fmt.Sprintf("pod %s is listed as a seed (%s of %s, left by an earlier scale-down): created now it would start as a seed and skip bootstrap, "+
		"showing UN without its data (a cleanup would then drop the only copies of its ranges). Remove that entry from status.seedlist "+
		"(kubectl edit cassandracluster -n %s %s, with --subresource=status where the CRD has one), then run the command again "+
		"(or kubectl cassandra resume -n %s %s when an operation is in flight)", pod, where, cluster, ns, cluster, ns, cluster)
}

// SeedRefusal is the adapter's (steps.SeedLister).
func (d DCSpec) SeedRefusal(ns, cluster, pod, entry string) string {
	return d.A.SeedRefusal(ns, cluster, pod, entry)
}
