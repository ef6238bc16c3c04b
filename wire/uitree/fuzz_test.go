package uitree

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds any payload to the reader. It never panics; it refuses with an *Error;
// what it reads, Append writes as a payload that passes the gate and reads back node for
// node the same; Validate accepts only what Parse reads as compact v2.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"format":"x.compact.v2","types":["A"],"root":{"id":"0","typeId":0}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := Parse(data)
		verr := Validate(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse error %T: %v", err, err)
			}
			if verr == nil {
				t.Fatalf("the gate accepts what Parse refuses: %v", err)
			}
			return
		}
		if verr == nil && !tree.Compact() {
			t.Fatalf("the gate accepts a tree whose format is %q", tree.Format)
		}
		if verr != nil {
			var ge *GateError
			if !errors.As(verr, &ge) {
				t.Fatalf("Validate of a readable payload: %T %v", verr, verr)
			}
		}
		out := Append(nil, tree)
		if err := Validate(out); err != nil {
			t.Fatalf("Append's output fails the gate: %v\n%s", err, out)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Append's output does not parse: %v\n%s", err, out)
		}
		if len(back.All()) != len(tree.All()) {
			t.Fatalf("%d nodes after the round trip, want %d", len(back.All()), len(tree.All()))
		}
		for i, n := range tree.All() {
			m := back.All()[i]
			if n.Type == "" || isBlank(n.Type) {
				n.Type = "View" // a type-less node is registered as View
			}
			if got, want := reading(m), reading(n); got != want {
				t.Fatalf("node %d reads\n  %s\nwant\n  %s", i, got, want)
			}
		}
	})
}

// FuzzResolve feeds any selector to the selector engine over the official fixtures: it
// never panics, Resolve picks Find's match at the index, and a failure's candidates are
// bounded and ordered.
func FuzzResolve(f *testing.F) {
	f.Add("save", "button", "", "list", false, false, 0)
	f.Add("Sve", "", "com.example.notes:id/search", "", true, true, 3)
	trees := []*Tree{mustParse(f, fixture(f, "android-views.json")), mustParse(f, fixture(f, "maui-flags.json"))}
	f.Fuzz(func(t *testing.T, text, role, automation, ancestor string, contains, caseSensitive bool, index int) {
		for _, tree := range trees {
			s := Selector{Text: text, Role: role, AutomationID: automation, Ancestor: ancestor, Contains: contains,
				CaseSensitive: caseSensitive, Index: &index}
			n, err := tree.Resolve(s)
			matches := tree.Find(s)
			if err != nil {
				var nf *NotFoundError
				if !errors.As(err, &nf) || nf.Matches != len(matches) || len(nf.Nearest) > 5 {
					t.Fatalf("Resolve: %v", err)
				}
				if !strings.Contains(err.Error(), "match") {
					t.Fatalf("message %q", err)
				}
				continue
			}
			if i := max(0, index); i >= len(matches) || matches[i] != n {
				t.Fatalf("Resolve picked %s, not match %d of %d", n.ID, index, len(matches))
			}
		}
	})
}
