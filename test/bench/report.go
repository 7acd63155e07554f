package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode/utf8"
)

// Results of a figure against its target.
const (
	Pass  = "PASS"
	Fail  = "FAIL"
	Info  = "info"  // no target: for the record
	Error = "ERROR" // could not be measured
)

// Figure is one row of the table.
type Figure struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Display string  `json:"display"`
	Target  string  `json:"target"`
	Result  string  `json:"result"`
	// Why explains a FAIL (or an ERROR) from what was measured.
	Why string `json:"why,omitempty"`
}

// Machine describes where the figures were measured.
type Machine struct {
	Cores     int     `json:"cores"`
	CPU       string  `json:"cpu"`
	MemoryGiB float64 `json:"memoryGiB"`
	OS        string  `json:"os"`
	Go        string  `json:"go"`
	Kubectl   string  `json:"kubectl"`
}

// Settings are the knobs of the run.
type Settings struct {
	PollInterval       string `json:"pollInterval"`
	DecommissionTime   string `json:"decommissionTime"`
	MemoryDecommission string `json:"memoryRunDecommissionTime"`
	KwokNodes          int    `json:"kwokNodes"`
	ColdStartRuns      int    `json:"coldStartRuns"`
	MicroCount         int    `json:"microCount"`
	MicroBenchtime     string `json:"microBenchtime"`
	CRD                string `json:"crd"`
	CassandraVersion   string `json:"cassandraVersion"`
}

// Report is bench/results.json.
type Report struct {
	Machine     Machine            `json:"machine"`
	Settings    Settings           `json:"settings"`
	Figures     []Figure           `json:"figures"`
	Scale       []*ScaleAnalysis   `json:"scale"`
	ColdStart   *ColdStart         `json:"coldStart,omitempty"`
	Stream      *StreamReport      `json:"stream,omitempty"`
	Driven      *DrivenResult      `json:"driven,omitempty"`
	Micro       []Micro            `json:"micro,omitempty"`
	MicroRaw    string             `json:"microRaw,omitempty"`
	BinaryBytes int64              `json:"binaryBytes"`
	Phases      map[string]float64 `json:"phasesS"`
	RuntimeS    float64            `json:"runtimeS"`
	// Contention samples the machine at the start and end of each measuring phase.
	Contention []Contention `json:"contention,omitempty"`
	Errors     []string     `json:"errors,omitempty"`
}

// DescribeMachine reads the CPU, memory and tool versions.
func DescribeMachine(kubectl string) Machine {
	m := Machine{Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(), Kubectl: kubectl}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
		_ = f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb float64
			if n, _ := fmt.Sscanf(sc.Text(), "MemTotal: %f kB", &kb); n == 1 {
				m.MemoryGiB = math.Round(kb/1024/1024*10) / 10
				break
			}
		}
		_ = f.Close()
	}
	return m
}

// WriteJSON writes the report to path (creating its directory).
func (r *Report) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PrintTable prints the one table (figure, value, target, result), then the notes that
// explain each FAIL.
func (r *Report) PrintTable(w io.Writer) {
	fmt.Fprintf(w, "\nkubectl-cassandra benchmarks — %d cores (%s), %.0f GiB, %s, %s\n", r.Machine.Cores, r.Machine.CPU, r.Machine.MemoryGiB, r.Machine.Go, r.Machine.Kubectl)
	fmt.Fprintf(w, "local control plane (kube-apiserver/etcd/KCM/scheduler + %d kwok nodes), simulated nodetool (Cassandra %s), decommission %s, --poll-interval %s\n\n",
		r.Settings.KwokNodes, r.Settings.CassandraVersion, r.Settings.DecommissionTime, r.Settings.PollInterval)
	if w2 := r.ContentionWarning(); w2 != "" {
		fmt.Fprintf(w, "WARNING: %s\n\n", w2)
	}
	head := []string{"Figure", "Value", "Target", "Result"}
	rows := [][]string{head}
	for _, f := range r.Figures {
		rows = append(rows, []string{f.Name, f.Display, f.Target, f.Result})
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(row []string) {
		var b strings.Builder
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-utf8.RuneCountInString(c)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(rows[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
	pass, fail, errs := 0, 0, 0
	for _, f := range r.Figures {
		switch f.Result {
		case Pass:
			pass++
		case Fail:
			fail++
		case Error:
			errs++
		}
	}
	fmt.Fprintf(w, "\n%d PASS, %d FAIL, %d ERROR (rows marked info have no target)\n", pass, fail, errs)
	first := true
	for _, f := range r.Figures {
		if f.Why == "" {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nWhy (from what was measured):\n")
			first = false
		}
		fmt.Fprintf(w, "- %s [%s]: %s\n", f.Name, f.Result, f.Why)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "! %s\n", e)
	}
}

// ContentionWarning says which measuring phases ran next to foreign test runs.
func (r *Report) ContentionWarning() string {
	var phases []string
	seen := map[string]bool{}
	for _, c := range r.Contention {
		switch c.Phase {
		case "controlPlaneStart", "clusters", "clustersStream", "teardown":
			continue // nothing is measured then
		}
		if len(c.Foreign) > 0 && !seen[c.Phase] {
			seen[c.Phase] = true
			phases = append(phases, fmt.Sprintf("%s (%s; load %.1f)", c.Phase, strings.Join(c.Foreign, ", "), c.Load1))
		}
	}
	if len(phases) == 0 {
		return ""
	}
	return "other test runs shared this machine during: " + strings.Join(phases, "; ") + ". Those figures are perturbed; run make bench again on a quiet machine."
}
