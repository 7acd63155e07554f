package operation

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/exit"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/operation"
)

// What the plugin's own kinds' commands (pkg/operation's Command) share.

// RackFlags registers --rack and --dc (what of the cluster the operation acts on);
// rack is the --rack flag's help.
func RackFlags(fs *pflag.FlagSet, req *operation.Request, rack string) {
	fs.StringVar(&req.Rack, "rack", "", rack)
	fs.StringVar(&req.DC, "dc", "", "Datacenter of the rack (required when the rack name exists in several); alone: every rack of the datacenter")
}

// RequireRack refuses a request that names neither a rack nor a datacenter.
func RequireRack(req operation.Request) error {
	if req.Rack == "" && req.DC == "" {
		return exit.Usagef("name the rack with --rack (or a whole datacenter with --dc)")
	}
	return nil
}

// RackNext is the start of the command that runs a plan on the racks of req: the
// datacenter the plan resolved, and the rack when one was named.
func RackNext(verb, ns, cluster string, plan *operation.Plan, req operation.Request) string {
	next := fmt.Sprintf("kubectl cassandra %s -n %s %s --dc %s", verb, ns, cluster, plan.DC.Name)
	if req.Rack != "" {
		next += " --rack " + req.Rack
	}
	return next
}
