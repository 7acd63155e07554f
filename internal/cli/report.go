package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/output"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/report"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/version"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operator"
)

const reportExample = `  # Everything support needs, in one archive (secrets never included, see REDACTED.txt)
  kubectl cassandra report -n cassandra cassandra-demo

  # Name the archive; without exec into pods (no nodetool)
  kubectl cassandra report cassandra-demo -f /tmp/demo.tar.gz --nodetool=false

  # The index (files, sizes, what could not be read) for scripts
  kubectl cassandra report cassandra-demo -o json`

func newReportCmd(o *Options) *cobra.Command {
	var file, out string
	logLines := int64(500)
	withNodetool := true
	cmd := &cobra.Command{
		Use:   "report [CLUSTER]",
		Short: "Write a diagnostics archive of the cluster (resources, events, operator logs, nodetool)",
		Long: `Writes one tar.gz with what support needs: the cluster resource with its status, its
StatefulSets, pods (with their events), PVCs and PVs, the cluster resource's events, the
operator Deployment and the last --log-lines of its logs, nodetool status, info, netstats and
describecluster of every pod (--nodetool=false skips them), the plugin's checkpoint and
last-operation records decoded, and the plugin version. Secrets are never read into it;
values whose names look like passwords, tokens or keys are redacted (REDACTED.txt lists
them). A read that is forbidden or fails is listed in ERRORS.txt, never fatal: the read-only
part of docs/rbac.yaml is enough. A summary goes to stderr; -o json prints the index.

` + exit.Help,
		Example:           reportExample,
		GroupID:           groupInspect,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: o.completeClusters,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(out, "text", "json"); err != nil {
				return err
			}
			if logLines < 0 {
				return exit.Usagef("--log-lines must be 0 or more, got %d", logLines)
			}
			return o.runReport(cmd.Context(), args, file, out, logLines, withNodetool)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "archive to write (default <cluster>-report-<time>.tar.gz in the current directory)")
	cmd.Flags().Int64Var(&logLines, "log-lines", logLines, "last lines of each operator pod's log to include")
	cmd.Flags().BoolVar(&withNodetool, "nodetool", true, "include nodetool status, info, netstats and describecluster of every pod (one exec each)")
	addOutputFlag(cmd, &out, "text", "json")
	return cmd
}

func (o *Options) runReport(ctx context.Context, args []string, file, out string, logLines int64, withNodetool bool) error {
	s, err := o.open(ctx, args)
	if err != nil {
		return err
	}
	cl := s.cluster
	if file == "" {
		file = fmt.Sprintf("%s-report-%s.tar.gz", cl.Name, o.Now().UTC().Format("20060102-150405"))
	}
	cfg := report.Config{
		Kube:      s.c.Kube,
		Namespace: cl.Namespace, Name: cl.Name, Kind: s.adapter.Kind(),
		Cluster: func(ctx context.Context) (*unstructured.Unstructured, error) {
			_, u, err := s.adapter.Get(ctx, cl.Namespace, cl.Name)
			return u, err
		},
		Selector: s.adapter.ClusterSelector(cl.Name),
		LogLines: logLines,
		Records:  o.records,
		Version:  version.Get(),
		Now:      o.Now,
	}
	cfg.Operators = func(ctx context.Context) ([]report.Operator, error) {
		var outOps []report.Operator
		seen := map[string]bool{}
		// A paused operator has no replica and is not "running": the checkpoint names it.
		if cp, err := checkpoint.Decode(cl.Annotations[checkpoint.Annotation], cl.UID, o.Kinds.Schemas()); err == nil && cp != nil && cp.PausedOperator != nil {
			p := cp.PausedOperator
			outOps = append(outOps, report.Operator{Namespace: p.Namespace, Name: p.Name})
			seen[p.Namespace+"/"+p.Name] = true
		}
		ops, err := s.adapter.RunningOperators(ctx, cl.Namespace)
		for _, op := range ops {
			if !seen[op.String()] {
				outOps = append(outOps, report.Operator{Namespace: op.Namespace, Name: op.Name})
			}
		}
		return outOps, err
	}
	if rel, ok := s.adapter.(operator.Related); ok {
		cfg.Related = func(ctx context.Context) (map[string][]unstructured.Unstructured, error) {
			return rel.Related(ctx, cl.Namespace, cl.Name)
		}
	}
	if withNodetool {
		cfg.Nodetool = s.nt.Output
		if s.nt.Auth != nil {
			cfg.Secrets = func(ctx context.Context) []string {
				if c, err := s.nt.Auth(ctx); err == nil && c != nil {
					return []string{c.Password}
				}
				return nil
			}
		}
	}
	rep := report.Build(ctx, cfg)
	if err := writeArchive(rep, file); err != nil {
		return fmt.Errorf("cannot write the report to %s: %w", file, err)
	}
	rep.Summary(o.ErrOut, file)
	if out == "json" {
		return output.Print(o.Out, "json", rep.Index(file))
	}
	return nil
}

// writeArchive writes the archive through a temporary file in the same directory, so an
// interrupted write never leaves a truncated archive under the name; only its owner may
// read it (it describes the cluster in detail).
func writeArchive(rep *report.Report, file string) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".report-*.tar.gz")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := rep.Write(tmp, file); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// records decodes the plugin's annotations on the cluster resource.
func (o *Options) records(u *unstructured.Unstructured) (map[string]any, map[string]error) {
	files, bad := map[string]any{}, map[string]error{}
	ann := u.GetAnnotations()
	if v, ok := ann[checkpoint.Annotation]; ok {
		cp, err := checkpoint.Decode(v, string(u.GetUID()), o.Kinds.Schemas())
		if err != nil {
			bad["checkpoint ("+checkpoint.Annotation+")"] = err
		} else {
			files["checkpoint.json"] = cp
		}
	}
	if v, ok := ann[checkpoint.LastOperationAnnotation]; ok {
		var lo any
		if err := json.Unmarshal([]byte(v), &lo); err != nil {
			bad["last operation ("+checkpoint.LastOperationAnnotation+")"] = fmt.Errorf("not valid JSON: %w", err)
		} else {
			files["last-operation.json"] = lo
		}
	}
	return files, bad
}
