package operation

import (
	"context"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/engine"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/steps"
	pub "github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

// Offered are the operation kinds op offers beyond the common ones: an operator's own
// (pkg/operation, written under plugins/), adopted, or kinds written against this
// package (Offerer: a test's).
func Offered(op operator.Operator) []Kind {
	switch o := op.(type) {
	case Offerer:
		return o.Kinds()
	case pub.Offerer:
		return Adopt(o.Kinds()...)
	}
	return nil
}

// Adopt makes operator kinds written against pkg/operation kinds of the registry: the
// CLI plans, runs, resumes and aborts them as its own.
func Adopt(kinds ...pub.Kind) []Kind {
	out := make([]Kind, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, adopted{k})
	}
	return out
}

// adopted is an operator's kind as a Kind, a Commander and a StepBuilder.
type adopted struct{ k pub.Kind }

// Info implements Kind. The kind is aborted only before it changed the cluster (no
// Assess), and builds its steps itself (no Variant).
func (a adopted) Info() Info {
	i := a.k.Info()
	return Info{Name: i.Name, Checkpoint: i.Checkpoint, StepsHeader: i.StepsHeader, ConfirmWord: i.ConfirmWord,
		Abort: Abort{KeepsCount: i.Abort.KeepsCount}, Operator: i.Operator}
}

// Plan implements Kind.
func (a adopted) Plan(ctx context.Context, env *Env) (*Plan, error) { return a.k.Plan(ctx, a.env(env)) }

// Access implements Kind.
func (a adopted) Access(ctx context.Context, env *Env) ([]Access, error) {
	return a.k.Access(ctx, a.env(env))
}

// Summary implements Kind.
func (a adopted) Summary(cp *checkpoint.Checkpoint) string { return a.k.Summary(cp) }

// Target implements Kind.
func (a adopted) Target(t checkpoint.Target) string { return a.k.Target(t) }

// PlanLines implements Kind.
func (a adopted) PlanLines(cp *checkpoint.Checkpoint, findings []string) []string {
	return a.k.PlanLines(cp, findings)
}

// BuildSteps implements StepBuilder, through the World as the kind sees it.
func (a adopted) BuildSteps(w *steps.World) (map[string]engine.Step, error) {
	return a.k.BuildSteps(w.ForKind())
}

// Command implements Commander: the kind's command, not refused while the operator is
// busy, with no flags of its own.
func (a adopted) Command() Command {
	c := a.k.Command()
	cmd := Command{Use: c.Use, Short: c.Short, Long: c.Long, Example: c.Example, DryRun: c.DryRun, During: c.During}
	if c.InFlight != nil {
		cmd.InFlight = func(existing *checkpoint.Checkpoint, _ Asked) InFlight {
			in := c.InFlight(existing)
			return InFlight{Resume: in.Resume, Say: in.Say, Absorb: in.Absorb}
		}
	}
	if c.Next != nil {
		cmd.Next = func(ns, cluster string, _ *Plan, _ Request) string { return c.Next(ns, cluster) }
	}
	return cmd
}

// env is env as the kind sees it: the same cluster and request, with the plugin's
// Toolkit.
func (a adopted) env(env *Env) *pub.Env {
	return &pub.Env{Toolkit: toolkit{p: env.Planner, env: env, kind: a}, Cluster: env.Cluster, Adapter: env.Adapter, Request: env.Request, InFlight: env.InFlight}
}
