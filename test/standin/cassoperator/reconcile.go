package cassoperator

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-cassandra/kubectl-cassandra/test/sim"
)

// nodeStatus is one status.nodeStatuses entry (FACTS §1).
type nodeStatus struct {
	HostID string `json:"hostID,omitempty"`
	IP     string `json:"ip,omitempty"`
	Rack   string `json:"rack,omitempty"`
}

// world is what one pass reads: the datacenter, its StatefulSets (spec rack order),
// its pods and the ring.
type world struct {
	dc        *unstructured.Unstructured
	cluster   string
	dcName    string
	size      int
	racks     []string
	stopped   bool
	conds     map[string]string
	condTimes map[string]string // lastTransitionTime by type
	progress  string
	statuses  map[string]nodeStatus
	sts       []*appsv1.StatefulSet
	pods      []*corev1.Pod // sorted by name
	podByName map[string]*corev1.Pod
	nodes     []sim.NodeView
	// endpoints are what a live node's gossip knows (getCassMetadataEndpoints), nodes
	// no pod runs any more included; replacements is status.nodeReplacements.
	endpoints    []sim.NodeView
	replacements []string
	// deleting: the datacenter has a deletionTimestamp (deletion.go).
	deleting bool
}

func (o *Operator) read(ctx context.Context) (*world, error) {
	c := o.cfg
	dc, err := c.Dyn.Resource(DatacenterGVR).Namespace(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	w := &world{dc: dc, dcName: dc.GetName(), deleting: dc.GetDeletionTimestamp() != nil, conds: map[string]string{}, condTimes: map[string]string{}, statuses: map[string]nodeStatus{}, podByName: map[string]*corev1.Pod{}}
	w.cluster, _, _ = unstructured.NestedString(dc.Object, "spec", "clusterName")
	size, _, _ := unstructured.NestedInt64(dc.Object, "spec", "size")
	w.size = int(size)
	w.stopped, _, _ = unstructured.NestedBool(dc.Object, "spec", "stopped")
	racks, _, _ := unstructured.NestedSlice(dc.Object, "spec", "racks")
	for _, r := range racks {
		if m, ok := r.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				w.racks = append(w.racks, n)
			}
		}
	}
	if len(w.racks) == 0 {
		// apis/cassandra/v1beta1 GetRacks: no racks = one rack named "default".
		w.racks = []string{"default"}
	}
	conds, _, _ := unstructured.NestedSlice(dc.Object, "status", "conditions")
	for _, ci := range conds {
		if m, ok := ci.(map[string]any); ok {
			t, _ := m["type"].(string)
			s, _ := m["status"].(string)
			w.conds[t] = s
			w.condTimes[t], _ = m["lastTransitionTime"].(string)
		}
	}
	w.replacements, _, _ = unstructured.NestedStringSlice(dc.Object, "status", "nodeReplacements")
	w.progress, _, _ = unstructured.NestedString(dc.Object, "status", "cassandraOperatorProgress")
	if ns, ok, _ := unstructured.NestedMap(dc.Object, "status", "nodeStatuses"); ok {
		b, _ := json.Marshal(ns)
		_ = json.Unmarshal(b, &w.statuses)
	}
	for _, r := range w.racks {
		s, err := c.Kube.AppsV1().StatefulSets(c.Namespace).Get(ctx, StatefulSetName(w.cluster, w.dcName, r), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			w.sts = append(w.sts, nil)
			continue
		}
		if err != nil {
			return nil, err
		}
		w.sts = append(w.sts, s)
	}
	sel := labels.SelectorFromSet(labels.Set{LabelCluster: w.cluster, LabelDatacenter: w.dcName}).String()
	pl, err := c.Kube.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, err
	}
	for i := range pl.Items {
		p := &pl.Items[i]
		w.pods = append(w.pods, p)
		w.podByName[p.Name] = p
	}
	sort.Slice(w.pods, func(i, j int) bool { return w.pods[i].Name < w.pods[j].Name })
	if w.nodes, err = c.Cass.Nodes(); err != nil {
		return nil, err
	}
	if w.endpoints, err = c.Cass.Endpoints(); err != nil {
		return nil, err
	}
	return w, nil
}

