// Package lifecycle is what becomes of an operation once a command has chosen it: its
// start (the plan written and run), resume, abort (finish-first, grow-back), re-plan,
// carry-over by a repair, and the reaping of what gone operations left in the world.
// It works for every kind through the kind contract and the Registry (kinds that leave
// marks of their own or can grow racks back say so through small optional interfaces,
// declared here where they are consumed), never by a kind's name. The command line
// (internal/cli) parses flags, prompts and prints; it hands the lifecycle what it needs
// in one Deps value.
package lifecycle

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/cql"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/nodetool"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/topology"
)

// Deps is everything the lifecycle takes from the command that calls it: the clients
// of one cluster, the kinds, the clock, this process's identity and the output.
type Deps struct {
	Kube     kubernetes.Interface
	Nodetool nodetool.Client
	Adapter  operator.Adapter
	// Cluster is the cluster the command opened (only Namespace is set when the
	// lifecycle reaps after a cluster that is gone).
	Cluster topology.Cluster
	Store   *checkpoint.Store
	Kinds   operation.Registry
	// Now is the clock; Self this process's identity as a checkpoint holder; Alive
	// whether the process a holder on this machine names still runs; After the timer of
	// lease waits (tests pass a clock that jumps).
	Now   func() time.Time
	Self  func() record.Holder
	Alive func(record.Holder) bool
	After func(d time.Duration) <-chan time.Time
	// ErrOut takes what the lifecycle says while it acts (progress, notes, warnings);
	// UI asks and shows what a command shows.
	ErrOut io.Writer
	UI     UI
	// Color is the progress display's (auto, always, never); ProgressEvery,
	// SampleEvery and SampleMax its intervals (Options of internal/cli).
	Color                                 string
	ProgressEvery, SampleEvery, SampleMax time.Duration
}

// UI is what the lifecycle asks of the command line: a confirmation, a plan shown, the
// end of a run said.
type UI interface {
	// Confirm asks before acting (what: the question's word); an error: not confirmed.
	Confirm(what string) error
	// ShowPlan shows a plan about to run (or what is left of one).
	ShowPlan(p Shown)
	// DryRun shows a plan that a dry run stops at (nothing changed).
	DryRun(p Shown) error
	// NothingToDo says a planner's "nothing to do" answer (the command ends well).
	NothingToDo(msg string) error
	// Done says how a run of the steps ended.
	Done(last *checkpoint.LastOperation) error
}

// Shown is a plan as the lifecycle hands it to be shown: Title heads it ("Plan" for a
// new one), Texts say what each step does (StepTexts).
type Shown struct {
	Title              string
	Kind               pub.Kind
	CP                 *record.Checkpoint
	Texts              map[string]string
	Warnings, Findings []string
	Next               string
}

// RunFlags are the settings of a run of the steps.
type RunFlags struct {
	ForceTakeover bool
	Progress      string
	Poll          time.Duration
	StepTimeout   time.Duration
	StallAfter    time.Duration
}

// StartFlags are those of a command that starts an operation.
type StartFlags struct {
	RunFlags
	// Operator is --operator (NAMESPACE/NAME), Pause --pause-operator, DryRun --dry-run.
	Operator string
	Pause    bool
	DryRun   bool
}

// Lifecycle runs the lifecycle of the operations of one cluster.
type Lifecycle struct{ Deps }

// New is the lifecycle of d's cluster.
func New(d Deps) *Lifecycle {
	if d.After == nil {
		d.After = time.After
	}
	return &Lifecycle{Deps: d}
}

// stepWorld is what the steps of cp know of the cluster, the one place the operator's
// words and readers are handed to them: the checkpoint, the racks of its DC, how to
// read and change the world, and the operator's words. A plan shows the steps' own
// text from it; a run (execute) adds the run's own settings.
func (l *Lifecycle) stepWorld(cp *record.Checkpoint) *steps.World {
	a := l.Adapter
	dc, _ := l.Cluster.DC(cp.Target.DC)
	w := &steps.World{
		CP: cp, Kube: l.Kube, Nodetool: l.Nodetool, Namespace: cp.Namespace, Racks: dc.Racks, ServerVersion: l.Cluster.ServerVersion,
		Spec:            a.DCSpec(cp.Namespace, cp.Cluster, cp.Target.DC),
		ClusterSelector: a.ClusterSelector(cp.Cluster),
		CountWords:      a.CountWords(), ResourceKind: a.Kind(), Container: a.Container(),
		Operator: operatorState(a, cp, l.Now), Now: l.Now,
		Judge: l.pauseJudge(),
		IsOperator: func(d *appsv1.Deployment) bool {
			_, ok := a.ControllerOf(d)
			return ok
		},
	}
	if sc, ok := a.(operator.Scaler); ok {
		w.Scaler = sc
		w.Watches, _ = a.(operator.Watches)
		w.Settler, _ = a.(operator.Settler)
		w.Operators = func(ctx context.Context) ([]operator.Controller, error) {
			return a.Operators(ctx, cp.Namespace)
		}
	}
	w.Exec, _ = l.Nodetool.Exec.(cql.Streamer)
	w.Datacenters, _ = a.(operator.DatacenterRemover)
	w.Adder, _ = a.(operator.DatacenterAdder)
	if ts, ok := a.(operator.Tasks); ok {
		w.Tasks = ts
		// A driven scale waits while another of the operator's tasks runs on the
		// datacenter (a resize during a cleanup breaks it: cass-operator #902).
		w.HoldForTasks = w.Scaler != nil
	}
	return w
}

