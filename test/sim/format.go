package sim

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Size units of FileUtils.stringifyFileSize (binary steps, IEC names since Cassandra 3.6).
const (
	kib = 1024.0
	mib = kib * 1024
	gib = mib * 1024
	tib = gib * 1024
)

// stringifyFileSize reproduces org.apache.cassandra.io.util.FileUtils#stringifyFileSize:
// DecimalFormat("#.##") (HALF_EVEN on the exact binary value, which is what strconv does)
// followed by the unit. The Load cell of status/info is exactly this string.
func stringifyFileSize(v float64) string {
	switch {
	case v >= tib:
		return decimalHashHash(v/tib) + " TiB"
	case v >= gib:
		return decimalHashHash(v/gib) + " GiB"
	case v >= mib:
		return decimalHashHash(v/mib) + " MiB"
	case v >= kib:
		return decimalHashHash(v/kib) + " KiB"
	default:
		return decimalHashHash(v) + " bytes"
	}
}

// decimalHashHash is DecimalFormat("#.##"): at most two decimals, no trailing zeros.
func decimalHashHash(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

// percentOneDecimal is DecimalFormat("##0.0%") applied to a Java float ownership value.
func percentOneDecimal(f float32) string {
	return strconv.FormatFloat(float64(f)*100, 'f', 1, 64) + "%"
}

// parseSize reads a size written the way nodetool prints it ("1.2 GiB", "45.71 KiB",
// "629145600 bytes", also the pre-3.6 "KB/MB/GB/TB") into bytes. NodeSpec.Load uses it, so
// a spec can give either the human string of a fixture or the exact byte count.
func parseSize(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, unit, ok := strings.Cut(s, " ")
	if !ok {
		num, unit = s, "bytes"
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(num, ",", "."), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	switch strings.TrimSpace(unit) {
	case "bytes", "B", "":
		return v, nil
	case "KiB", "KB":
		return v * kib, nil
	case "MiB", "MB":
		return v * mib, nil
	case "GiB", "GB":
		return v * gib, nil
	case "TiB", "TB":
		return v * tib, nil
	}
	return 0, fmt.Errorf("bad size unit in %q", s)
}

// javaFixed is Java's String.format("%.<prec>f", v). Unlike Go it rounds HALF_UP on the
// shortest decimal representation of the double (FormattedFloatingDecimal), so e.g.
// 1.005 prints 1.01 in Java and 1.00 in Go; netstats percentages go through this.
func javaFixed(v float64, prec int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	digits := strconv.FormatFloat(v, 'f', -1, 64) // shortest repr, plain notation
	intPart, frac, _ := strings.Cut(digits, ".")
	for len(frac) < prec+1 {
		frac += "0"
	}
	roundUp := frac[prec] >= '5'
	keep := []byte(intPart + frac[:prec])
	if roundUp {
		i := len(keep) - 1
		for ; i >= 0; i-- {
			if keep[i] == '9' {
				keep[i] = '0'
				continue
			}
			keep[i]++
			break
		}
		if i < 0 {
			keep = append([]byte{'1'}, keep...)
		}
	}
	ip := string(keep[:len(keep)-prec])
	out := ip
	if prec > 0 {
		out += "." + string(keep[len(keep)-prec:])
	}
	if neg && strings.Trim(out, "0.") != "" {
		out = "-" + out
	}
	return out
}

// javaDoubleString is Double.toString: plain notation with at least one fractional digit
// in [1e-3, 1e7), otherwise "computerized" scientific notation such as 1.29944104E9.
// gossipinfo prints LOAD this way.
func javaDoubleString(v float64) string {
	if v == 0 {
		return "0.0"
	}
	a := v
	if a < 0 {
		a = -a
	}
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // e.g. 1.29944104e+09
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// padRight is Java's "%-<w>s".
func padRight(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}

// padLeft is Java's "%<w>s".
func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// tableBuilder reproduces org.apache.cassandra.tools.nodetool.formatter.TableBuilder in
// its SharedTable form: every cell, including the last of a row, is padded to the widest
// cell of its column across all tables sharing the widths, and cells are joined by the
// delimiter. That is where the trailing spaces of 4.0+ status rows come from.
type tableBuilder struct {
	delim  string
	tables [][][]string
}

func (t *tableBuilder) next() int {
	t.tables = append(t.tables, nil)
	return len(t.tables) - 1
}

func (t *tableBuilder) add(table int, cells ...string) {
	t.tables[table] = append(t.tables[table], cells)
}

func (t *tableBuilder) widths() []int {
	var w []int
	for _, tbl := range t.tables {
		for _, row := range tbl {
			for i, c := range row {
				if i >= len(w) {
					w = append(w, 0)
				}
				if len(c) > w[i] {
					w[i] = len(c)
				}
			}
		}
	}
	return w
}

func (t *tableBuilder) print(b *strings.Builder, table int) {
	w := t.widths()
	for _, row := range t.tables[table] {
		for i := range w {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			b.WriteString(padRight(c, w[i]))
			if i < len(w)-1 {
				b.WriteString(t.delim)
			}
		}
		b.WriteString("\n")
	}
}

// hash64 gives stable pseudo-random values (tokens, UUID node bits) from a string, so two
// processes sharing a state file derive the same values without storing them.
func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// splitmix64 is a tiny deterministic generator for the -T token list.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	z := x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