// cond is GetConditionStatus: "Unknown" when absent (cassandradatacenter_types.go).
func (w *world) cond(t string) string {
	if s, ok := w.conds[t]; ok {
		return s
	}
	return "Unknown"
}

func state(p *corev1.Pod) string { return p.Labels[LabelNodeState] }

// mgmtUp is isMgmtApiRunning (reconcile_racks.go): the cassandra container runs. The
// stand-in reads the pod's phase and IP; it does not wait the real one's 10 s.
func mgmtUp(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != ""
}

func (w *world) nodeOf(pod string) (sim.NodeView, bool) {
	for _, n := range w.nodes {
		if n.Pod == pod {
			return n, true
		}
	}
	return sim.NodeView{}, false
}

// ready is isServerReady (reconcile_racks.go): the cassandra container's readiness
// probe (/api/v0/probes/readiness, FACTS §4), read from the simulated node: its JVM
// runs, it has joined, and it has not left the ring (FACTS §8 assumes a decommissioned
// node fails the probe; Config.DecommissionedStaysReady is the other case).
func (o *Operator) ready(w *world, p *corev1.Pod) bool {
	if !mgmtUp(p) {
		return false
	}
	n, ok := w.nodeOf(p.Name)
	if !ok || !n.Running || n.Joining {
		return false
	}
	return !n.Left || o.cfg.DecommissionedStaysReady
}

// endpoint finds the pod's node in the ring (/api/v0/metadata/endpoints): by IP, then
// by nodeStatuses[pod].hostID (decommission_node.go IsDoneDecommissioning and
// HasStartedDecommissioning). A node the sim no longer lists (LEFT, decommissioned,
// removed) is absent.
func (w *world) endpoint(p *corev1.Pod) (sim.NodeView, bool) {
	for _, n := range w.nodes {
		if n.PeerCode != "" && p.Status.PodIP != "" && n.Address == p.Status.PodIP {
			return n, true
		}
	}
	if st, ok := w.statuses[p.Name]; ok && st.HostID != "" {
		for _, n := range w.nodes {
			if n.PeerCode != "" && n.HostID == st.HostID {
				return n, true
			}
		}
	}
	return sim.NodeView{}, false
}

func (w *world) replicas(i int) int {
	if w.sts[i] == nil || w.sts[i].Spec.Replicas == nil {
		return 0
	}
	return int(*w.sts[i].Spec.Replicas)
}

func (w *world) rackIndex(rack string) int { return slices.Index(w.racks, rack) }

// reconcile is one pass of ReconcileAllRacks (pkg/reconciliation/reconcile_racks.go),
// reduced to the checks that scale, start and settle a datacenter, in its order. It
// returns the writes of the pass, or none and what it waits for.
func (o *Operator) reconcile(ctx context.Context) ([]op, string, error) {
	w, err := o.read(ctx)
	if apierrors.IsNotFound(err) {
		// The request's object is gone: the reconcile ends (controller-runtime's Get
		// NotFound, ignored by the real Reconcile).
		return nil, "CassandraDatacenter " + o.cfg.Name + " not found", nil
	}
	if err != nil {
		return nil, "", err
	}
	// handler.go CalculateReconciliationActions: ProcessDeletion, then addFinalizer,
	// before the racks (deletion.go).
	var pre []op
	if w.deleting {
		ops, wait, done := o.processDeletion(w)
		if done {
			return ops, wait, nil
		}
		pre = ops
	} else if ops := o.addFinalizer(w); len(ops) > 0 {
		// The real one goes on in the same reconcile; the next pass makes the same writes.
		return ops, "", nil
	}
	ops, wait, err := o.reconcileRacks(ctx, w)
	return append(pre, ops...), wait, err
}

