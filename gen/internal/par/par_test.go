package par

import (
	"slices"
	"testing"
)

func TestDoCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7, 1000} {
		got := make([]int, n)
		Do(n, func(i int) { got[i]++ })
		want := make([]int, n)
		for i := range want {
			want[i] = 1
		}
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: calls per index %v", n, got)
		}
	}
}

func TestDoRaisesPanicInCaller(t *testing.T) {
	defer func() {
		if r := recover(); r != "boom" {
			t.Fatalf("recovered %v, want boom", r)
		}
	}()
	Do(100, func(i int) {
		if i == 37 {
			panic("boom")
		}
	})
	t.Fatal("Do returned after a panic")
}
