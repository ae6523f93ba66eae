package oauth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// The token request budget: MaxTokenRequests at once, then one earned
// back per TokenRequestInterval, never more than MaxTokenRequests saved
// up; the refusal says when the next may be made.
func TestTokenRequestBudget(t *testing.T) {
	c, err := New("https://mcp.example/mcp", Config{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_000_000, 0)
	c.now = func() time.Time { return now }
	for i := range DefaultMaxTokenRequests {
		if err := c.spend(); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	err = c.spend()
	if !errors.Is(err, ErrTokenRequests) || !strings.Contains(err.Error(), "in 1m0s at the earliest") {
		t.Fatalf("past the budget: %v", err)
	}
	now = now.Add(TokenRequestInterval / 2)
	if err := c.spend(); err == nil || !strings.Contains(err.Error(), "in 30s") {
		t.Errorf("half an interval later: %v", err)
	}
	now = now.Add(TokenRequestInterval / 2)
	if err := c.spend(); err != nil {
		t.Errorf("an interval later: %v", err)
	}
	if err := c.spend(); err == nil {
		t.Error("two requests earned in one interval")
	}
	// A long quiet spell saves up MaxTokenRequests, no more.
	now = now.Add(100 * TokenRequestInterval)
	for i := range DefaultMaxTokenRequests {
		if err := c.spend(); err != nil {
			t.Fatalf("after a quiet spell, request %d: %v", i, err)
		}
	}
	if err := c.spend(); err == nil {
		t.Error("more than MaxTokenRequests saved up")
	}

	none, _ := New("https://mcp.example/mcp", Config{MaxTokenRequests: -1})
	if err := none.spend(); !errors.Is(err, ErrTokenRequests) {
		t.Errorf("negative MaxTokenRequests: %v", err)
	}
}
