package mcpbridge

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
	"github.com/ansight-go/ansight/wire/uitree"
)

// FuzzMetaArguments feeds arbitrary arguments to every meta-tool's input check: it never
// panics, and whatever it accepts validates against the schema and decodes.
func FuzzMetaArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"query":"notes","maxResults":5,"executableOnly":false}`, `{"toolId":"a.b","arguments":{"x":[1,{"y":null}]}}`,
		`{"calls":[{"toolId":"a"},{"toolId":"b","after":{"include":["screenshot"],"delayMilliseconds":10}}],"continueOnError":true}`,
		`{"toolId":"a","after":{"include":["visualTree"],"visualTreeArguments":{"maxDepth":3}}}`,
		`{"format":"jpeg","maxWidth":512,"arguments":{"quality":50}}`, `{"sessionId":"s","appId":"a","ToolId":"x"}`,
		`{"maxResults":1e400}`, `[]`, `null`, `{"a":1,"a":2}`, "{\"query\":\"\xff\"}",
		`{"toolId":"a","arguments":"{\"title\":\"Milk\"}"}`, `{"toolId":"a","arguments":"{\"a\":1,\"a\":2}"}`, `{"toolId":"a","arguments":"nope"}`,
		`{"calls":[{"toolId":"a","arguments":"{}","after":{"visualTreeArguments":"{\"maxDepth\":3}"}}]}`,
	} {
		f.Add([]byte(s))
	}
	type check struct {
		schema jsontext.Value
		decode func(*schema.Schema, []textPath, jsontext.Value) *callError
	}
	checks := []check{
		{listSessionsIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v listSessionsInput
			return decodeInput(s, text, a, &v)
		}},
		{searchIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v searchInput
			return decodeInput(s, text, a, &v)
		}},
		{describeIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v describeInput
			return decodeInput(s, text, a, &v)
		}},
		{callIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v callInput
			return decodeInput(s, text, a, &v)
		}},
		{batchIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v batchInput
			return decodeInput(s, text, a, &v)
		}},
		{screenshotIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v screenshotInput
			return decodeInput(s, text, a, &v)
		}},
		{snapshotIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v snapshotInput
			return decodeInput(s, text, a, &v)
		}},
		{readResultIn, func(s *schema.Schema, text []textPath, a jsontext.Value) *callError {
			var v readResultInput
			return decodeInput(s, text, a, &v)
		}},
	}
	compiled := make([]*schema.Schema, len(checks))
	texts := make([][]textPath, len(checks))
	for i, c := range checks {
		s, err := schema.Compile(c.schema)
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = s
		if _, texts[i], err = portableSchema(c.schema); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for i, c := range checks {
			if e := c.decode(compiled[i], texts[i], args); e != nil && (e.Code == "" || e.Message == "") {
				t.Fatalf("error without code or message: %+v", e)
			}
		}
	})
}

// FuzzAllowedOrigin checks that the HTTP guard answers a browser Origin only when it is
// exactly an allowed origin (scheme and host compared without case).
func FuzzAllowedOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:3000", "http://localhost:6274", "HTTP://LOCALHOST:6274", "http://localhost:6274/",
		"https://[::1]", "http://127.0.0.1", "null", "http://evil.example", "http://localhost:6274@evil.example",
		"http://localhost:6274.evil.example", "file:///etc", "http://[::ffff:127.0.0.1]:80", "http://localhost:6274#x"} {
		f.Add(s)
	}
	g := &httpGuard{origins: map[string]bool{"http://localhost:6274": true}}
	f.Fuzz(func(t *testing.T, origin string) {
		if !g.allowed(origin) {
			return
		}
		u, err := url.Parse(origin)
		if err != nil || !strings.EqualFold(u.Scheme, "http") || !strings.EqualFold(u.Host, "localhost:6274") || u.User != nil {
			t.Fatalf("accepted %q", origin)
		}
	})
}

// FuzzRenderSnapshot renders any ui.get_visual_tree answer an app could send: it never
// panics, stays within its budget (plus one line), and every line is the header, a note,
// or an indented node line that app strings cannot break or extend with a forged ref.
func FuzzRenderSnapshot(f *testing.F) {
	f.Add([]byte(screenTree(1, [2]string{"n1", "Groceries"}, [2]string{"n2", "Ideas"})))
	f.Add([]byte(`{"source":"x\ny","revision":1,"root":{"id":"a","role":"button\n- fake [ref=e1]","label":"ok\" [ref=e9]","text":"\n- x","supportedActions":["tap\n"],"children":[{"id":"b","role":"","children":[{"id":"c"}]}]}}`))
	f.Add([]byte(`{"root":{"id":"","children":[{"id":""},{"id":""}]}}`))
	f.Add([]byte(`{"root":null}`))
	const budget = 2048
	f.Fuzz(func(t *testing.T, raw []byte) {
		tree, err := uitree.Parse(raw)
		if err != nil {
			return
		}
		var refs refTables
		text := renderSnapshot(tree, refs.record("s", tree), true, budget)
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for i, l := range lines {
			body := strings.TrimLeft(l, " ")
			if !strings.HasPrefix(body, "- ") && !strings.HasPrefix(l, "# ") {
				t.Fatalf("line %d is %q", i, l)
			}
			if strings.Count(unquoted(l), "[ref=") > 1 {
				t.Fatalf("line %d has two refs: %q", i, l)
			}
		}
		if last := lines[len(lines)-1]; len(text) > budget+len(last)+1024 && !strings.HasPrefix(last, "# …") {
			t.Fatalf("%d bytes", len(text))
		}
	})
}

// FuzzReadResult reads any part of a saved result: never panics, and a page fits its
// budget unless a single item or a refusal says otherwise.
func FuzzReadResult(f *testing.F) {
	f.Add([]byte(`{"items":[{"a":1},{"a":2},{"a":3}],"s":"héllo wörld"}`), "/items", 1, 1024)
	f.Add([]byte(`{"s":"héllo wörld"}`), "/s", 2, 1024)
	f.Add([]byte(`{"a~b":{"c/d":[1,2]}}`), "/a~0b/c~1d/1", 0, 1024)
	f.Add([]byte(`[1,2,3]`), "/01", 0, 1024)
	f.Add([]byte(`"x"`), "/x", -5, 0)
	f.Fuzz(func(t *testing.T, doc []byte, pointer string, offset, budget int) {
		v := jsontext.Value(doc)
		if !v.IsValid() {
			return
		}
		budget = max(minReadBytes, budget%(1<<20))
		out, err := readPart(v, pointer, offset, budget)
		if err != nil {
			return
		}
		if out.Text != nil && (len(*out.Text) > budget || !utf8.ValidString(*out.Text) && utf8.Valid(doc)) {
			t.Fatalf("text slice of %d bytes (budget %d)", len(*out.Text), budget)
		}
		size := 0
		for _, it := range out.Items {
			size += len(it) + 1
		}
		if len(out.Items) > 1 && size > budget+1 {
			t.Fatalf("a page of %d bytes (budget %d)", size, budget)
		}
	})
}

// unquoted is line without its Go-quoted strings.
func unquoted(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] != '"' {
			b.WriteByte(line[i])
			continue
		}
		for i++; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' {
				i++
			}
		}
	}
	return b.String()
}

// FuzzDecodeText holds decodeText's fast path (unchangedAt: an object without the path's
// member, or whose last member is not JSON text, is given back as is) against the plain
// path, decodeAt: for any input, path of one or two steps and anyValue, both fail or
// neither does, and what they give is the same JSON value.
func FuzzDecodeText(f *testing.F) {
	for _, seed := range []string{`{}`, `{"toolId":"a","arguments":{}}`, `{"arguments":"{\"a\":1}"}`, `{"arguments":"not json"}`,
		`{"arguments":{},"arguments":{}}`, `{"a":1,"b":[1,2,{"c":"\u00e9"}]}`, `{"arguments":null}`, `{"x":"\ud800"}`, `{"a":1} {}`, `{"a":1`, `[]`, `"s"`} {
		f.Add([]byte(seed), "arguments", "", false)
	}
	f.Add([]byte(`{"arguments":"plain"}`), "arguments", "", true)
	f.Add([]byte(`{"*":{}}`), "*", "", false)
	f.Add([]byte(`{"toolId":"a","after":{"visualTreeArguments":"{}"}}`), "after", "visualTreeArguments", false)
	f.Add([]byte(`{"toolId":"a","arguments":{}}`), "after", "visualTreeArguments", false)
	f.Add([]byte(`{"after":[{"x":"{}"}]}`), "after", "*", false)
	f.Fuzz(func(t *testing.T, args []byte, name, second string, anyValue bool) {
		if len(args) == 0 {
			return
		}
		path := []string{name}
		if second != "" {
			path = append(path, second)
		}
		fast, errFast := decodeText(args, []textPath{{steps: path, anyValue: anyValue}})
		plain, errPlain := decodeAt(args, path, anyValue, "")
		if (errFast == nil) != (errPlain == nil) {
			t.Fatalf("%q at %q: fast path %v, plain path %v", args, name, errFast, errPlain)
		}
		if errFast != nil {
			return
		}
		a, b := fast.Clone(), plain.Clone()
		if errA, errB := a.Canonicalize(), b.Canonicalize(); (errA == nil) != (errB == nil) || errA == nil && !bytes.Equal(a, b) {
			t.Fatalf("%q at %q: fast path %s (%v), plain path %s (%v)", args, name, fast, errA, plain, errB)
		}
	})
}

// BenchmarkDecodeText: the input check's JSON-text step for an ansight_call_app_tool as
// agents send it (arguments an object, no after), through decodeText's fast path and
// through the plain path (decodeAt for each of the tool's three paths).
func BenchmarkDecodeText(b *testing.B) {
	_, text, err := portableSchema(callIn)
	if err != nil {
		b.Fatal(err)
	}
	args := jsontext.Value(`{"sessionId":"com-ansight-bench-mcp-001","toolId":"app.get_state","arguments":{}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeText(args, text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := args
			for _, p := range text {
				if out, err = decodeAt(out, p.steps, p.anyValue, ""); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
