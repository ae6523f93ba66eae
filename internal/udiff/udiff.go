// Package udiff renders unified diffs of text files, for mcpgen generate
// --check. It uses Myers' O(ND) algorithm on lines, so the cost grows with
// the size of the difference, not the product of the file sizes.
package udiff

import (
	"fmt"
	"strings"
)

// Context is the number of unchanged lines shown around each change.
const Context = 3

// Diff returns a unified diff turning a into b, labelled with the two names,
// or "" when they are equal.
func Diff(nameA, a, nameB, b string) string {
	if a == b {
		return ""
	}
	la, lb := splitLines(a), splitLines(b)
	ops := myers(la, lb)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	// Group edits into hunks with Context lines around them.
	type line struct {
		kind byte // ' ', '-', '+'
		text string
		ai   int // 0-based line in a (for ' ' and '-')
		bi   int // 0-based line in b (for ' ' and '+')
	}
	var lines []line
	ai, bi := 0, 0
	for _, op := range ops {
		switch op {
		case '=':
			lines = append(lines, line{' ', la[ai], ai, bi})
			ai++
			bi++
		case '-':
			lines = append(lines, line{'-', la[ai], ai, bi})
			ai++
		case '+':
			lines = append(lines, line{'+', lb[bi], ai, bi})
			bi++
		}
	}
	for i := 0; i < len(lines); {
		if lines[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-Context)
		end := i
		// Extend over changes separated by at most 2*Context equal lines.
		for j := i; j < len(lines); j++ {
			if lines[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*Context {
				break
			}
		}
		end = min(len(lines), end+Context)
		h := lines[start:end]
		na, nb := 0, 0
		for _, l := range h {
			if l.kind != '+' {
				na++
			}
			if l.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", rng(h[0].ai, na), rng(h[0].bi, nb))
		for _, l := range h {
			out.WriteByte(l.kind)
			out.WriteString(strings.TrimSuffix(l.text, "\n"))
			out.WriteByte('\n')
			if !strings.HasSuffix(l.text, "\n") {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

// rng formats a hunk range: start is 0-based, shown 1-based; an empty
// range shows the line before it, as diff(1) does.
func rng(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s after each newline, keeping them.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// myers returns the edit script turning a into b as a sequence of '='
// (keep), '-' (delete from a) and '+' (insert from b).
func myers(a, b []string) []byte {
	n, m := len(a), len(b)
	maxD := n + m
	off := maxD
	v := make([]int, 2*maxD+2)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d, off)
			}
		}
	}
	return nil // unreachable: d = n+m always reaches the end
}

// backtrack walks the saved frontiers back from the end; trace[d] is the
// frontier as it was before step d.
func backtrack(trace [][]int, a, b []string, d, off int) []byte {
	var ops []byte
	x, y := len(a), len(b)
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		pk := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			ops = append(ops, '=')
			x--
			y--
		}
		if x == px {
			ops = append(ops, '+')
		} else {
			ops = append(ops, '-')
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		ops = append(ops, '=')
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}
