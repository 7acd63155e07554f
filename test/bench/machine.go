package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Contention is what else was running while a phase measured: the load average and any
// control plane (kube-apiserver) or go test that this run did not start. The machine is
// shared; figures taken next to another test run are perturbed and flagged as such.
type Contention struct {
	Phase   string   `json:"phase"`
	Load1   float64  `json:"load1"`
	Foreign []string `json:"foreign,omitempty"`
}

// SampleContention looks at the machine now. own is this run's state dir: processes that
// mention it are ours.
func SampleContention(phase, own string) Contention {
	c := Contention{Phase: phase}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			c.Load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	self := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		cmd := strings.Join(args, " ")
		if own != "" && strings.Contains(cmd, own) {
			continue
		}
		base := filepath.Base(args[0])
		switch {
		case base == "kube-apiserver":
			c.Foreign = append(c.Foreign, fmt.Sprintf("kube-apiserver (pid %d)", pid))
		case base == "go" && len(args) > 1 && args[1] == "test" && !strings.Contains(cmd, "-bench"):
			c.Foreign = append(c.Foreign, fmt.Sprintf("go test (pid %d)", pid))
		case strings.HasSuffix(base, ".test"):
			c.Foreign = append(c.Foreign, fmt.Sprintf("%s (pid %d)", base, pid))
		}
	}
	return c
}
