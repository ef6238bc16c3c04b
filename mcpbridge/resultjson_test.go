package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkEncoding is what the SDK's connection writes for a result: encoding/json's Encoder
// without HTML escaping, its newline trimmed (jsonrpc2's jsonMarshal).
func sdkEncoding(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// sameEncoding holds fastResult's encoding of x against the SDK's: the same bytes, or an
// error from both.
func sameEncoding(t *testing.T, x *mcp.CallToolResult) {
	t.Helper()
	want, wantErr := sdkEncoding(x)
	got, gotErr := sdkEncoding(&fastResult{x})
	if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%#v:\n got %s (%v)\nwant %s (%v)", x, got, gotErr, want, wantErr)
	}
}

// fuzzResult makes a result of the fuzzer's values: up to three contents (text, or an
// image or annotations, which the SDK encodes), metadata, a structured content of any
// bytes (valid JSON or not, compact or not, any characters).
func fuzzResult(text, metaKey, structured string, contents uint8, isError, serverMeta, rawStructured bool) *mcp.CallToolResult {
	x := &mcp.CallToolResult{IsError: isError}
	if serverMeta {
		x.Meta = mcp.Meta{"io.modelcontextprotocol/serverInfo": &mcp.Implementation{Name: metaKey, Version: text}}
	}
	if contents&0x80 == 0 {
		x.Content = []mcp.Content{}
	}
	for i := range int(contents & 3) {
		c := &mcp.TextContent{Text: text}
		switch (contents >> (2 + i)) & 3 {
		case 1:
			c.Meta = untrustedMeta()
		case 2:
			c.Meta = mcp.Meta{metaKey: structured, "n": len(text)}
		case 3:
			if i == 2 {
				x.Content = append(x.Content, &mcp.ImageContent{Data: []byte(text), MIMEType: metaKey})
				continue
			}
			c.Annotations = &mcp.Annotations{Priority: 0.5}
		}
		x.Content = append(x.Content, c)
	}
	switch {
	case rawStructured:
		x.StructuredContent = json.RawMessage(structured)
	case structured != "" || contents&0x40 != 0:
		x.StructuredContent = jsontext.Value(structured)
	}
	return x
}

// FuzzFastResult holds the one-pass encoding of results against the SDK's, byte for byte.
// The result type the SDK sets after the handlers is left to TestFastResultSession.
func FuzzFastResult(f *testing.F) {
	f.Add("a \"b\" <c> & \u2028 é \xff\x01\n", "ansight/untrusted", `{"x":[1,"<"],"y":{}}`, uint8(0x07), false, true, false)
	f.Add(untrustedOpen+"\n{\"a\":1}\n"+untrustedClose, "k", `{"sessionId":"s","success":true,"result":{"t":"\u2028"}}`, uint8(0x05), true, false, false)
	f.Add("", "", "", uint8(0x80), false, false, false)
	f.Add("x", "m", "{\n \"a\" : 1 }", uint8(0x2b), false, true, true)
	f.Add("x", "m", `{"a":1}}`, uint8(0x01), false, false, false)
	f.Add("x", "m", `{"a":1},"b":{}`, uint8(0x01), false, false, false)
	f.Add("x", "m", `{"a":"}"},"b":[]`, uint8(0x01), true, false, false)
	f.Add("x", "m", `[1,2,"\u0026 &"]`, uint8(0x3f), true, true, false)
	f.Add("x", "m", "\"s\"", uint8(0x41), false, false, false)
	f.Add("x", "m", "{\"a\":\"\xe2\x80\xa9\"}", uint8(0x01), false, false, false)
	f.Fuzz(func(t *testing.T, text, metaKey, structured string, contents uint8, isError, serverMeta, rawStructured bool) {
		sameEncoding(t, fuzzResult(text, metaKey, structured, contents, isError, serverMeta, rawStructured))
	})
}

