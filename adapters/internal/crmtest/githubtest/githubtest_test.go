package githubtest

import "testing"

// The same counts as example/crmapi's estimate.
func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "hello world": 4, `{"a":12345}`: 8, "a\n  b": 3} {
		if got := EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}
