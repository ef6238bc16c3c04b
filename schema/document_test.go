package schema

import (
	"strings"
	"testing"
)

func TestDocument(t *testing.T) {
	t.Parallel()
	doc, err := Parse([]byte(`{"type":"object","properties":{"z":{"type":"string"},"a":{"$ref":"#/$defs/n"},"b":{"$ref":"#node"}},` +
		`"additionalProperties":false,"$defs":{"n":{"$anchor":"node","enum":[1,"x",null]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.CheckBounds(); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	if root.Kind() != '{' || root.Get("additionalProperties").Kind() != 0 {
		t.Errorf("the root is not in published form: %s", root.JSON())
	}
	var names []string
	for name := range root.Get("properties").Members() {
		names = append(names, name)
	}
	if got := strings.Join(names, ","); got != "z,a,b" {
		t.Errorf("members in order %s, want z,a,b", got)
	}
	props := root.Get("properties")
	byPointer, err := doc.Resolve(props.Get("a"), "#/$defs/n")
	if err != nil {
		t.Fatal(err)
	}
	byAnchor, err := doc.Resolve(props.Get("b"), "#node")
	if err != nil || byAnchor != byPointer {
		t.Errorf("the anchor resolves to %s (%v), the pointer to %s", byAnchor.JSON(), err, byPointer.JSON())
	}
	if e := byPointer.Get("enum"); e.Len() != 3 || string(e.JSON()) != `[1,"x",null]` {
		t.Errorf("enum = %s", e.JSON())
	}
	var texts []string
	for el := range byPointer.Get("enum").Elems() {
		texts = append(texts, string(el.Kind())+el.Text())
	}
	if got := strings.Join(texts, ","); got != `0,"x,n` {
		t.Errorf("elements %s", got)
	}
	if got := props.Get("z").Get("type").Text(); got != "string" {
		t.Errorf("Text = %q", got)
	}
	for _, ref := range []string{"https://example.com/s.json", "#/$defs/none", "#nothing"} {
		if _, err := doc.Resolve(root, ref); err == nil {
			t.Errorf("Resolve(%s) resolved", ref)
		}
	}
	var zero Node
	if zero.Kind() != 0 || zero.Get("x").Kind() != 0 || zero.Len() != 0 || zero.JSON() != nil || zero.Text() != "" {
		t.Error("the zero Node is not empty")
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc string
		ok        bool
	}{
		{"object", `{}`, true},
		{"true", `true`, true},
		{"false", ` false `, true},
		{"string", `"x"`, false},
		{"array", `[1,2]`, false},
		{"duplicate names", `{"a":1,"a":2}`, false},
		{"truncated", `{`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := Parse([]byte(tc.doc)); (err == nil) != tc.ok {
				t.Errorf("Parse(%s) = %v, want ok %v", tc.doc, err, tc.ok)
			}
		})
	}
	// Beyond the bounds: parsed, and refused by CheckBounds (and by Resolve) with the
	// package-level CheckBounds's error.
	deep := []byte(strings.Repeat(`{"items":`, MaxDepth+1) + `{}` + strings.Repeat(`}`, MaxDepth+1))
	doc, err := Parse(deep)
	if err != nil {
		t.Fatal(err)
	}
	want := CheckBounds(deep)
	if err := doc.CheckBounds(); err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("CheckBounds = %v, want %v", err, want)
	}
	if _, err := doc.Resolve(doc.Root(), "#"); err == nil {
		t.Error("Resolve walked a document beyond the bounds")
	}
}
