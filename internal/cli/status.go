package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
)

const statusExample = `  # Racks, pods, node states, PVCs and the operation in flight
  kubectl cassandra status -n cassandra cassandra-demo

  # For scripts (stable schema; "next" names the command to run next)
  kubectl cassandra status cassandra-demo -o json

  # Kubernetes state only, without exec into a pod (pods/exec forbidden, or Cassandra hung)
  kubectl cassandra status cassandra-demo --nodetool=false`

// statusReport is the JSON/YAML form of `status`.
type statusReport struct {
	Cluster       statusCluster             `json:"cluster"`
	Datacenters   []statusDC                `json:"datacenters"`
	Operation     *statusOperation          `json:"operation"`
	LastOperation *checkpoint.LastOperation `json:"lastOperation"`
	OperatorBusy  []string                  `json:"operatorBusy"`
	Warnings      []string                  `json:"warnings"`
	Next          string                    `json:"next"`
}

type statusCluster struct {
	Name          string `json:"name"`
	Namespace     string `json:"namespace"`
	UID           string `json:"uid"`
	Operator      string `json:"operator"`
	APIVersion    string `json:"apiVersion"`
	ServerVersion string `json:"serverVersion,omitempty"`
}

type statusDC struct {
	Name         string       `json:"name"`
	NodesPerRack int          `json:"nodesPerRack"`
	Racks        []statusRack `json:"racks"`
}

type statusRack struct {
	Name          string      `json:"name"`
	StatefulSet   string      `json:"statefulSet"`
	Exists        bool        `json:"exists"`
	Replicas      int         `json:"replicas"`
	ReadyReplicas int         `json:"readyReplicas"`
	Pods          []statusPod `json:"pods"`
	PVCs          []statusPVC `json:"pvcs"`
	// RemoveOne is the preflight's free-space check for removing the rack's highest
	// ordinal (operation.RemovalSpace); nil when the rack has fewer than two pods.
	RemoveOne *statusSpace `json:"removeOne"`
}

// statusSpace is what removing one node of a rack would need and find.
type statusSpace struct {
	Pod string `json:"pod"`
	// Known is false when a Load or a data volume's capacity is unknown.
	Known     bool  `json:"known"`
	NeedBytes int64 `json:"needBytes"`
	FreeBytes int64 `json:"freeBytes"`
	Fits      bool  `json:"fits"`
}

type statusPod struct {
	Name        string `json:"name"`
	Ordinal     int    `json:"ordinal"`
	Phase       string `json:"phase"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating"`
	IP          string `json:"ip,omitempty"`
	// NodeState is nodetool's two letters (UN, UL, DN…), "" when the ring does not list
	// the pod's address, "?" when the ring could not be read.
	NodeState string `json:"nodeState"`
	HostID    string `json:"hostID,omitempty"`
	// Load and Owns are nodetool status's cells, from the same ring read ("" unread).
	Load string `json:"load,omitempty"`
	Owns string `json:"owns,omitempty"`
}

type statusPVC struct {
	Name        string `json:"name"`
	Pod         string `json:"pod"`
	Phase       string `json:"phase"`
	Terminating bool   `json:"terminating"`
	PodExists   bool   `json:"podExists"`
	// Capacity is the claim's capacity (status, else its request), e.g. "100Gi".
	Capacity      string `json:"capacity,omitempty"`
	CapacityBytes int64  `json:"capacityBytes,omitempty"`
}

type statusOperation struct {
	ID          string            `json:"id"`
	Kind        string            `json:"kind"`
	Target      checkpoint.Target `json:"target"`
	StartedBy   checkpoint.Holder `json:"startedBy"`
	Holder      checkpoint.Holder `json:"holder"`
	StartedAt   string            `json:"startedAt"`
	UpdatedAt   string            `json:"updatedAt"`
	StepsDone   int               `json:"stepsDone"`
	StepsTotal  int               `json:"stepsTotal"`
	CurrentStep *checkpoint.Step  `json:"currentStep,omitempty"`
	// Progress is the last streaming progress recorded by the run (the newest of the
	// steps not done), so another machine sees how far a decommission or bootstrap is.
	Progress *checkpoint.Progress `json:"progress,omitempty"`
	// PausedOperator is set while the operation keeps the operator paused.
	PausedOperator *checkpoint.PausedOperator `json:"pausedOperator,omitempty"`
	Error          string                     `json:"error,omitempty"`
}

