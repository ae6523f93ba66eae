package main

import (
	"bytes"
	"io"
	"testing"
)

// TestTermWriterSplits: a UTF-8 sequence or a \r\n cut between two writes
// passes whole; what is left at the end is shown.
func TestTermWriterSplits(t *testing.T) {
	var b bytes.Buffer
	w := &termWriter{w: &b}
	in := "é\u202e\r\nx\r"
	for i := range len(in) {
		if _, err := w.Write([]byte(in[i : i+1])); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = io.WriteString(w, "\xe2\x80")
	_ = w.Flush()
	if want := "é\\u202e\nx\\u000d\ufffd\ufffd"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
