package operation

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	pubnodetool "github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// CheckAccess asks the API server (SelfSubjectAccessReview) for every permission, at
// once, and refuses naming each one that is missing.
func CheckAccess(ctx context.Context, kc kubernetes.Interface, needed []pub.Access) error {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		missing []string
		errs    []string
	)
	for _, a := range needed {
		wg.Add(1)
		go func(a pub.Access) {
			defer wg.Done()
			r, err := kc.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authv1.ResourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.Group, Resource: a.Resource, Subresource: a.Subresource},
			}}, metav1.CreateOptions{})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				errs = append(errs, fmt.Sprintf("%s: %v", a, err))
			case !r.Status.Allowed:
				missing = append(missing, a.String())
			}
		}(a)
	}
	wg.Wait()
	sort.Strings(missing)
	if len(missing) > 0 {
		return exit.Refusedf("you are not allowed to: %s. Ask for these permissions (docs/rbac.yaml lists all the plugin uses); nothing changed", strings.Join(missing, "; "))
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return exit.Refusedf("cannot check permissions: %s; nothing changed", strings.Join(errs, "; "))
	}
	return nil
}

// ReplicationCheck returns the keyspaces whose replication factor in dc would exceed
// the nodes left after removing leaving nodes (NetworkTopologyStrategy per DC,
// SimpleStrategy against the whole ring). ok is false when the keyspaces could not be
// read (3.11 prints none in describecluster).
func ReplicationCheck(desc nodetool.ClusterDescription, ring pubnodetool.Ring, dc string, leaving int) (problems []string, ok bool) {
	if len(desc.Keyspaces) == 0 {
		return nil, false
	}
	inDC, total := 0, len(ring.Nodes)
	for _, n := range ring.Nodes {
		if n.DC == dc {
			inDC++
		}
	}
	for _, ks := range desc.Keyspaces {
		class := ks.Class
		if i := strings.LastIndexByte(class, '.'); i >= 0 {
			class = class[i+1:]
		}
		var rf, remain int
		switch class {
		case "NetworkTopologyStrategy":
			rf, _ = strconv.Atoi(ks.Options[dc])
			remain = inDC - leaving
		case "SimpleStrategy":
			rf, _ = strconv.Atoi(ks.Options["replication_factor"])
			remain = total - leaving
		default:
			continue // LocalStrategy, EverywhereStrategy: no placement to keep
		}
		if rf > 0 && remain < rf {
			problems = append(problems, fmt.Sprintf("keyspace %s has replication factor %d in %s but only %d nodes would remain", ks.Name, rf, dc, remain))
		}
	}
	return problems, true
}

// ParseLoad converts nodetool's Load cell ("1.2 GiB", "1,2 GiB", "103 KB") to bytes.
func ParseLoad(s string) (float64, bool) {
	f := strings.Fields(strings.TrimSpace(s))
	if len(f) != 2 {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", "."), 64)
	if err != nil {
		return 0, false
	}
	mult := map[string]float64{"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[f[1]]
	if mult == 0 {
		return 0, false
	}
	return v * mult, true
}

// SpaceCheck verifies that the nodes remaining in each rack have enough free space on
// their data volume (capacity minus Load) for the Load of the rack's leaving nodes: with
// NetworkTopologyStrategy and racks >= RF, a rack's data stays in that rack. ok is false
// when a capacity or a load is unknown.
func SpaceCheck(leaving, remaining []RackNode) (problems []string, ok bool) {
	need, free, ok := rackSpace(leaving, remaining)
	if !ok {
		return nil, false
	}
	racks := make([]string, 0, len(need))
	for r := range need {
		racks = append(racks, r)
	}
	sort.Strings(racks)
	for _, r := range racks {
		if need[r] > free[r] {
			problems = append(problems, fmt.Sprintf("rack %s: the leaving nodes hold %s but the remaining nodes have only %s free on their data volumes", r, human(need[r]), human(free[r])))
		}
	}
	return problems, true
}

// rackSpace sums, per rack, the leaving nodes' Load and the remaining nodes' free space
// (capacity minus Load): the figures SpaceCheck compares.
func rackSpace(leaving, remaining []RackNode) (need, free map[string]float64, ok bool) {
	need = map[string]float64{}
	free = map[string]float64{}
	for _, n := range leaving {
		if n.Load < 0 {
			return nil, nil, false
		}
		need[n.Rack] += n.Load
	}
	for _, n := range remaining {
		if n.Load < 0 || n.Capacity <= 0 {
			return nil, nil, false
		}
		if f := n.Capacity - n.Load; f > 0 {
			free[n.Rack] += f
		}
	}
	return need, free, true
}

// NodeSpace is one node's Load and data volume capacity in bytes (Load < 0 or
// Capacity <= 0: unknown).
type NodeSpace struct {
	Load, Capacity float64
}

// RemovalSpace is the preflight's space check for removing the node leaving from a
// rack whose other nodes are remaining (status shows it per rack): the Load to move,
// the free space the others have, and whether both are known.
func RemovalSpace(leaving NodeSpace, remaining []NodeSpace) (need, free float64, ok bool) {
	l := []RackNode{{Rack: "r", Load: leaving.Load, Capacity: leaving.Capacity}}
	var r []RackNode
	for _, n := range remaining {
		r = append(r, RackNode{Rack: "r", Load: n.Load, Capacity: n.Capacity})
	}
	needs, frees, ok := rackSpace(l, r)
	if !ok {
		return 0, 0, false
	}
	return needs["r"], frees["r"], true
}

// DataCapacity is the capacity of a data claim (status, else the request; 0: unknown).
func DataCapacity(pvc *corev1.PersistentVolumeClaim) float64 { return dataCapacity(pvc) }

// RackNode is a node's rack, Load and data volume capacity in bytes (Load < 0 or
// Capacity <= 0: unknown), for SpaceCheck.
type RackNode struct {
	Rack           string
	Load, Capacity float64
}

// dataCapacity is the capacity of a pod's data claim (status, else the request).
func dataCapacity(pvc *corev1.PersistentVolumeClaim) float64 {
	if q, ok := pvc.Status.Capacity[corev1.ResourceStorage]; ok {
		return float64(q.Value())
	}
	if q, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		return float64(q.Value())
	}
	return 0
}

func human(b float64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	return strconv.FormatFloat(b, 'f', 2, 64) + " " + units[i]
}
