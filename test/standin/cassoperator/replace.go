package cassoperator

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// The datacenter's side of a node replacement: a pod listed in status.nodeReplacements
// (the replacenode task's pre-process, tasks_replace.go) starts with the management
// API's replace_ip, and leaves the list once it is Started again. Sources:
// pkg/reconciliation/reconcile_racks.go startCassandra, updateCurrentReplacePodsProgress,
// CheckPodsReady; reconcile_racks_helpers.go FindIpForHostId; pkg/httphelper/client.go
// CallLifecycleStartEndpointWithReplaceIp; STREAMING-AND-REPLACE.md §8.

// ActFinishReplace: the status patch of updateCurrentReplacePodsProgress (the pod out of
// nodeReplacements, nodeStatuses refreshed with the new host IDs), then the Normal
// event FinishedReplaceNode.
const ActFinishReplace Action = "finish-replace"

// replaceTimeout is updateCurrentReplacePodsProgress's "replacing for over 30 minutes".
const replaceTimeout = 30 * time.Minute

// replaceAddress is the replace_ip startCassandra passes for pod: "" when the pod is not
// in nodeReplacements, or has no old host ID (it never joined: a normal start), or no
// live node's gossip knows that host ID any more (FindIpForHostId's "never joined").
// An error when no node can be asked (FindIpForHostId with no endpoint data).
func (w *world) replaceAddress(pod string) (string, error) {
	if !slices.Contains(w.replacements, pod) {
		return "", nil
	}
	hostID := w.statuses[pod].HostID
	if hostID == "" {
		return "", nil
	}
	live := false
	for _, n := range w.endpoints {
		live = live || n.Running
	}
	if !live {
		return "", fmt.Errorf("failed to start replace of cassandra node %s for pod %s due to error: no pods available to ask for the IP address of %s", hostID, pod, hostID)
	}
	for _, n := range w.endpoints {
		if n.HostID == hostID && n.Address != "" {
			return n.Address, nil
		}
	}
	return "", nil
}

// startReplacing is the lifecycle start with replace_ip (httphelper
// CallLifecycleStartEndpointWithReplaceIp): the management API starts Cassandra with
// -Dcassandra.replace_address_first_boot=<ip> (STREAMING-AND-REPLACE.md §8). The data
// dir is the world's: a pod whose node the sim still runs starts on that node's data
// (RestartWith: a bootstrapped one ignores the _first_boot flag, a half-done one
// retries), a pod whose data was deleted (the replacenode task's PVC delete) starts a
// fresh node with a new host ID (StartFresh).
func (o *Operator) startReplacing(pod *corev1.Pod, known bool, dc, ip string) error {
	opts := sim.StartOptions{ReplaceAddress: ip, FirstBoot: true}
	if known {
		return o.cfg.Cass.RestartWith(pod.Name, opts)
	}
	spec := sim.NodeSpec{Pod: pod.Name, Address: pod.Status.PodIP, DC: dc, Rack: pod.Labels[LabelRack]}
	return o.cfg.Cass.StartFresh(spec, sim.Fault{}, opts)
}

// replaceProgress is updateCurrentReplacePodsProgress (run by UpdateStatus with
// UpdateCassandraNodeStatus, whose entries are changed): a pod of nodeReplacements
// labelled Started and created at or after the ReplacingNodes condition turned True —
// or any Started one once that was 30 minutes ago — is done: it leaves the list and
// every started pod's host ID is read again (UpdateCassandraNodeStatus(true): the
// node's own NORMAL entry), in UpdateStatus's one status patch; then the event. Nothing
// while ReplacingNodes is not True (getTimeStartedReplacingNodes).
func (o *Operator) replaceProgress(w *world, changed map[string]nodeStatus) []op {
	if len(w.replacements) == 0 || w.cond(CondReplacingNodes) != "True" {
		return nil
	}
	since, err := time.Parse(time.RFC3339, w.condTimes[CondReplacingNodes])
	if err != nil {
		return nil
	}
	timedOut := o.cfg.Now().Sub(since) > replaceTimeout
	var done []string
	for _, p := range w.pods {
		if state(p) != StateStarted || !slices.Contains(w.replacements, p.Name) {
			continue
		}
		if timedOut || !p.CreationTimestamp.Time.Before(since) {
			done = append(done, p.Name)
		}
	}
	if len(done) == 0 {
		return nil
	}
	var rest []string
	for _, r := range w.replacements {
		if !slices.Contains(done, r) {
			rest = append(rest, r)
		}
	}
	statuses := map[string]nodeStatus{}
	for k, v := range changed {
		statuses[k] = v
	}
	for _, p := range w.pods {
		if state(p) != StateStarted || p.Status.PodIP == "" || !mgmtUp(p) {
			continue
		}
		cur, ok := statuses[p.Name]
		if !ok {
			cur = w.statuses[p.Name]
		}
		if n, ok := w.nodeOf(p.Name); ok && n.Running && n.Mode == sim.ModeNormal && n.HostID != cur.HostID {
			cur.HostID = n.HostID
			statuses[p.Name] = cur
		}
	}
	// RemoveValueFromStringArray leaves an empty list, not nil: the field stays, as [].
	rest = append([]string{}, rest...)
	return []op{{ActFinishReplace, func(ctx context.Context) error {
		st := map[string]any{"nodeReplacements": rest}
		if len(statuses) > 0 {
			st["nodeStatuses"] = statuses
		}
		if err := o.patchStatus(ctx, st); err != nil {
			return err
		}
		for _, pod := range done {
			if err := o.event(ctx, w, "FinishedReplaceNode", "Finished replacing pod "+pod); err != nil {
				return err
			}
		}
		return nil
	}}}
}

// event records a Normal event on the datacenter as FACTS §8 saw them: the code in
// action, the human text in reason, note empty (events.k8s.io/v1).
func (o *Operator) event(ctx context.Context, w *world, action, text string) error {
	now := o.cfg.Now()
	ref := corev1.ObjectReference{APIVersion: DatacenterGVR.GroupVersion().String(), Kind: "CassandraDatacenter",
		Namespace: o.cfg.Namespace, Name: w.dcName, UID: w.dc.GetUID()}
	e := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", w.dcName, now.UnixNano()), Namespace: o.cfg.Namespace},
		EventTime:  metav1.NewMicroTime(now), ReportingController: "cass-operator", ReportingInstance: "cass-operator",
		Action: action, Reason: text, Regarding: ref, Type: corev1.EventTypeNormal,
	}
	_, err := o.cfg.Kube.EventsV1().Events(o.cfg.Namespace).Create(ctx, e, metav1.CreateOptions{})
	return err
}
