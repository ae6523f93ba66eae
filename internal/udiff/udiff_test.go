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

// apply is a minimal, strict patch(1) for diffs of newline-terminated
// text: each hunk header's ranges, old side and new side, must match where
// the hunk sits and how many lines it holds, and context and removed lines
// must be the old text's.
func apply(t *testing.T, a, d string) string {
	t.Helper()
	if d == "" {
		return a
	}
	src := splitLines(a)
	var out []string
	pos := 0
	var oldLeft, newLeft int // lines the current hunk still owes, per side
	closeHunk := func() {
		if oldLeft != 0 || newLeft != 0 {
			t.Fatalf("hunk has %d old and %d new lines fewer than its header says:\n%s", oldLeft, newLeft, d)
		}
	}
	for _, l := range strings.SplitAfter(d, "\n")[2:] {
		if l == "" {
			continue
		}
		switch l[0] {
		case '@':
			closeHunk()
			f := strings.Fields(l)
			if len(f) < 4 || f[0] != "@@" || f[3] != "@@" || f[1][0] != '-' || f[2][0] != '+' {
				t.Fatalf("malformed hunk header %q", l)
			}
			var as, an, bs, bn int
			parse(f[1][1:], &as, &an)
			parse(f[2][1:], &bs, &bn)
			// An empty range names the line before it.
			start, newStart := as-1, bs-1
			if an == 0 {
				start = as
			}
			if bn == 0 {
				newStart = bs
			}
			if start < pos || start > len(src) {
				t.Fatalf("hunk %q starts at old line %d, after %d lines were used:\n%s", l, start+1, pos, d)
			}
			out = append(out, src[pos:start]...)
			pos = start
			if newStart != len(out) {
				t.Fatalf("hunk %q says its new side starts at line %d; it lands at line %d:\n%s", l, newStart+1, len(out)+1, d)
			}
			oldLeft, newLeft = an, bn
		case ' ', '-':
			if pos >= len(src) || src[pos] != l[1:] {
				t.Fatalf("line %q does not match old line %d:\n%s", l, pos+1, d)
			}
			if l[0] == ' ' {
				out = append(out, src[pos])
				newLeft--
			}
			pos++
			oldLeft--
		case '+':
			out = append(out, l[1:])
			newLeft--
		default:
			t.Fatalf("unexpected diff line %q", l)
		}
		if oldLeft < 0 || newLeft < 0 {
			t.Fatalf("hunk holds more lines than its header says:\n%s", d)
		}
	}
	closeHunk()
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
