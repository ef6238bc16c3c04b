package mcpbridge

import (
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/schema"
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
		decode func(*schema.Schema, jsontext.Value) *callError
	}
	checks := []check{
		{listSessionsIn, func(s *schema.Schema, a jsontext.Value) *callError {
			var v listSessionsInput
			return decodeInput(s, a, &v)
		}},
		{searchIn, func(s *schema.Schema, a jsontext.Value) *callError { var v searchInput; return decodeInput(s, a, &v) }},
		{describeIn, func(s *schema.Schema, a jsontext.Value) *callError {
			var v describeInput
			return decodeInput(s, a, &v)
		}},
		{callIn, func(s *schema.Schema, a jsontext.Value) *callError { var v callInput; return decodeInput(s, a, &v) }},
		{batchIn, func(s *schema.Schema, a jsontext.Value) *callError { var v batchInput; return decodeInput(s, a, &v) }},
		{screenshotIn, func(s *schema.Schema, a jsontext.Value) *callError {
			var v screenshotInput
			return decodeInput(s, a, &v)
		}},
	}
	compiled := make([]*schema.Schema, len(checks))
	for i, c := range checks {
		s, err := schema.Compile(c.schema)
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

// FuzzLoopbackOrigin checks that an Origin the guard accepts names a loopback host.
func FuzzLoopbackOrigin(f *testing.F) {
	for _, s := range []string{"http://localhost:3000", "https://[::1]", "http://127.0.0.1", "null", "http://evil.example",
		"http://localhost@evil.example", "http://127.0.0.1.evil.example", "file:///etc", "http://[::ffff:127.0.0.1]:80", "HTTP://LOCALHOST"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, origin string) {
		if !loopbackOrigin(origin) {
			return
		}
		u, err := url.Parse(origin)
		if err != nil {
			t.Fatalf("accepted an unparsable origin %q", origin)
		}
		host := u.Hostname()
		if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
			t.Fatalf("accepted %q (host %q)", origin, host)
		}
	})
}
