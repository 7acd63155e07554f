package output

import (
	"reflect"
	"strings"
	"testing"
)

// TestFit: lines are cut to one column less than the terminal, with "…"; colour takes
// no column and a cut inside it is reset; a text taller than the terminal keeps the
// rows but the last, which says how many lines it left out.
func TestFit(t *testing.T) {
	red := func(s string) string { return "\033[31m" + s + "\033[0m" }
	cases := []struct {
		name       string
		text       string
		cols, rows int
		want       []string
	}{
		{"fits", "ab\ncd\n", 10, 5, []string{"ab", "cd"}},
		{"exactly one column short of the width", "abcd\n", 5, 5, []string{"abcd"}},
		{"the last column stays free", "abcde\n", 5, 5, []string{"abc…"}},
		{"colour takes no column", red("abcd") + "\n", 5, 5, []string{red("abcd")}},
		{"cut inside a colour is reset", red("abcdefgh") + "\n", 5, 5, []string{"\033[31mabc…\033[0m"}},
		{"too tall", "1\n2\n3\n4\n5\n", 60, 4, []string{"1", "2", "… 3 more lines (a taller terminal shows them)"}},
		{"empty", "", 80, 24, nil},
	}
	for _, c := range cases {
		if got := Fit(c.text, c.cols, c.rows); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	for _, l := range Fit(strings.Repeat("x", 500)+"\n", 80, 24) {
		if n := visible(l); n != 79 {
			t.Errorf("a 500-column line cut to %d columns on 80, want 79", n)
		}
	}
}
