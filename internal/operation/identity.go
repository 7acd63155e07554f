package operation

import (
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubectl-cassandra/kubectl-cassandra/internal/checkpoint"
	"github.com/kubectl-cassandra/kubectl-cassandra/internal/version"
	"github.com/kubectl-cassandra/kubectl-cassandra/pkg/record"
)

// Self identifies this run as a checkpoint holder.
func Self() record.Holder {
	h := record.Holder{PID: os.Getpid(), Version: version.Version, Session: rand.String(8), LeaseSeconds: int(checkpoint.DefaultLease / time.Second)}
	h.Host, _ = os.Hostname()
	h.Machine, h.ProcessStart = Machine(), ProcessStart(h.PID)
	if u, err := user.Current(); err == nil {
		h.User = u.Username
	}
	return h
}

// Machine identifies where this process's PID means something: the kernel's boot id
// (one per machine and boot, shared by the containers on it) and the PID namespace (a
// container has its own). Empty without procfs (macOS, Windows): the checkpoint then
// compares host names only, as older plugins did.
func Machine() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return "boot:" + strings.TrimSpace(string(boot)) + "/" + ns
}

// ProcessStart is when process pid started, in clock ticks since boot (field 22 of
// /proc/PID/stat, proc(5)); empty when unknown.
func ProcessStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	// After the command name: state is field 3, starttime field 22.
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// HolderAlive tells whether the process a holder on this machine names still runs: its
// PID is alive and, when the holder recorded it, started when the holder's did (a PID
// reused by another process is not the holder).
func HolderAlive(h record.Holder) bool {
	if !ProcessAlive(h.PID) {
		return false
	}
	if h.ProcessStart == "" {
		return true
	}
	start := ProcessStart(h.PID)
	return start == "" || start == h.ProcessStart
}