func newStatusCmd(o *Options) *cobra.Command {
	var out string
	withNodetool := true
	var live liveFlags
	cmd := &cobra.Command{
		Use:               "status [CLUSTER]",
		Short:             "Show racks, pods, node states, PVCs and the operation in flight",
		Example:           statusExample,
		GroupID:           groupInspect,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(out, "text", "json", "yaml"); err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			var lists *statusLists
			s, err := o.openAssumed(ctx, args, func(c *Clients, a operator.Adapter, ns, name string) {
				lists = startStatusLists(ctx, c, a, ns, name)
			})
			if err != nil {
				if lists != nil {
					cancel()
					lists.wg.Wait()
				}
				return err
			}
			if live.watch && live.wait {
				return exit.Usagef("--watch and --wait cannot be used together")
			}
			if live.nodetoolInterval <= 0 {
				return exit.Usagef("--nodetool-interval must be positive, got %s", live.nodetoolInterval)
			}
			if live.watch || live.wait {
				// The lists started with the cluster read are the first status; the
				// watches bring the changes.
				if live.watch {
					return o.watchStatus(ctx, s, lists, withNodetool, live)
				}
				return o.waitStatus(ctx, s, lists, withNodetool, live, out)
			}
			rep := o.buildStatus(ctx, s, lists, withNodetool)
			if out != "text" {
				return output.Print(o.Out, out, rep)
			}
			o.printStatusText(o.Out, rep)
			return nil
		},
	}
	addOutputFlag(cmd, &out, "text", "json", "yaml")
	cmd.Flags().BoolVar(&withNodetool, "nodetool", true, "read node states with nodetool status (one exec into a Ready pod); false shows them as ?")
	cmd.Flags().BoolVarP(&live.watch, "watch", "w", false, "Redraw on every change (watches of the cluster, StatefulSets, pods and PVCs; without a terminal: the changed lines, timestamped); Ctrl-C ends it")
	cmd.Flags().BoolVar(&live.wait, "wait", false, "Block until the operation in flight ends; exit 0 done, 1 failed, 3 stuck (needs a human), 4 interrupted or timed out")
	cmd.Flags().DurationVar(&live.timeout, "timeout", 2*time.Hour, "With --wait: how long to wait before giving up (exit 4)")
	cmd.Flags().DurationVar(&live.nodetoolInterval, "nodetool-interval", 10*time.Second, "With --watch/--wait: read the ring at most this often")
	return cmd
}