// TestFastResultBridgeAnswers: the answers the bridge makes go the one-pass way (not the
// SDK's, by a fallback), and encode as the SDK does.
func TestFastResultBridgeAnswers(t *testing.T) {
	call := []byte(`{"sessionId":"s-1","toolId":"app.get_state","success":true,"result":{"screen":"list","status":"<b> & \u2028 é"},"durationMs":3}`)
	for _, x := range []*mcp.CallToolResult{
		resultOf(call, false, true, nil),
		resultOf(call, true, false, nil),
		resultOf([]byte(`{}`), false, false, nil),
	} {
		if _, ok := appendResult(nil, x); !ok {
			t.Errorf("%s: not encoded in one pass", x.StructuredContent)
		}
		sameEncoding(t, x)
	}
}

// TestFastResultSession calls a tool over a real session twice — on a server of the SDK
// alone and on one with fastResults, both answering the same results — and compares the
// responses' bytes as the client reads them: the result type and the server's _meta the
// SDK adds after the handlers included, in both protocol revisions the client may speak.
func TestFastResultSession(t *testing.T) {
	results := []*mcp.CallToolResult{
		resultOf([]byte(`{"sessionId":"s","success":true,"result":{"a":"<x>"},"durationMs":0}`), false, true, nil),
		resultOf([]byte(`{"success":false,"error":{"code":"denied"}}`), true, false, nil),
		{Content: []mcp.Content{&mcp.TextContent{Text: "plain"}}},
		{},
		{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"}}, StructuredContent: jsontext.Value(`{"a":1}`)},
	}
	answers := func(fast bool, version string) []string {
		server := mcp.NewServer(&mcp.Implementation{Name: "s", Title: "T <&>", Version: "1"}, nil)
		if fast {
			server.AddReceivingMiddleware(fastResults)
		}
		for i, r := range results {
			server.AddTool(&mcp.Tool{Name: "t" + string(rune('a'+i)), InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					c := *r
					c.Meta = nil // the SDK adds its server's to the result
					return &c, nil
				})
		}
		c1, c2 := net.Pipe()
		ctx := t.Context()
		ss, err := server.Connect(ctx, &LineTransport{Reader: c2, Writer: c2}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		tee := &lineTee{}
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{})
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: tee.wrap(c1), Writer: c1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		for i := range results {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "t" + string(rune('a'+i)), Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
		}
		return tee.lines()
	}
	for _, version := range []string{"", "2025-06-18"} {
		want, got := answers(false, version), answers(true, version)
		if len(got) != len(want) || len(got) < len(results) {
			t.Fatalf("version %q: %d lines, want %d", version, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("version %q, line %d:\n got %s\nwant %s", version, i, got[i], want[i])
			}
		}
		if version == "" && !strings.Contains(want[len(want)-1], `"resultType":"complete"`) {
			t.Errorf("the default revision sets no result type: %s", want[len(want)-1])
		}
	}
}

// lineTee records the lines a reader gives.
type lineTee struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

type teeConn struct {
	net.Conn
	t *lineTee
}

func (c teeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.t.mu.Lock()
	c.t.buf.Write(p[:n])
	c.t.mu.Unlock()
	return n, err
}

func (t *lineTee) wrap(c net.Conn) net.Conn { return teeConn{c, t} }

func (t *lineTee) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	s := bufio.NewScanner(bytes.NewReader(t.buf.Bytes()))
	for s.Scan() {
		out = append(out, s.Text())
	}
	return out
}

// BenchmarkResultEncoding encodes a call's answer (the demo's app.get_state, framed, with
// the server's _meta) as the connection does: the SDK's way and the one-pass way.
func BenchmarkResultEncoding(b *testing.B) {
	x := resultOf([]byte(`{"sessionId":"com-ansight-bench-mcp-001","toolId":"app.get_state","success":true,"result":{"screen":"list","darkMode":false,"search":"","noteCount":3,"status":"Not signed in · sign in to sync"},"durationMs":0}`), false, true, nil)
	x.Meta = mcp.Meta{"io.modelcontextprotocol/serverInfo": &mcp.Implementation{Name: "ansight-bench", Title: "Ansight app tools", Version: "devel"}}
	for _, c := range []struct {
		name string
		v    any
	}{{"sdk", x}, {"fast", &fastResult{x}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := sdkEncoding(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
