package ir

// markIndirect makes every by-value struct field that closes a cycle of
// structs a pointer, so the Go type is finite. All such fields in a
// strongly connected component are marked, which does not depend on the
// order types are visited in.
func markIndirect(types []*Type) {
	index := map[*Type]int{}
	low := map[*Type]int{}
	onStack := map[*Type]bool{}
	comp := map[*Type]int{}
	var stack []*Type
	next, ncomp := 0, 0
	edges := func(t *Type) []*Type {
		var out []*Type
		for _, f := range t.Fields {
			if (f.Required || f.Nullable) && f.Type.Kind == Struct && f.Fixed == "" {
				out = append(out, f.Type)
			}
		}
		return out
	}
	var visit func(t *Type)
	visit = func(t *Type) {
		index[t], low[t] = next, next
		next++
		stack = append(stack, t)
		onStack[t] = true
		for _, u := range edges(t) {
			if _, seen := index[u]; !seen {
				visit(u)
				low[t] = min(low[t], low[u])
			} else if onStack[u] {
				low[t] = min(low[t], index[u])
			}
		}
		if low[t] == index[t] {
			for {
				u := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[u] = false
				comp[u] = ncomp
				if u == t {
					break
				}
			}
			ncomp++
		}
	}
	for _, t := range types {
		if t.Kind == Struct {
			if _, seen := index[t]; !seen {
				visit(t)
			}
		}
	}
	for _, t := range types {
		for _, f := range t.Fields {
			if (f.Required || f.Nullable) && f.Type.Kind == Struct && f.Fixed == "" && comp[f.Type] == comp[t] {
				f.Indirect = true
			}
		}
	}
}

// Finish runs the passes that need the whole set of named types.
func Finish(types []*Type) { markIndirect(types) }