// buildStatus reads everything concurrently: one list each of StatefulSets, pods and
// PVCs, the checkpoint, the operator check, and (withNodetool) one `nodetool status`.
func (o *Options) buildStatus(ctx context.Context, s *session, lists *statusLists, withNodetool bool) statusReport {
	cl := s.cluster
	rep := statusReport{
		Cluster:      statusCluster{Name: cl.Name, Namespace: cl.Namespace, UID: cl.UID, Operator: cl.Operator, APIVersion: cl.APIVersion, ServerVersion: cl.ServerVersion},
		OperatorBusy: append([]string{}, cl.Busy...),
		Warnings:     []string{},
		Datacenters:  []statusDC{},
		Next:         "",
	}
	var (
		mu     sync.Mutex
		stsMap = map[string]appsv1.StatefulSet{}
		pods   []corev1.Pod
		pvcs   []corev1.PersistentVolumeClaim
		ops    []operator.Controller
		cp     *checkpoint.Checkpoint
		last   *checkpoint.LastOperation
	)
	warn := func(format string, a ...any) {
		mu.Lock()
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	// The ring is read from the first pod of the first rack while the lists run: nodetool
	// is the slowest read. Its answer is used only if that pod turns out Ready.
	var early string // "" when none is read ahead
	var earlyRing func() (nodetool.Ring, error)
	if !withNodetool {
		warn("node states not read (--nodetool=false)")
	} else if len(cl.DCs) > 0 && len(cl.DCs[0].Racks) > 0 {
		early = cl.DCs[0].Racks[0].StatefulSet + "-0"
		earlyRing = future.Start(func() (nodetool.Ring, error) { return s.nt.Status(ctx, early) })
	}
	// The cluster resource was just read: decode its annotations, no second GET.
	ann := cl.Annotations
	if v, ok := ann[checkpoint.Annotation]; ok {
		var err error
		if cp, err = checkpoint.Decode(v, cl.UID); err != nil {
			rep.Operation = &statusOperation{Error: err.Error()}
		}
	}
	if v, ok := ann[checkpoint.LastOperationAnnotation]; ok {
		var lo checkpoint.LastOperation
		if err := json.Unmarshal([]byte(v), &lo); err == nil {
			last = &lo
		} else {
			warn("annotation %s is not valid JSON: %v", checkpoint.LastOperationAnnotation, err)
		}
	}
	lists.wg.Wait()
	for _, st := range lists.sts {
		stsMap[st.Name] = st
	}
	pods, pvcs, ops = lists.pods, lists.pvcs, lists.ops
	for _, e := range []struct {
		what string
		err  error
	}{{"list StatefulSets", lists.stsErr}, {"list pods", lists.podsErr}, {"list PVCs", lists.pvcsErr}, {"check for a running CassKop operator", lists.opsErr}} {
		if e.err != nil {
			warn("cannot %s: %v", e.what, e.err)
		}
	}
	// The ring, read once from the first Ready pod.
	var ring nodetool.Ring
	ringOK := false
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	// Readers in turn: the pod asked early first (its answer is on its way), then the others.
	readers := make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.Name == early {
			readers = append([]corev1.Pod{p}, readers...)
		} else {
			readers = append(readers, p)
		}
	}
	for _, p := range readers {
		if withNodetool && steps.PodReady(&p) && p.DeletionTimestamp == nil {
			var r nodetool.Ring
			var err error
			if p.Name == early {
				r, err = earlyRing()
			} else {
				r, err = s.nt.Status(ctx, p.Name)
			}
			if err != nil {
				warn("cannot read the ring from %s: %v", p.Name, err)
				continue
			}
			ring, ringOK = r, true
			break
		}
	}
	for _, op := range ops {
		rep.OperatorBusy = append(rep.OperatorBusy, fmt.Sprintf("CassKop operator %s is running (replicas %d)", op, op.Replicas))
	}
	podByName := map[string]corev1.Pod{}
	for _, p := range pods {
		podByName[p.Name] = p
	}
	for _, dc := range cl.DCs {
		sdc := statusDC{Name: dc.Name, NodesPerRack: dc.NodesPerRack, Racks: []statusRack{}}
		for _, r := range dc.Racks {
			sr := statusRack{Name: r.Name, StatefulSet: r.StatefulSet, Pods: []statusPod{}, PVCs: []statusPVC{}}
			st, ok := stsMap[r.StatefulSet]
			var templates []string
			if ok {
				sr.Exists = true
				sr.Replicas = 1
				if st.Spec.Replicas != nil {
					sr.Replicas = int(*st.Spec.Replicas)
				}
				sr.ReadyReplicas = int(st.Status.ReadyReplicas)
				for _, t := range st.Spec.VolumeClaimTemplates {
					templates = append(templates, t.Name)
				}
			}
			for _, p := range pods {
				i, ok := operation.Ordinal(p.Name, r.StatefulSet)
				if !ok {
					continue
				}
				sp := statusPod{Name: p.Name, Ordinal: i, Phase: string(p.Status.Phase), Ready: steps.PodReady(&p), Terminating: p.DeletionTimestamp != nil, IP: p.Status.PodIP, NodeState: "?"}
				if ringOK {
					sp.NodeState = ""
					if n, ok := ring.ByAddress(p.Status.PodIP); ok {
						sp.NodeState, sp.HostID, sp.Load, sp.Owns = n.Code(), n.HostID, n.Load, n.Owns
					}
				}
				sr.Pods = append(sr.Pods, sp)
			}
			sort.Slice(sr.Pods, func(i, j int) bool { return sr.Pods[i].Ordinal < sr.Pods[j].Ordinal })
			for _, c := range pvcs {
				for _, t := range templates {
					pod := strings.TrimPrefix(c.Name, t+"-")
					if pod == c.Name {
						continue
					}
					if _, ok := operation.Ordinal(pod, r.StatefulSet); !ok {
						continue
					}
					_, exists := podByName[pod]
					sc := statusPVC{Name: c.Name, Pod: pod, Phase: string(c.Status.Phase), Terminating: c.DeletionTimestamp != nil, PodExists: exists}
					if b := operation.DataCapacity(&c); b > 0 {
						sc.CapacityBytes = int64(b)
						sc.Capacity = claimCapacity(&c)
					}
					sr.PVCs = append(sr.PVCs, sc)
				}
			}
			sort.Slice(sr.PVCs, func(i, j int) bool { return sr.PVCs[i].Name < sr.PVCs[j].Name })
			if ok {
				sr.RemoveOne = removeOne(sr, operation.DataTemplate(&st), ringOK)
			}
			if !ok {
				warn("StatefulSet %s of rack %s/%s does not exist", r.StatefulSet, dc.Name, r.Name)
			}
			sdc.Racks = append(sdc.Racks, sr)
		}
		rep.Datacenters = append(rep.Datacenters, sdc)
	}
	rep.LastOperation = last
	if cp != nil {
		op := &statusOperation{ID: cp.OperationID, Kind: cp.Kind, Target: cp.Target, StartedBy: cp.StartedBy, Holder: cp.Holder,
			StartedAt: cp.StartedAt.Format("2006-01-02T15:04:05Z07:00"), UpdatedAt: cp.UpdatedAt.Format("2006-01-02T15:04:05Z07:00"), StepsTotal: len(cp.Steps)}
		for _, st := range cp.Steps {
			if st.State == checkpoint.StateDone {
				op.StepsDone++
			}
		}
		if cp.PausedOperator != nil && cp.Started(checkpoint.StepPauseOperator) {
			for _, st := range cp.Steps {
				if st.Kind == checkpoint.StepResumeOperator && st.State != checkpoint.StateDone {
					op.PausedOperator = cp.PausedOperator
				}
			}
		}
		if i := cp.Current(); i >= 0 {
			cur := cp.Steps[i]
			op.CurrentStep = &cur
		}
		for _, st := range cp.Steps {
			if st.Progress != nil && st.State != checkpoint.StateDone && (op.Progress == nil || st.Progress.At.After(op.Progress.At)) {
				op.Progress = st.Progress
			}
		}
		rep.Operation = op
		rep.Next = s.resumeHint() + " --yes"
	} else if rep.Operation == nil {
		rep.Next = fmt.Sprintf("kubectl cassandra scale -n %s %s --rack RACK --nodes N", cl.Namespace, cl.Name)
	}
	if rep.Operation != nil && rep.Operation.Error != "" {
		rep.Next = fmt.Sprintf("kubectl get %s -n %s %s -o yaml", s.adapter.GroupResource(), cl.Namespace, cl.Name)
	}
	return rep
}

