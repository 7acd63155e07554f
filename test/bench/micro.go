package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// MicroPackages hold the engine micro-benchmarks `make bench` runs.
var MicroPackages = []string{"./internal/checkpoint", "./internal/nodetool"}

// Micro is one micro-benchmark's results over -count runs.
type Micro struct {
	Name        string    `json:"name"`
	NsPerOp     []float64 `json:"nsPerOp"`
	MedianNs    float64   `json:"medianNsPerOp"`
	BytesPerOp  float64   `json:"bytesPerOp"`
	AllocsPerOp float64   `json:"allocsPerOp"`
}

// RunMicro runs `go test -run '^$' -bench . -benchmem` on MicroPackages, copying the raw
// output (benchstat's input format) to out, and returns it with the parsed results.
func RunMicro(ctx context.Context, root string, count int, benchtime string, out io.Writer) (string, []Micro, error) {
	args := []string{"test", "-run", "^$", "-bench", ".", "-benchmem", "-count", strconv.Itoa(count), "-benchtime", benchtime}
	args = append(args, MicroPackages...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = os.Environ()
	var raw strings.Builder
	cmd.Stdout = io.MultiWriter(&raw, out)
	cmd.Stderr = out
	if err := cmd.Run(); err != nil {
		return raw.String(), ParseMicro(raw.String()), fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return raw.String(), ParseMicro(raw.String()), nil
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// ParseMicro reads `go test -bench` output: every line of every benchmark, grouped by
// name in order of first appearance.
func ParseMicro(raw string) []Micro {
	var out []Micro
	idx := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(raw))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		i, ok := idx[m[1]]
		if !ok {
			i = len(out)
			idx[m[1]] = i
			out = append(out, Micro{Name: m[1]})
		}
		f := strings.Fields(m[2])
		for j := 0; j+1 < len(f); j += 2 {
			v, err := strconv.ParseFloat(f[j], 64)
			if err != nil {
				continue
			}
			switch f[j+1] {
			case "ns/op":
				out[i].NsPerOp = append(out[i].NsPerOp, v)
			case "B/op":
				out[i].BytesPerOp = v
			case "allocs/op":
				out[i].AllocsPerOp = v
			}
		}
	}
	for i := range out {
		out[i].MedianNs = Median(out[i].NsPerOp)
	}
	return out
}
