package flow

import (
	"fmt"
	"github.com/go-json-experiment/json/jsontext"
	"strconv"
	"strings"
)

// A vtext (a template) is a string with variable references: "${note.id}", "Note ${var.title}".
// "$${" is a literal "${".
type vtext struct {
	parts []part
}

// part is a literal or a reference.
type part struct {
	lit string
	ref *ref
}

// ref is one ${…}: a saved result with a dot path into it, a --var value or an environment
// variable.
type ref struct {
	// src is the text between the braces, as written.
	src   string
	scope string // "var", "env", or the name a step saved its result under
	path  []string
	pos   Pos
}

func (r *ref) String() string { return "${" + r.src + "}" }

// whole reports whether t is exactly one reference: its value keeps its JSON type.
func (t *vtext) whole() *ref {
	if len(t.parts) == 1 {
		return t.parts[0].ref
	}
	return nil
}

// refs returns t's references.
func (t *vtext) refs() []*ref {
	var out []*ref
	for _, p := range t.parts {
		if p.ref != nil {
			out = append(out, p.ref)
		}
	}
	return out
}

// parseTemplate reads s; it returns nil when s references nothing and escapes nothing.
func parseTemplate(s string, pos Pos) (*vtext, error) {
	if !strings.Contains(s, "${") {
		return nil, nil
	}
	t := &vtext{}
	var lit strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			lit.WriteString("${")
			i += 3
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, errorf(pos, "%q: ${ without a closing } (write $${ for a literal ${)", shorten(s, 60))
			}
			r, err := parseRef(s[i+2:i+end], pos)
			if err != nil {
				return nil, err
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, part{lit: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, part{ref: r})
			i += end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, part{lit: lit.String()})
	}
	return t, nil
}

func parseRef(src string, pos Pos) (*ref, error) {
	segs := strings.Split(src, ".")
	for _, s := range segs {
		if !isName(s) {
			return nil, errorf(pos, "${%s}: a reference is a saved name, var.NAME or env.NAME, then a dot path of names and indexes (like ${note.items.0.id})", src)
		}
	}
	r := &ref{src: src, scope: segs[0], path: segs[1:], pos: pos}
	if (r.scope == "var" || r.scope == "env") && len(r.path) != 1 {
		return nil, errorf(pos, "${%s}: write ${%s.NAME}", src, r.scope)
	}
	return r, nil
}

// isName reports whether s is a name or an index: letters, digits, '_' and '-'.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// scope is what references read while a flow runs.
type scope struct {
	saved map[string]*value
	vars  map[string]string
	env   func(string) (string, bool)
}

// lookup resolves one reference.
func (sc *scope) lookup(r *ref) (*value, error) {
	switch r.scope {
	case "var":
		if s, ok := sc.vars[r.path[0]]; ok {
			return &value{kind: kindString, text: s}, nil
		}
		return nil, errorf(r.pos, "%s is not set: give it with --var %s=VALUE or under vars:", r, r.path[0])
	case "env":
		if s, ok := sc.env(r.path[0]); ok {
			return &value{kind: kindString, text: s}, nil
		}
		return nil, errorf(r.pos, "%s: the environment variable %s is not set", r, r.path[0])
	}
	v, ok := sc.saved[r.scope]
	if !ok {
		return nil, errorf(r.pos, "%s: nothing was saved as %q (the step that saves it did not run)", r, r.scope)
	}
	for i, seg := range r.path {
		at := r.scope + "." + strings.Join(r.path[:i], ".")
		at = strings.TrimSuffix(at, ".")
		switch v.kind {
		case kindObject:
			next := v.get(seg)
			if next == nil {
				return nil, errorf(r.pos, "%s: %s has no member %q", r, at, seg)
			}
			v = next
		case kindArray:
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(v.elems) {
				return nil, errorf(r.pos, "%s: %s is an array of %d, with no element %s", r, at, len(v.elems), seg)
			}
			v = v.elems[n]
		default:
			return nil, errorf(r.pos, "%s: %s is %s, not an object or array", r, at, v.kind)
		}
	}
	return v, nil
}

// expand returns t's value: a whole reference's value as it is, anything else as text.
func (sc *scope) expand(t *vtext) (*value, error) {
	if r := t.whole(); r != nil {
		return sc.lookup(r)
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.ref == nil {
			b.WriteString(p.lit)
			continue
		}
		v, err := sc.lookup(p.ref)
		if err != nil {
			return nil, err
		}
		b.WriteString(text(v))
	}
	return &value{kind: kindString, text: b.String()}, nil
}

// text is v interpolated into a string: a string as it is, anything else as JSON.
func text(v *value) string {
	if v.kind == kindString {
		return v.text
	}
	return string(v.json())
}

// expandValue returns v with every template expanded (v itself when it has none).
func (sc *scope) expandValue(v *value) (*value, error) {
	if v == nil {
		return nil, nil
	}
	switch v.kind {
	case kindString:
		if v.tmpl == nil {
			return v, nil
		}
		out, err := sc.expand(v.tmpl)
		if err != nil {
			return nil, err
		}
		return out, nil
	case kindArray, kindObject:
		var out *value
		for i, e := range v.elems {
			x, err := sc.expandValue(e)
			if err != nil {
				return nil, err
			}
			if x != e && out == nil {
				out = &value{kind: v.kind, names: v.names, pos: v.pos, elems: append([]*value(nil), v.elems...)}
			}
			if out != nil {
				out.elems[i] = x
			}
		}
		if out != nil {
			return out, nil
		}
	}
	return v, nil
}

// expandString expands a string field (a selector's text, a value to type).
func (sc *scope) expandString(s *value) (string, error) {
	if s == nil {
		return "", nil
	}
	v, err := sc.expandValue(s)
	if err != nil {
		return "", err
	}
	return text(v), nil
}

// markTemplates parses the templates of every string in v (not of member names).
func markTemplates(v *value) error {
	switch v.kind {
	case kindString:
		t, err := parseTemplate(v.text, v.pos)
		if err != nil {
			return err
		}
		v.tmpl = t
	case kindArray, kindObject:
		for _, e := range v.elems {
			if err := markTemplates(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// collectRefs appends the references of every template in v.
func collectRefs(dst []*ref, v *value) []*ref {
	if v == nil {
		return dst
	}
	if v.tmpl != nil {
		dst = append(dst, v.tmpl.refs()...)
	}
	for _, e := range v.elems {
		dst = collectRefs(dst, e)
	}
	return dst
}

// ParseVars reads --var values: each "NAME=VALUE".
func ParseVars(list []string) (map[string]string, error) {
	vars := make(map[string]string, len(list))
	for _, kv := range list {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !isName(name) {
			return nil, fmt.Errorf("--var %q: write NAME=VALUE (a name of letters, digits, '_' and '-')", kv)
		}
		vars[name] = val
	}
	return vars, nil
}

// constJSON returns v encoded when no string in it is a template (nil otherwise): a call's
// arguments that never change are encoded once, not at every run of the step.
func constJSON(v *value) jsontext.Value {
	if v == nil || hasTemplates(v) {
		return nil
	}
	return v.json()
}

func hasTemplates(v *value) bool {
	if v.tmpl != nil {
		return true
	}
	for _, e := range v.elems {
		if hasTemplates(e) {
			return true
		}
	}
	return false
}
