package ir

// Named returns the named types reachable from root in a fixed order: the
// root, then depth-first through fields, elements, extras and variants in
// schema order. seen is shared across calls so a type is listed once.
func Named(root *Type, seen map[*Type]bool) []*Type {
	var out []*Type
	var walk func(t *Type)
	walk = func(t *Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if t.Named {
			out = append(out, t)
		}
		for _, f := range t.Fields {
			walk(f.Type)
		}
		walk(t.Elem)
		walk(t.Extra)
		for _, v := range t.Variants {
			walk(v.Type)
		}
		for _, m := range t.Matchers() {
			walk(m.Type)
		}
	}
	walk(root)
	return out
}

// Matchers returns t's matchers (not, if, then, else, contains,
// prefixItems, rest).
func (t *Type) Matchers() []*Matcher {
	if t.Not == nil && t.If == nil && t.Then == nil && t.Else == nil && t.Contains == nil && t.PropertyNames == nil && len(t.Prefix) == 0 && t.Rest == nil {
		return nil // most types: no garbage for the walks that ask
	}
	var out []*Matcher
	for _, m := range append([]*Matcher{t.Not, t.If, t.Then, t.Else, t.Contains, t.PropertyNames}, append(t.Prefix, t.Rest)...) {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}
