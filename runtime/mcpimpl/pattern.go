package mcpimpl

import (
	"regexp"
	"regexp/syntax"
	"unicode/utf8"
)

// Pattern is a compiled "pattern" keyword. Most patterns in tool schemas
// are anchored runs of literals and character classes (^D-[0-9]+$,
// ^[a-z0-9_-]{1,64}$); those are matched by one scan over the string, which
// is several times faster than regexp's one-pass matcher, and anything else
// by regexp. Both give the same answer: the scan is only used where greedy
// matching cannot be wrong (each repeated class is followed by the end or
// by something it cannot match).
type Pattern struct {
	re    *regexp.Regexp
	steps []patternStep // nil: use re
}

type patternStep struct {
	ranges   []rune // pairs lo, hi, as in syntax.Regexp.Rune
	min, max int    // max -1: unbounded
}

// CompilePattern compiles expr (Go syntax) like regexp.MustCompile.
func CompilePattern(expr string) *Pattern {
	p := &Pattern{re: regexp.MustCompile(expr)}
	if re, err := syntax.Parse(expr, syntax.Perl); err == nil {
		p.steps = simpleSteps(re)
	}
	return p
}

// MatchString reports whether s matches the pattern.
func (p *Pattern) MatchString(s string) bool {
	if p.steps == nil {
		return p.re.MatchString(s)
	}
	i := 0
	for _, st := range p.steps {
		n := 0
		for (st.max < 0 || n < st.max) && i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !inRanges(r, st.ranges) {
				break
			}
			i += w
			n++
		}
		if n < st.min {
			return false
		}
	}
	return i == len(s)
}

func inRanges(r rune, ranges []rune) bool {
	for j := 0; j+1 < len(ranges); j += 2 {
		if r >= ranges[j] && r <= ranges[j+1] {
			return true
		}
	}
	return false
}

// simpleSteps returns the steps of re when it is ^ item* $ with each item
// a literal or a (repeated) character class and greedy matching exact, else
// nil.
func simpleSteps(re *syntax.Regexp) []patternStep {
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil
	}
	var steps []patternStep
	for _, sub := range re.Sub[1 : len(re.Sub)-1] {
		min, max := 1, 1
		switch sub.Op {
		case syntax.OpStar:
			min, max, sub = 0, -1, sub.Sub[0]
		case syntax.OpPlus:
			min, max, sub = 1, -1, sub.Sub[0]
		case syntax.OpQuest:
			min, max, sub = 0, 1, sub.Sub[0]
		case syntax.OpRepeat:
			min, max, sub = sub.Min, sub.Max, sub.Sub[0]
		}
		if sub.Flags&syntax.FoldCase != 0 {
			return nil
		}
		switch sub.Op {
		case syntax.OpLiteral:
			if min != 1 || max != 1 {
				if len(sub.Rune) != 1 {
					return nil
				}
				steps = append(steps, patternStep{ranges: []rune{sub.Rune[0], sub.Rune[0]}, min: min, max: max})
				continue
			}
			for _, r := range sub.Rune {
				steps = append(steps, patternStep{ranges: []rune{r, r}, min: 1, max: 1})
			}
		case syntax.OpCharClass:
			steps = append(steps, patternStep{ranges: sub.Rune, min: min, max: max})
		default:
			return nil
		}
	}
	// Greedy is exact when no step that may take a variable number of
	// runes can take a rune the next step could start with.
	for k, st := range steps {
		if st.min == st.max {
			continue
		}
		for _, next := range steps[k+1:] {
			if overlap(st.ranges, next.ranges) {
				return nil
			}
			if next.min > 0 {
				break
			}
		}
	}
	return steps
}

func overlap(a, b []rune) bool {
	for i := 0; i+1 < len(a); i += 2 {
		for j := 0; j+1 < len(b); j += 2 {
			if a[i] <= b[j+1] && b[j] <= a[i+1] {
				return true
			}
		}
	}
	return false
}