// reconcileRacks is ReconcileAllRacks on the datacenter read.
func (o *Operator) reconcileRacks(ctx context.Context, w *world) ([]op, string, error) {
	// CheckStatefulSetControllerCaughtUp (hasStatefulSetControllerCaughtUp): every pod
	// below each StatefulSet's replicas exists.
	for i, s := range w.sts {
		if s == nil {
			continue // created below (checkRackCreation)
		}
		for k := 0; k < w.replicas(i); k++ {
			if w.podByName[fmt.Sprintf("%s-%d", s.Name, k)] == nil {
				return nil, "StatefulSet controller has not caught up with " + s.Name, nil
			}
		}
	}
	// fixMissingPVC (CheckStatefulSetControllerCaughtUp): a Pending pod whose
	// server-data claim is gone (it was re-created while its claim was terminating,
	// kubernetes#74374) is deleted, so the StatefulSet controller makes both again.
	for _, p := range w.pods {
		if p.Status.Phase != corev1.PodPending {
			continue
		}
		_, err := o.cfg.Kube.CoreV1().PersistentVolumeClaims(o.cfg.Namespace).Get(ctx, DataPVCName(p.Name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			name := p.Name
			return []op{{ActDeleteStuckPod, func(ctx context.Context) error {
				return o.cfg.Kube.CoreV1().Pods(o.cfg.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
			}}}, "", nil
		}
	}
	if ops := o.updateStatus(w); len(ops) > 0 {
		return ops, "", nil
	}
	for i, s := range w.sts {
		if s != nil {
			continue
		}
		if w.deleting {
			// A datacenter being deleted gets no new rack here (not modelled).
			return nil, "StatefulSet " + StatefulSetName(w.cluster, w.dcName, w.racks[i]) + " missing while the datacenter is deleted", nil
		}
		return o.checkRackCreation(w), "", nil
	}
	if ops, wait, done := o.checkDecommissioningNodes(w); done {
		return ops, wait, nil
	}
	if w.stopped {
		// CheckRackStoppedState is not modelled.
		return nil, "spec.stopped is not modelled", nil
	}
	if ops := o.checkRackScale(w); len(ops) > 0 {
		return ops, "", nil
	}
	if ops, wait, done := o.checkPodsReady(w); done {
		return ops, wait, nil
	}
	// CheckCassandraNodeStatuses: every started pod has a host ID.
	for _, p := range w.pods {
		if s := state(p); s == StateStarted || s == StateStartedNotReady {
			if st, ok := w.statuses[p.Name]; !ok || st.HostID == "" {
				return nil, "missing host id of " + p.Name, nil
			}
		}
	}
	if ops, wait, done := o.decommissionNodes(w); done {
		return ops, wait, nil
	}
	ops := o.clearActionConditions(w)
	return ops, "", nil
}

// updateStatus is UpdateStatus/UpdateCassandraNodeStatus (reconcile_racks.go): every
// started pod (Started, Started-not-Ready; not Decommissioning) gets its nodeStatuses
// entry (ip, rack, and the host ID the ring gives for its IP when it has none). It
// never removes an entry: only the decommission's cleanup does.
func (o *Operator) updateStatus(w *world) []op {
	changed := map[string]nodeStatus{}
	for _, p := range w.pods {
		if s := state(p); s != StateStarted && s != StateStartedNotReady {
			continue
		}
		cur, had := w.statuses[p.Name]
		next := cur
		if p.Status.PodIP != "" && mgmtUp(p) {
			next.IP = p.Status.PodIP
			next.Rack = p.Labels[LabelRack]
			if next.HostID == "" {
				for _, n := range w.nodes {
					if n.Address == p.Status.PodIP && n.PeerCode != "" {
						next.HostID = n.HostID
					}
				}
			}
		}
		if !had || next != cur {
			changed[p.Name] = next
		}
	}
	if ops := o.replaceProgress(w, changed); len(ops) > 0 {
		return ops
	}
	if len(changed) == 0 {
		return nil
	}
	return []op{{ActUpdateNodeStatuses, func(ctx context.Context) error {
		return o.patchStatus(ctx, map[string]any{"nodeStatuses": changed})
	}}}
}

// checkDecommissioningNodes is CheckDecommissioningNodes (decommission_node.go, FACTS
// §3.5, §8): only while ScalingDown is True, only for pods labelled Decommissioning.
// Not yet leaving: decommission again. LEFT or absent from the ring: shrink the
// StatefulSet by one (if the pod is its last ordinal), delete every PVC of the pod,
// remove its nodeStatuses entry. No labelled pod: ScalingDown=False.
func (o *Operator) checkDecommissioningNodes(w *world) ([]op, string, bool) {
	if w.cond(CondScalingDown) != "True" {
		return nil, "", false
	}
	for _, p := range w.pods {
		if state(p) != StateDecommissioning {
			continue
		}
		ep, listed := w.endpoint(p)
		if listed {
			// Not done. HasStartedDecommissioning: LEAVING in the ring.
			if len(ep.PeerCode) == 2 && ep.PeerCode[1] == 'L' {
				return nil, p.Name + " is leaving", true
			}
			return o.callDecommission(w, p), p.Name + " has not started decommissioning", true
		}
		// cleanUpAfterDecommissionedPod.
		var ops []op
		pod := p
		if i := w.rackIndex(p.Labels[LabelRack]); i >= 0 {
			s := w.sts[i]
			n := w.replicas(i)
			// RemoveDecommissionedPodFromSts: only when the pod is the last ordinal.
			if strings.HasSuffix(p.Name, fmt.Sprintf("sts-%d", n-1)) {
				ops = append(ops, o.setProgressOp(w, ProgressUpdating)...)
				ops = append(ops, op{ActShrinkStatefulSet, func(ctx context.Context) error {
					return o.patchStatefulSetReplicas(ctx, s.Name, n-1)
				}})
			}
		} else {
			return nil, "no StatefulSet for the rack of " + p.Name, true
		}
		ops = append(ops, op{ActDeletePVCs, func(ctx context.Context) error { return o.deletePodPVCs(ctx, pod) }})
		ops = append(ops, op{ActRemoveNodeStatus, func(ctx context.Context) error {
			return o.patchStatus(ctx, map[string]any{"nodeStatuses": map[string]any{pod.Name: nil}})
		}})
		return ops, "", true
	}
	return []op{o.setConditionOp(CondScalingDown, "False")}, "", true
}

// callDecommission is callDecommission (decommission_node.go): nothing when the pod is
// not ready (the caller goes on as if sent); else the async decommission with
// force=true (FACTS §3.3). A refusal by a running node (e.g. already leaving) is the
// job failing, which the operator never reads (FACTS §8); a node that cannot be
// reached is an error.
func (o *Operator) callDecommission(w *world, p *corev1.Pod) []op {
	if !o.ready(w, p) {
		return nil
	}
	name := p.Name
	return []op{{ActDecommission, func(ctx context.Context) error {
		code, _, out, err := o.cfg.Cass.StartDecommission(name, true)
		if err != nil {
			return err
		}
		if code != sim.ExitOK && strings.Contains(out, "Failed to connect") {
			return fmt.Errorf("decommission %s: %s", name, strings.TrimSpace(out))
		}
		return nil
	}}}
}

// checkRackScale is CheckRackScale (reconcile_racks.go, FACTS §3.6, #744): any
// StatefulSet below the size spec.size implies (SplitRacks) is grown back to it, with
// ScalingUp=True when the DC was Ready. It never shrinks.
func (o *Operator) checkRackScale(w *world) []op {
	want := SplitRacks(w.size, len(w.racks))
	var ops []op
	scalingUp := w.cond(CondScalingUp) == "True"
	progressed := false
	for i, s := range w.sts {
		if w.replicas(i) >= want[i] {
			continue
		}
		if w.cond(CondStopped) != "True" && w.cond(CondReady) == "True" && !scalingUp {
			ops = append(ops, o.setConditionOp(CondScalingUp, "True"))
			scalingUp = true
		}
		// UpdateRackNodeCount: progress Updating, then the replicas.
		if !progressed {
			ops = append(ops, o.setProgressOp(w, ProgressUpdating)...)
			progressed = true
		}
		name, n := s.Name, want[i]
		ops = append(ops, op{ActGrowStatefulSet, func(ctx context.Context) error {
			return o.patchStatefulSetReplicas(ctx, name, n)
		}})
	}
	return ops
}

// checkPodsReady is CheckPodsReady (reconcile_racks.go) without seeds, stuck-pod
// deletion (10 min) and the health query: nodes start one at a time, each start is the
// management API's lifecycle start (MGMT_API_EXPLICIT_START, FACTS §3.7), highest
// ordinal first (FACTS §8).
func (o *Operator) checkPodsReady(w *world) ([]op, string, bool) {
	// step 0: findStartedNotReadyNodes.
	for _, p := range w.pods {
		if state(p) == StateStarted && !o.ready(w, p) {
			return []op{o.labelOp(ActLabelStartedNotReady, p, StateStartedNotReady)}, "", true
		}
		if state(p) == StateStartedNotReady && o.ready(w, p) {
			if o.labelLater(p) {
				return nil, p.Name + " is ready, labelled Started on a later reconcile", true
			}
			return []op{o.labelOp(ActLabelStarted, p, StateStarted)}, "", true
		}
	}
	anyReady := false
	for _, p := range w.pods {
		if o.ready(w, p) {
			anyReady = true
		}
	}
	// fast path (shouldUseFastPath: ready seeds exist; modelled as "a pod is ready"):
	// startBootstrappedNodes waits on every pod with a nodeStatuses entry that is not
	// ready, starting those Ready-to-Start. This is where FACTS §8 state A waits.
	if anyReady {
		for _, p := range w.pods {
			if _, ok := w.statuses[p.Name]; !ok || o.ready(w, p) {
				continue
			}
			if state(p) == StateReadyToStart && mgmtUp(p) {
				return []op{o.startOp(w, p)}, "", true
			}
			return nil, p.Name + " is not ready (" + state(p) + ")", true
		}
	}
	// step 1: findStartingNodes.
	for _, p := range w.pods {
		if state(p) == StateStarting {
			if o.ready(w, p) {
				if o.labelLater(p) {
					return nil, p.Name + " is ready, labelled Started on a later reconcile", true
				}
				return []op{o.labelOp(ActLabelStarted, p, StateStarted)}, "", true
			}
			return nil, p.Name + " is starting", true
		}
	}
	want := SplitRacks(w.size, len(w.racks))
	// step 2: startOneNodePerRack (its loop looks at the rack's top pod only).
	running := 0
	for i, s := range w.sts {
		if want[i] <= 0 {
			continue
		}
		p := w.podByName[fmt.Sprintf("%s-%d", s.Name, want[i]-1)]
		if p == nil {
			return nil, fmt.Sprintf("pod %s-%d not found", s.Name, want[i]-1), true
		}
		if o.ready(w, p) {
			running++
			continue
		}
		if state(p) == StateReadyToStart && mgmtUp(p) {
			return []op{o.startOp(w, p)}, "", true
		}
	}
	if running < 1 && w.cond(CondDecommission) != "True" {
		return nil, "no pods were ready to be started in any rack", true
	}
	// step 4: startAllNodes, createStartSequence: highest ordinal first.
	var seq []*corev1.Pod
	for i, s := range w.sts {
		for k := want[i] - 1; k >= 0; k-- {
			p := w.podByName[fmt.Sprintf("%s-%d", s.Name, k)]
			if p == nil {
				return nil, fmt.Sprintf("pod %s-%d not found", s.Name, k), true
			}
			if !o.ready(w, p) && state(p) == StateReadyToStart && mgmtUp(p) {
				seq = append(seq, p)
			}
		}
	}
	sort.SliceStable(seq, func(i, j int) bool { return ordinal(seq[i].Name) > ordinal(seq[j].Name) })
	if len(seq) > 0 {
		return []op{o.startOp(w, seq[0])}, "", true
	}
	// "Wait on any nodes that are still being replaced" (CheckPodsReady).
	if len(w.replacements) > 0 {
		return nil, "nodes are being replaced: " + strings.Join(w.replacements, ", "), true
	}
	// step 5: countReadyAndStarted.
	ready, started := 0, 0
	for _, p := range w.pods {
		if o.ready(w, p) {
			ready++
		}
		if s := state(p); s == StateStarted || s == StateStartedNotReady {
			started++
		}
	}
	if w.size > ready || w.size > started {
		return nil, fmt.Sprintf("checks failed desired:%d, ready:%d, started:%d", w.size, ready, started), true
	}
	return nil, "", false
}

func ordinal(pod string) int {
	i := strings.LastIndexByte(pod, '-')
	n, err := strconv.Atoi(pod[i+1:])
	if err != nil {
		return -1
	}
	return n
}

// startOp is startCassandra (reconcile_racks.go): the lifecycle start call (async in
// the real one) and the Starting label, one action here. The call registers a node the
// ring never had (a new pod: it joins) or restarts a node whose JVM is down; a node
// that was decommissioned refuses to start (FACTS §8 state A's replacement, C/D's
// reused PVC): the operator then deletes the pod and records it in failedStarts. A pod
// being replaced starts with the replace_ip instead (replace.go).
func (o *Operator) startOp(w *world, p *corev1.Pod) op {
	pod := p.DeepCopy()
	n, known := w.nodeOf(p.Name)
	dcName := cassandraDC(w.dc)
	replaceIP, replaceErr := w.replaceAddress(p.Name)
	return op{ActStartNode, func(ctx context.Context) error {
		if replaceErr != nil {
			// startCassandra returns before the Starting label: the reconcile fails.
			return replaceErr
		}
		if err := o.patchPodLabel(ctx, pod.Name, StateStarting); err != nil {
			return err
		}
		var startErr error
		switch {
		case replaceIP != "":
			startErr = o.startReplacing(pod, known, dcName, replaceIP)
		case !known:
			sum := sha256.Sum256([]byte(string(pod.UID) + "/" + pod.Name))
			h := fmt.Sprintf("%x", sum[:16])
			hostID := h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
			startErr = o.cfg.Cass.AddNode(sim.NodeSpec{Pod: pod.Name, HostID: hostID, Address: pod.Status.PodIP,
				DC: dcName, Rack: pod.Labels[LabelRack]})
		case n.Gone || n.Mode == sim.ModeDecommissioned:
			startErr = fmt.Errorf("node %s was decommissioned", pod.Name)
		case !n.Running:
			startErr = o.cfg.Cass.Restart(pod.Name)
		}
		if startErr == nil {
			return nil
		}
		// The start failed: delete the pod, add it to failedStarts.
		if err := o.cfg.Kube.CoreV1().Pods(o.cfg.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return o.updateStatus2(ctx, func(dc *unstructured.Unstructured) {
			fs, _, _ := unstructured.NestedStringSlice(dc.Object, "status", "failedStarts")
			if !slices.Contains(fs, pod.Name) {
				_ = unstructured.SetNestedStringSlice(dc.Object, append(fs, pod.Name), "status", "failedStarts")
			}
		})
	}}
}

// decommissionNodes is DecommissionNodes/DecommissionNodeOnRack (decommission_node.go,
// FACTS §3.1-4): one node at a time; the targets are SplitRacks(current-1); the first
// rack in spec order above its target loses its last ordinal: ScalingDown=True,
// progress Updating, the decommission call, and only then the Decommissioning label
// (FACTS §8 ordering).
func (o *Operator) decommissionNodes(w *world) ([]op, string, bool) {
	current := 0
	for i := range w.sts {
		current += w.replicas(i)
	}
	// A datacenter decommissioned on delete goes to 0, below one node per rack.
	target, whole := w.size, w.cond(CondDecommission) == "True"
	if whole {
		target = 0
	}
	if current <= target {
		return nil, "", false
	}
	if current-1 < len(w.racks) && !whole {
		return nil, "the number of nodes cannot be smaller than the number of racks", true
	}
	want := SplitRacks(current-1, len(w.racks))
	for i, s := range w.sts {
		n := w.replicas(i)
		if n <= want[i] {
			continue
		}
		var ops []op
		if w.cond(CondScalingDown) != "True" {
			ops = append(ops, o.setConditionOp(CondScalingDown, "True"))
		}
		ops = append(ops, o.setProgressOp(w, ProgressUpdating)...)
		p := w.podByName[fmt.Sprintf("%s-%d", s.Name, n-1)]
		if p == nil {
			return ops, "could not find pod to decommission on rack " + w.racks[i], true
		}
		if !mgmtUp(p) {
			return ops, "management API is not up on node that we are trying to decommission", true
		}
		// EnsurePodsCanAbsorbDecommData (Valid=False notEnoughSpaceToScaleDown) is not modelled.
		ops = append(ops, o.callDecommission(w, p)...)
		ops = append(ops, o.labelOp(ActLabelDecommissioning, p, StateDecommissioning))
		return ops, "", true
	}
	return nil, "", false
}

// clearActionConditions is CheckClearActionConditions, CheckConditionInitializedAndReady,
// setOperatorProgressStatus(Ready) and setDatacenterStatus (reconcile_racks.go,
// constructor.go): after a scale-up a cleanup CassandraTask (unless no-cleanup), then
// the action conditions False, Valid/Initialized/Ready True, progress Ready.
func (o *Operator) clearActionConditions(w *world) []op {
	var ops []op
	if w.cond(CondScalingUp) == "True" {
		if _, no := w.dc.GetAnnotations()[AnnotationNoCleanup]; !no {
			ops = append(ops, o.cleanupTaskOp(w))
		}
		ops = append(ops, o.setConditionOp(CondScalingUp, "False"))
	}
	set := func(t, s string) {
		if w.cond(t) != s {
			ops = append(ops, o.setConditionOp(t, s))
		}
	}
	set(CondStopped, "False")
	for _, t := range []string{CondReplacingNodes, CondUpdating, CondRollingRestart, CondResuming, CondScalingDown} {
		set(t, "False")
	}
	set(CondValid, "True")
	set(CondInitialized, "True")
	set(CondReady, "True")
	ops = append(ops, o.setProgressOp(w, ProgressReady)...)
	gen := w.dc.GetGeneration()
	og, _, _ := unstructured.NestedInt64(w.dc.Object, "status", "observedGeneration")
	if gen != og {
		ops = append(ops, op{ActSetObservedGeneration, func(ctx context.Context) error {
			return o.patchStatus(ctx, map[string]any{"observedGeneration": gen})
		}})
	}
	set(CondRequiresUpdate, "False")
	return ops
}

// cleanupTaskOp is createCleanupTask (reconcile_racks.go): a CassandraTask
// cleanup-<unix seconds> for the DC. Its tracking (track-cleanup-tasks) is not modelled.
func (o *Operator) cleanupTaskOp(w *world) op {
	dcName, cluster := w.dcName, w.cluster
	return op{ActCreateCleanupTask, func(ctx context.Context) error {
		lbl := map[string]any{LabelCluster: cluster, LabelDatacenter: dcName, LabelManagedBy: ManagedBy}
		t := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": TaskGVR.GroupVersion().String(), "kind": "CassandraTask",
			"metadata": map[string]any{"name": fmt.Sprintf("cleanup-%d", o.cfg.Now().Unix()), "namespace": o.cfg.Namespace, "labels": lbl},
			"spec": map[string]any{
				"datacenter": map[string]any{"name": dcName, "namespace": o.cfg.Namespace},
				"jobs":       []any{map[string]any{"name": "cleanup-" + dcName, "command": "cleanup"}},
			},
		}}
		_, err := o.cfg.Dyn.Resource(TaskGVR).Namespace(o.cfg.Namespace).Create(ctx, t, metav1.CreateOptions{})
		return err
	}}
}

// setConditionOp is setCondition (reconcile_racks.go): an Update of /status with the
// condition replaced or appended, lastTransitionTime when its status changes.
func (o *Operator) setConditionOp(typ, status string) op {
	return op{CondAction(typ, status), func(ctx context.Context) error {
		return o.updateStatus2(ctx, func(dc *unstructured.Unstructured) {
			conds, _, _ := unstructured.NestedSlice(dc.Object, "status", "conditions")
			now := o.cfg.Now().UTC().Format("2006-01-02T15:04:05Z")
			found := false
			for i, ci := range conds {
				m, ok := ci.(map[string]any)
				if !ok || m["type"] != typ {
					continue
				}
				found = true
				if m["status"] != status {
					m = maps.Clone(m)
					m["status"], m["lastTransitionTime"] = status, now
					conds[i] = m
				}
			}
			if !found {
				conds = append(conds, map[string]any{"type": typ, "status": status, "reason": "", "message": "", "lastTransitionTime": now})
			}
			_ = unstructured.SetNestedSlice(dc.Object, conds, "status", "conditions")
		})
	}}
}

// setProgressOp is setOperatorProgressStatus (constructor.go): no write when unchanged;
// Ready also sets status.datacenterName when unset.
func (o *Operator) setProgressOp(w *world, p string) []op {
	if w.progress == p {
		return nil
	}
	w.progress = p // the pass's in-memory DC, as the real one's rc.Datacenter
	dcName := w.dcName
	_, hasName, _ := unstructured.NestedString(w.dc.Object, "status", "datacenterName")
	return []op{{ProgressAction(p), func(ctx context.Context) error {
		st := map[string]any{"cassandraOperatorProgress": p}
		if p == ProgressReady && !hasName {
			st["datacenterName"] = dcName
		}
		return o.patchStatus(ctx, st)
	}}}
}

// labelLater counts a pass that found p ready to be labelled Started, and reports
// whether the label waits for a later one (Config.LabelStartedAfter).
func (o *Operator) labelLater(p *corev1.Pod) bool {
	if o.readySeen[p.Name]++; o.readySeen[p.Name] < o.cfg.LabelStartedAfter {
		return true
	}
	delete(o.readySeen, p.Name)
	return false
}

func (o *Operator) labelOp(a Action, p *corev1.Pod, value string) op {
	name := p.Name
	return op{a, func(ctx context.Context) error { return o.patchPodLabel(ctx, name, value) }}
}

func (o *Operator) patchPodLabel(ctx context.Context, pod, value string) error {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{LabelNodeState: value}}})
	_, err := o.cfg.Kube.CoreV1().Pods(o.cfg.Namespace).Patch(ctx, pod, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// patchStatefulSetReplicas is UpdateRackNodeCount's merge patch of spec.replicas.
func (o *Operator) patchStatefulSetReplicas(ctx context.Context, name string, n int) error {
	b, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": n}})
	_, err := o.cfg.Kube.AppsV1().StatefulSets(o.cfg.Namespace).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// deletePodPVCs is DeletePodPvcs (decommission_node.go): every claim the pod mounts,
// each read then deleted, without waiting for the pod to go (FACTS §3.5).
func (o *Operator) deletePodPVCs(ctx context.Context, p *corev1.Pod) error {
	pvcs := o.cfg.Kube.CoreV1().PersistentVolumeClaims(o.cfg.Namespace)
	for _, v := range p.Spec.Volumes {
		if v.PersistentVolumeClaim == nil {
			continue
		}
		c, err := pvcs.Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := pvcs.Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// patchStatus is a JSON merge patch of the DC's /status (client.MergeFrom).
func (o *Operator) patchStatus(ctx context.Context, status map[string]any) error {
	b, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return err
	}
	_, err = o.cfg.Dyn.Resource(DatacenterGVR).Namespace(o.cfg.Namespace).Patch(ctx, o.cfg.Name, types.MergePatchType, b, metav1.PatchOptions{}, "status")
	return err
}

// updateStatus2 reads the DC, changes it and Updates its /status (resourceVersion
// checked: a concurrent writer makes it fail, and the pass starts over).
func (o *Operator) updateStatus2(ctx context.Context, fn func(dc *unstructured.Unstructured)) error {
	r := o.cfg.Dyn.Resource(DatacenterGVR).Namespace(o.cfg.Namespace)
	dc, err := r.Get(ctx, o.cfg.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	fn(dc)
	_, err = r.UpdateStatus(ctx, dc, metav1.UpdateOptions{})
	return err
}
