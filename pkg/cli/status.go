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

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/future"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/steps"
	"github.com/kubectl-cassandra/kubectl-cassandra/plugins/casskop"
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
}

type statusPVC struct {
	Name        string `json:"name"`
	Pod         string `json:"pod"`
	Phase       string `json:"phase"`
	Terminating bool   `json:"terminating"`
	PodExists   bool   `json:"podExists"`
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
	// PausedOperator is set while the operation keeps the operator paused.
	PausedOperator *checkpoint.PausedOperator `json:"pausedOperator,omitempty"`
	Error          string                     `json:"error,omitempty"`
}

func newStatusCmd(o *Options) *cobra.Command {
	var out string
	withNodetool := true
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
			s, err := o.openAssumed(ctx, args, func(c *Clients, a *casskop.Adapter, ns, name string) {
				lists = startStatusLists(ctx, c, a, ns, name)
			})
			if err != nil {
				if lists != nil {
					cancel()
					lists.wg.Wait()
				}
				return err
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
		ops    []casskop.Operator
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
						sp.NodeState, sp.HostID = n.Code(), n.HostID
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
					sr.PVCs = append(sr.PVCs, statusPVC{Name: c.Name, Pod: pod, Phase: string(c.Status.Phase), Terminating: c.DeletionTimestamp != nil, PodExists: exists})
				}
			}
			sort.Slice(sr.PVCs, func(i, j int) bool { return sr.PVCs[i].Name < sr.PVCs[j].Name })
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
		rep.Operation = op
		rep.Next = s.resumeHint() + " --yes"
	} else if rep.Operation == nil {
		rep.Next = fmt.Sprintf("kubectl cassandra scale -n %s %s --rack RACK --nodes N", cl.Namespace, cl.Name)
	}
	if rep.Operation != nil && rep.Operation.Error != "" {
		rep.Next = fmt.Sprintf("kubectl get cassandracluster.%s -n %s %s -o yaml", casskop.Group, cl.Namespace, cl.Name)
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
			// Align plain text first, colour after: escape codes would skew tabwriter.
			var table bytes.Buffer
			tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    POD\tREADY\tNODE\tHOST ID\tIP")
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
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", pod.Name, ready, state, dash(pod.HostID), dash(pod.IP))
			}
			_ = tw.Flush()
			tw = tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "    PVC\tPHASE\tPOD")
			for _, c := range r.PVCs {
				phase := c.Phase
				if c.Terminating {
					phase += " (terminating)"
				}
				pod := "exists"
				if !c.PodExists {
					pod = "gone"
				}
				fmt.Fprintf(tw, "    %s\t%s\t%s\n", c.Name, phase, pod)
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
	ops  []casskop.Operator

	stsErr, podsErr, pvcsErr, opsErr error
}

func startStatusLists(ctx context.Context, c *Clients, a *casskop.Adapter, ns, name string) *statusLists {
	l := &statusLists{}
	sel := metav1.ListOptions{LabelSelector: casskop.LabelCluster + "=" + name}
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
