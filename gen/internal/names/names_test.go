package names

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	ds := []Decl{{Name: "A", Where: "f:/2"}, {Name: "B", Where: "f:/1"}, {Name: "A", Where: "f:/1"}}
	cs := Check(ds)
	if len(cs) != 1 || cs[0].A.Where != "f:/1" || cs[0].B.Where != "f:/2" {
		t.Fatalf("Check = %+v", cs)
	}
}

func TestWords(t *testing.T) {
	for in, want := range map[string]string{
		"APIPostPageInput":                     "API Post Page Input",
		"ProjectsWriteInputItemsItemItemOwner": "Projects Write Input Items Item Item Owner",
		"PageIDParentRequest":                  "Page ID Parent Request",
		"X2faVerifyInput":                      "X2fa Verify Input",
		"Value0":                               "Value0",
	} {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// A segment that starts with the words its parent's name ends with leaves
// them out; when nothing is left, or a taken name, Value follows; when
// that is taken too, the segment stays.
func TestUnstutter(t *testing.T) {
	taken := map[string]bool{"ARichTextItemText": true, "BFilter": true, "BFilterValue": true, "ARichText": true}
	isTaken := func(n string) bool { return taken[n] }
	for _, tc := range []struct {
		p, seg string
		named  bool
		want   string
	}{
		{"ProjectsWriteInputItemsItem", "ItemOwner", true, "Owner"},
		{"ARichTextItemText", "Text", true, "Value"},
		{"ARichTextItemText", "Text", false, ""},
		{"AItemsItem", "Item", false, ""},
		{"BFilter", "Filter", true, "Filter"},
		{"AInput", "Output", true, "Output"},
		{"ARichText", "Text", true, "Value"},
		{"AFooBar", "FooBarBaz", true, "Baz"},
		{"AListItem", "Item", true, ""}, // the parent, not declared, is free
		{"AFooBar", "BarBaz", true, "Baz"},
	} {
		if got := unstutter(tc.p, tc.seg, tc.named, isTaken); got != tc.want {
			t.Errorf("unstutter(%q, %q) = %q, want %q", tc.p, tc.seg, got, tc.want)
		}
	}
}
