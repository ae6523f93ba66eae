package render

import (
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// The golden cases: each is testdata/<name>.json, an object with the
// data and (optionally) its schema; the rendering is <name>.lean.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Data   json.RawMessage `json:"data"`
				Schema json.RawMessage `json:"schema"`
			}
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			got, err := Lean(c.Data, c.Schema)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(f, ".json") + ".lean"
			if *update {
				if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got+"\n" != string(want) {
				t.Errorf("rendering of %s:\n%s\nwant:\n%s", name, got, want)
			}
			roundTrip(t, c.Data, c.Schema)
			if again, _ := Lean(c.Data, c.Schema); again != got {
				t.Error("rendering is not deterministic")
			}
		})
	}
}

// roundTrip checks that the rendering of data reads back as data: same
// values, same member order, same number literals.
func roundTrip(t *testing.T, data, schema []byte) {
	t.Helper()
	want, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Lean(data, schema)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readBack(text)
	if err != nil {
		t.Fatalf("rendering of %s does not parse: %v\n%s", data, err, text)
	}
	if got.JSON() != want.JSON() {
		t.Fatalf("value lost:\n data %s\n read %s\n text:\n%s", want.JSON(), got.JSON(), text)
	}
}

// The strings most likely to be misread: ones that look like other
// kinds, hold the syntax's own characters, or carry spaces and controls.
var tricky = []string{
	"", " ", "a", "true", "false", "null", "12", "-3.5e2", "0", "-", "- x", "-x", "a: b", "a:", ":", "#", "a # b",
	"x|y", "a, b", "[", "]", "[1, 2]", "{}", "[]", "{", `"`, `\`, "tab\there", "line\nbreak", " lead", "trail ",
	"déjà vu", "💡", "key[1]{a}:", "[2]{a|b}:", "  # c", "a  # b", "ab--cd", "$ref", "\u0000", "\u007f", "é:",
	"\u22121", "1 000", "\uff11", "\u0663", "1'000", "\uff54rue", "\u221e", "1\u0301",
}

func TestTrickyStrings(t *testing.T) {
	for _, s := range tricky {
		q, _ := json.Marshal(s)
		for _, doc := range []string{
			string(q),
			`[` + string(q) + `]`,
			`[` + string(q) + `,` + string(q) + `]`,
			`{"k":` + string(q) + `}`,
			`{` + string(q) + `:1}`,
			`{` + string(q) + `:{` + string(q) + `:[1]}}`,
			`[{"a":` + string(q) + `,"b":1},{"a":2}]`,
			`[{` + string(q) + `:1},{` + string(q) + `:2}]`,
			`[[` + string(q) + `],{"x":[{"y":` + string(q) + `},{"y":null}]}]`,
			`{"list":[{"a":` + string(q) + `},[{"b":1},{"b":` + string(q) + `}],[[` + string(q) + `]]]}`,
		} {
			roundTrip(t, []byte(doc), nil)
		}
	}
}

// Random documents built from the tricky strings, numbers and nesting.
func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		v := randomValue(r, 0)
		b, _ := json.Marshal(v)
		roundTrip(t, b, nil)
	}
}

func randomValue(r *rand.Rand, depth int) any {
	n := 6
	if depth > 3 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number([]string{"0", "-1", "1.50", "2e10", "123456789012345678901234567890"}[r.IntN(5)])
	case 3:
		return tricky[r.IntN(len(tricky))]
	case 4:
		list := make([]any, r.IntN(4))
		flat := r.IntN(2) == 0
		for i := range list {
			if flat {
				list[i] = map[string]any{"id": r.IntN(9), "name": tricky[r.IntN(len(tricky))], "x": randomValue(r, 9)}
			} else {
				list[i] = randomValue(r, depth+1)
			}
		}
		return list
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[tricky[r.IntN(len(tricky))]] = randomValue(r, depth+1)
		}
		return m
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{`{"a":[{"b":1},{"b":"x|y"}]}`, `[1,"a, b",null]`, `{"k":{"j":[[],{}]}}`, `"a: b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		if _, err := Decode(data); err != nil {
			return
		}
		roundTrip(t, data, nil)
	})
}

func TestDescriptionsOnceAndShort(t *testing.T) {
	schema := `{"type":"object","properties":{
		"deals":{"type":"array","description":"Matching deals.","items":{"$ref":"#/$defs/deal"}},
		"note":{"type":"string","description":"` + strings.Repeat("long ", 20) + `"}},
		"$defs":{"deal":{"type":"object","properties":{"id":{"type":"string","description":"Deal id."}}}}}`
	got, err := Lean([]byte(`{"deals":[{"id":"D-1"},{"id":"D-2"}],"note":"n"}`), []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	want := "deals[2]{id}:  # Matching deals.; id: Deal id.\n  D-1\n  D-2\nnote: n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestInvalidJSON(t *testing.T) {
	for _, s := range []string{``, `{`, `{"a":1} 2`, `nope`} {
		if _, err := Lean([]byte(s), nil); err == nil {
			t.Errorf("Lean(%q) did not fail", s)
		}
	}
}