// operatorState is the operator's per-rack status of cp's cluster, for the steps that
// repair it (nil when the operator keeps none).
func operatorState(a operator.Adapter, cp *record.Checkpoint, now func() time.Time) operator.OperatorState {
	if r, ok := a.(operator.StatusRepair); ok {
		return r.OperatorStatus(cp.Namespace, cp.Cluster, now)
	}
	return nil
}

// Planner reads the real world for a plan.
func (l *Lifecycle) Planner() *operation.Planner {
	ex, _ := l.Nodetool.Exec.(cql.Streamer)
	return &operation.Planner{Client: l.Kube, Nodetool: l.Nodetool, Exec: ex, Clock: l.Now, Holder: l.Self()}
}

// requireAccess refuses planning k in env unless the API server grants every
// permission k says its plan and run need.
func (l *Lifecycle) requireAccess(ctx context.Context, k pub.Kind, env *pub.Env) error {
	acc, err := k.Access(ctx, env)
	if err != nil {
		return err
	}
	return operation.CheckAccess(ctx, l.Kube, acc)
}

// ResumeHint is the command that continues the operation on this cluster.
func (l *Lifecycle) ResumeHint() string {
	return fmt.Sprintf("kubectl cassandra resume -n %s %s", l.Cluster.Namespace, l.Cluster.Name)
}

// abortHint is the command that stops the operation on this cluster.
func (l *Lifecycle) abortHint() string {
	return fmt.Sprintf("kubectl cassandra abort -n %s %s", l.Cluster.Namespace, l.Cluster.Name)
}

// StatusHint is the command that shows this cluster's state.
func (l *Lifecycle) StatusHint() string {
	return fmt.Sprintf("kubectl cassandra status -n %s %s", l.Cluster.Namespace, l.Cluster.Name)
}

// OperationTarget says what an operation does to which racks, for status and refusals
// (the kind's Target; a kind this build does not know is said as a scale).
func OperationTarget(kinds operation.Registry, kind string, t record.Target) string {
	if k, ok := kinds.Kind(kind); ok {
		return k.Target(t)
	}
	return operation.Scale{}.Target(t)
}

func (l *Lifecycle) target(cp *record.Checkpoint) string {
	return OperationTarget(l.Kinds, cp.Kind, cp.Target)
}

// StepTexts says what each step of cp does, as a plan shows it: the kind builds the
// steps as a run would, on the world a run starts from (stepWorld), and each says what
// it does (steps.PlanTexter, else engine.Describer; its ID when it says nothing).
// Describing a step reads nothing.
func (l *Lifecycle) StepTexts(k pub.Kind, cp *record.Checkpoint) map[string]string {
	impl, _ := operation.BuildSteps(k, l.stepWorld(cp))
	texts := map[string]string{}
	for _, s := range cp.Steps {
		texts[s.ID] = stepText(impl[s.ID], s.ID)
	}
	return texts
}

// stepText is what a step says it does in a plan (its ID when it says nothing).
func stepText(st pub.Step, id string) string {
	if t, ok := st.(pub.PlanTexter); ok {
		return t.PlanText()
	}
	if d, ok := st.(pub.Describer); ok {
		return d.Describe()
	}
	return id
}

// shown is plan as the UI shows it, under title ("": "Plan").
func (l *Lifecycle) shown(title string, k pub.Kind, plan *pub.Plan, next string) Shown {
	if title == "" {
		title = "Plan"
	}
	return Shown{Title: title, Kind: k, CP: plan.CP, Texts: l.StepTexts(k, plan.CP), Warnings: plan.Warnings, Findings: plan.Findings, Next: next}
}

// show shows plan before it is confirmed.
func (l *Lifecycle) show(title string, k pub.Kind, plan *pub.Plan, next string) {
	l.UI.ShowPlan(l.shown(title, k, plan, next))
}
