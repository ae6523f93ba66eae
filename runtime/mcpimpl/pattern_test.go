package mcpimpl

import (
	"regexp"
	"testing"
)

var patternCases = []string{
	`^D-[0-9]+$`, `^[a-z0-9_-]{1,64}$`, `^[A-Z]{3}$`, `^\d{4}-\d{2}-\d{2}$`, `^v?[0-9]+$`, `^a*b*$`, `^ab?c$`,
	`^[a-z]+[0-9]*$`, `^[a-z]*[a-c]$`, `^x+x$`, `^[^/]+/[^/]+$`, `^é+$`, `^$`, `^(?i)abc$`, `abc`, `^a|b$`,
	`^[\p{L}]+$`, `^.+$`, `^a{2,3}$`, `^[0-9a-f]{40}$`, `^\w+@\w+$`, `^[a-z]+\.?[a-z]*$`, `^[-+]?[0-9]+(\.[0-9]+)?$`,
	`^[a-z]{2,4}[a-z]$`, `^a?a$`, `^[ab]*c?[bc]$`, `^[0-9]{0,3}x{2}$`, `^[a-f]{3,}$`, `^\s*\S+$`,
}

// The scan and regexp agree on every pattern and input, including the
// ones the scan leaves to regexp.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"", "D-1", "D-", "d-1", "D-12x", "abc", "ABC", "2026-12-01", "é", "\xff", "a/b", "aab", "xxx", "ab", "1.5", "+1"} {
		for i := range patternCases {
			f.Add(i, s)
		}
	}
	f.Fuzz(func(t *testing.T, i int, s string) {
		if i < 0 {
			i = -i
		}
		expr := patternCases[i%len(patternCases)]
		if got, want := CompilePattern(expr).MatchString(s), regexp.MustCompile(expr).MatchString(s); got != want {
			t.Fatalf("%s on %q: %v, regexp says %v", expr, s, got, want)
		}
	})
}

func TestPatternScans(t *testing.T) {
	for expr, scans := range map[string]bool{
		`^D-[0-9]+$`: true, `^[a-z0-9_-]{1,64}$`: true, `^\d{4}-\d{2}-\d{2}$`: true,
		`^x+x$`: false, `^[a-z]*[a-c]$`: false, `^(?i)abc$`: false, `abc`: false, `^.+$`: false,
	} {
		if got := CompilePattern(expr).steps != nil; got != scans {
			t.Errorf("%s: scanned %v, want %v", expr, got, scans)
		}
	}
}

func BenchmarkPattern(b *testing.B) {
	p, re := CompilePattern(`^D-[0-9]+$`), regexp.MustCompile(`^D-[0-9]+$`)
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			p.MatchString("D-100245")
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			re.MatchString("D-100245")
		}
	})
}