func (o *Options) printStatusText(w io.Writer, rep statusReport) {
	p := output.Painter{On: output.ColorEnabled(o.Color, w, os.Getenv)}
	c := rep.Cluster
	ver := ""
	if c.ServerVersion != "" {
		ver = ", Cassandra " + c.ServerVersion
	}
	fmt.Fprintf(w, "CassandraCluster %s/%s (%s, %s%s)\n", c.Namespace, c.Name, c.Operator, c.APIVersion, ver)
	switch op := rep.Operation; {
	case op == nil:
		fmt.Fprintln(w, "Operation:  none in flight")
	case op.Error != "":
		fmt.Fprintf(w, "Operation:  %s checkpoint unusable: %s\n", p.Bad("[XX]"), op.Error)
	default:
		fmt.Fprintf(w, "Operation:  %s %s %s, %s, step %d/%d done, started by %s at %s\n",
			p.Warn("[!!]"), op.Kind, op.ID, operationTarget(op.Kind, op.Target), op.StepsDone, op.StepsTotal, op.StartedBy, op.StartedAt)
		if op.CurrentStep != nil {
			errText := ""
			if op.CurrentStep.LastError != "" {
				errText = ", last error: " + op.CurrentStep.LastError
			}
			fmt.Fprintf(w, "            current step %s (%s, attempts: %d%s)\n", op.CurrentStep.ID, op.CurrentStep.State, op.CurrentStep.Attempts, errText)
		}
		if op.Progress != nil {
			fmt.Fprintf(w, "            progress %s (read at %s)\n", output.ProgressText(*op.Progress), op.Progress.At.Format("2006-01-02T15:04:05Z07:00"))
		}
	}
	if lo := rep.LastOperation; lo != nil {
		fmt.Fprintf(w, "Last:       %s %s %s at %s: %s\n", lo.Kind, lo.OperationID, lo.Result, lo.FinishedAt.Format("2006-01-02T15:04:05Z07:00"), lo.Summary)
	}
	if len(rep.OperatorBusy) == 0 {
		fmt.Fprintf(w, "CassKop:    %s idle\n", p.OK("[OK]"))
	}
	if op := rep.Operation; op != nil && op.PausedOperator != nil {
		po := op.PausedOperator
		fmt.Fprintf(w, "Operator:   %s %s/%s PAUSED by kubectl-cassandra (replicas %d -> 0) for operation %s; restored to %d at its end, by resume or by abort\n",
			p.Warn("[!!]"), po.Namespace, po.Name, po.Replicas, op.ID, po.Replicas)
	}
	for _, b := range rep.OperatorBusy {
		fmt.Fprintf(w, "CassKop:    %s %s\n", p.Warn("[!!]"), b)
	}
	for _, dc := range rep.Datacenters {
		fmt.Fprintf(w, "\nDatacenter %s (nodesPerRacks %d)\n", dc.Name, dc.NodesPerRack)
		for _, r := range dc.Racks {
			if !r.Exists {
				fmt.Fprintf(w, "  Rack %s: %s StatefulSet %s missing\n", r.Name, p.Bad("[XX]"), r.StatefulSet)
				continue
			}
			mark := p.OK("[OK]")
			if r.ReadyReplicas != r.Replicas || r.Replicas != dc.NodesPerRack {
				mark = p.Warn("[!!]")
			}
			fmt.Fprintf(w, "  Rack %s: %s StatefulSet %s, %d/%d ready\n", r.Name, mark, r.StatefulSet, r.ReadyReplicas, r.Replicas)
			if ro := r.RemoveOne; ro != nil {
				switch {
				case !ro.Known:
					fmt.Fprintf(w, "    removing %s: free space unknown (a Load or a data volume capacity is not known)\n", ro.Pod)
				case ro.Fits:
					fmt.Fprintf(w, "    removing %s: %s its %s fit in the %s free on the others\n", ro.Pod, p.OK("[OK]"), output.Bytes(ro.NeedBytes), output.Bytes(ro.FreeBytes))
				default:
					fmt.Fprintf(w, "    removing %s: %s its %s do not fit in the %s free on the others\n", ro.Pod, p.Warn("[!!]"), output.Bytes(ro.NeedBytes), output.Bytes(ro.FreeBytes))
				}
			}
			// Align plain text first, colour after: escape codes would skew tabwriter.
			var table bytes.Buffer
			tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    POD\tREADY\tNODE\tLOAD\tOWNS\tHOST ID\tIP")
			for _, pod := range r.Pods {
				ready := "[OK]"
				if !pod.Ready {
					ready = "[XX]"
				}
				if pod.Terminating {
					ready = "[!!] terminating"
				}
				state := pod.NodeState
				if state == "" {
					state = "-"
				}
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\t%s\n", pod.Name, ready, state, dash(pod.Load), dash(pod.Owns), dash(pod.HostID), dash(pod.IP))
			}
			_ = tw.Flush()
			tw = tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    PVC\tPHASE\tCAPACITY\tPOD")
			for _, c := range r.PVCs {
				phase := c.Phase
				if c.Terminating {
					phase += " (terminating)"
				}
				pod := "exists"
				if !c.PodExists {
					pod = "gone"
				}
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", c.Name, phase, dash(c.Capacity), pod)
			}
			_ = tw.Flush()
			fmt.Fprint(w, strings.NewReplacer("[!!] terminating", p.Warn("[!!] terminating"), "[OK]", p.OK("[OK]"), "[XX]", p.Bad("[XX]"), "  gone\n", "  "+p.Warn("gone")+"\n").Replace(table.String()))
		}
	}
	for _, wmsg := range rep.Warnings {
		fmt.Fprintf(w, "%s %s\n", p.Warn("[!!]"), wmsg)
	}
	if rep.Next != "" {
		fmt.Fprintf(w, "\nNext: %s\n", rep.Next)
	}
}

