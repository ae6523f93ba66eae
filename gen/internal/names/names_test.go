package names

import "testing"

func TestCheck(t *testing.T) {
	ds := []Decl{{Name: "A", Where: "f:/2"}, {Name: "B", Where: "f:/1"}, {Name: "A", Where: "f:/1"}}
	cs := Check(ds)
	if len(cs) != 1 || cs[0].A.Where != "f:/1" || cs[0].B.Where != "f:/2" {
		t.Fatalf("Check = %+v", cs)
	}
}
