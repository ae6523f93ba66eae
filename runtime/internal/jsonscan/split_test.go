package jsonscan

import (
	"encoding/json"
	"slices"
	"testing"
)

// The Valid variants must split exactly as the validating ones on any
// document those accept.
func FuzzSplitValid(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, ` { "a" : 1 , "b":[1, {"c":"}"}], "d\"e":"x\\"} `, `{"é":"\u00e9","a":"a","a":2}`,
		`[1,-2.5e3,true,false,null,"s",{"k":[]},[[]]]`, `{"a":{"b":{"c":[1,2,{"d":"\\\""}]}}}`, "{\"\\u0041\":\"x\"}",
		"{\"a\xff\":1}", `[ "a" , "b" ]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want, got []Member
		if SplitObject(data, func(m Member) { want = append(want, m) }) {
			if !SplitValidObject(data, func(m Member) { got = append(got, m) }) {
				t.Fatalf("SplitValidObject refused %q", data)
			}
			if !slices.EqualFunc(want, got, func(a, b Member) bool {
				return string(a.Name) == string(b.Name) && string(a.Value) == string(b.Value)
			}) {
				t.Fatalf("%q: members %q, want %q", data, got, want)
			}
		}
		if items, ok := SplitArray(data, nil); ok {
			got, ok := SplitValidArray(data, nil)
			if !ok || !slices.EqualFunc(items, got, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
				t.Fatalf("%q: elements %q, want %q", data, got, items)
			}
		}
	})
}