// claimCapacity prints the claim's capacity as Kubernetes does ("100Gi").
func claimCapacity(c *corev1.PersistentVolumeClaim) string {
	if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
		return q.String()
	}
	if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
		return q.String()
	}
	return ""
}

// removeOne is the preflight's space check for removing the rack's highest ordinal
// (operation.RemovalSpace, the computation scale runs): its Load against the free space
// of the rack's other data volumes.
func removeOne(r statusRack, dataTpl string, ringOK bool) *statusSpace {
	if len(r.Pods) < 2 || dataTpl == "" {
		return nil
	}
	capacity := map[string]float64{}
	for _, c := range r.PVCs {
		if c.Name == dataTpl+"-"+c.Pod {
			capacity[c.Pod] = float64(c.CapacityBytes)
		}
	}
	space := func(p statusPod) operation.NodeSpace {
		n := operation.NodeSpace{Load: -1, Capacity: capacity[p.Name]}
		if l, ok := operation.ParseLoad(p.Load); ok && ringOK {
			n.Load = l
		}
		return n
	}
	last := r.Pods[len(r.Pods)-1]
	var others []operation.NodeSpace
	for _, p := range r.Pods[:len(r.Pods)-1] {
		others = append(others, space(p))
	}
	need, free, ok := operation.RemovalSpace(space(last), others)
	return &statusSpace{Pod: last.Name, Known: ok, NeedBytes: int64(need), FreeBytes: int64(free), Fits: ok && need <= free}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// statusLists are status's list reads, made at once.
type statusLists struct {
	wg   sync.WaitGroup
	sts  []appsv1.StatefulSet
	pods []corev1.Pod
	pvcs []corev1.PersistentVolumeClaim
	ops  []operator.Controller

	stsErr, podsErr, pvcsErr, opsErr error
}

func startStatusLists(ctx context.Context, c *Clients, a operator.Adapter, ns, name string) *statusLists {
	l := &statusLists{}
	sel := metav1.ListOptions{LabelSelector: a.ClusterSelector(name)}
	l.wg.Go(func() {
		r, err := c.Kube.AppsV1().StatefulSets(ns).List(ctx, sel)
		if l.stsErr = err; err == nil {
			l.sts = r.Items
		}
	})
	l.wg.Go(func() {
		r, err := c.Kube.CoreV1().Pods(ns).List(ctx, sel)
		if l.podsErr = err; err == nil {
			l.pods = r.Items
		}
	})
	l.wg.Go(func() {
		r, err := c.Kube.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
		if l.pvcsErr = err; err == nil {
			l.pvcs = r.Items
		}
	})
	l.wg.Go(func() {
		l.ops, l.opsErr = a.RunningOperators(ctx, ns)
	})
	return l
}
