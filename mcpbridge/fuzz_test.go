package mcpbridge

import (
	"net/url"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
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
	} {
		f.Add([]byte(s))
	}
	type check struct {
		schema jsontext.Value
		decode func(*catalog.Schema, jsontext.Value) *callError
	}
	checks := []check{
		{listSessionsIn, func(s *catalog.Schema, a jsontext.Value) *callError {
			var v listSessionsInput
			return decodeInput(s, a, &v)
		}},
		{searchIn, func(s *catalog.Schema, a jsontext.Value) *callError { var v searchInput; return decodeInput(s, a, &v) }},
		{describeIn, func(s *catalog.Schema, a jsontext.Value) *callError {
			var v describeInput
			return decodeInput(s, a, &v)
		}},
		{callIn, func(s *catalog.Schema, a jsontext.Value) *callError { var v callInput; return decodeInput(s, a, &v) }},
		{batchIn, func(s *catalog.Schema, a jsontext.Value) *callError { var v batchInput; return decodeInput(s, a, &v) }},
		{screenshotIn, func(s *catalog.Schema, a jsontext.Value) *callError {
			var v screenshotInput
			return decodeInput(s, a, &v)
		}},
		{snapshotIn, func(s *catalog.Schema, a jsontext.Value) *callError {
			var v snapshotInput
			return decodeInput(s, a, &v)
		}},
		{readResultIn, func(s *catalog.Schema, a jsontext.Value) *callError {
			var v readResultInput
			return decodeInput(s, a, &v)
		}},
	}
	compiled := make([]*catalog.Schema, len(checks))
	for i, c := range checks {
		s, err := catalog.CompileSchema(c.schema)
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = s
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		for i, c := range checks {
			if e := c.decode(compiled[i], args); e != nil && (e.Code == "" || e.Message == "") {
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
