package udiff

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	b := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\n"
	want := `--- old
+++ new
@@ -1,10 +1,11 @@
 a
 b
 c
-d
+D
 e
 f
 g
 h
 i
 j
+k
`
	if got := Diff("old", a, "new", b); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if Diff("x", a, "y", a) != "" {
		t.Error("equal inputs gave a diff")
	}
	far := strings.Repeat("same\n", 20)
	got := Diff("o", "x\n"+far+"y\n", "n", "X\n"+far+"Y\n")
	if strings.Count(got, "@@ ") != 2 {
		t.Errorf("distant changes should be two hunks:\n%s", got)
	}
	if got := Diff("o", "", "n", "new\n"); got != "--- o\n+++ n\n@@ -0,0 +1 @@\n+new\n" {
		t.Errorf("creation diff:\n%s", got)
	}
	if got := Diff("o", "a", "n", "a\n"); !strings.Contains(got, "\\ No newline at end of file") {
		t.Errorf("missing final newline not shown:\n%s", got)
	}
}

// TestDiffApplies: applying the hunks of a random diff to a gives b.
func TestDiffApplies(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	words := []string{"a\n", "b\n", "c\n", "d\n"}
	gen := func() string {
		var s strings.Builder
		for range r.IntN(30) {
			s.WriteString(words[r.IntN(len(words))])
		}
		return s.String()
	}
	for i := 0; i < 500; i++ {
		a, b := gen(), gen()
		d := Diff("a", a, "b", b)
		if got := apply(t, a, d); got != b {
			t.Fatalf("apply(diff) = %q, want %q\n%s", got, b, d)
		}
	}
}

// apply is a minimal patch(1) for well-formed diffs of newline-terminated text.
func apply(t *testing.T, a, d string) string {
	if d == "" {
		return a
	}
	src := splitLines(a)
	var out []string
	pos := 0
	for _, l := range strings.SplitAfter(d, "\n")[2:] {
		if l == "" {
			continue
		}
		switch l[0] {
		case '@':
			var as, an, bs, bn int
			var h string
			h = strings.Fields(l)[1][1:]
			parse(h, &as, &an)
			_ = bs
			_ = bn
			start := as - 1
			if an == 0 {
				start = as
			}
			out = append(out, src[pos:start]...)
			pos = start
		case ' ':
			out = append(out, src[pos])
			pos++
		case '-':
			pos++
		case '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

func parse(s string, start, n *int) {
	*n = 1
	if i := strings.IndexByte(s, ','); i >= 0 {
		*n = atoi(s[i+1:])
		s = s[:i]
	}
	*start = atoi(s)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
