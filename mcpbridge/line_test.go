package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readAll reads t's messages until the first error: the messages and the error (nil at
// the end of the input).
func readAll(t mcp.Transport) ([]jsonrpc.Message, error) {
	ctx := context.Background()
	c, err := t.Connect(ctx)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	var msgs []jsonrpc.Message
	for {
		m, err := c.Read(ctx)
		if errors.Is(err, io.EOF) {
			return msgs, nil
		}
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
}

type nopWriter struct{ io.Writer }

func (nopWriter) Close() error { return nil }

// sameReads holds LineTransport's reading of in against the SDK's mcp.IOTransport's: the
// same messages, field by field, up to a failure at the same message. One leeway: both
// refuse data after a value on its line, but each sees it at once only when it has
// already buffered it (the SDK reads 512 bytes at a time, jsontext 64 at first), so where
// the SDK refused a message for what followed it, the bridge's may deliver that message
// and fail at the next read instead — either way the connection ends there.
func sameReads(t *testing.T, in string) {
	t.Helper()
	want, wantErr := readAll(&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriter{io.Discard}})
	got, gotErr := readAll(&LineTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriter{io.Discard}})
	if wantErr != nil && strings.Contains(wantErr.Error(), "trailing data") && gotErr != nil && len(got) == len(want)+1 {
		got = append([]jsonrpc.Message(nil), got[:len(want)]...)
	}
	if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q:\n got %#v (error %v)\nwant %#v (error %v)", in, got, gotErr, want, wantErr)
	}
}

var lineSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ansight_call_app_tool","arguments":{"sessionId":"s","toolId":"app.get_state"}}}` + "\n",
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":"a","result":{}}` + "\n",
	`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}` + "\n",
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]` + "\n",
	`[]` + "\n",
	`null` + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}` + "\n",
	`{"jsonrpc":"2.0","id":1.9,"Method":"a"}` + "\n",
	`{"jsonrpc":"2.0","id":null,"method":"a","params":null}` + "\n",
	`{"jsonrpc":"2.0","id":true,"method":"a"}` + "\n",
	`{"jsonrpc":"1.0","id":1,"method":"a"}` + "\n",
	`{"jsonrpc":"2\u002e0","id":"\u00e9","\u006dethod":"a", "params" : [ 1 , {"x" : "y"} ] }` + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"a"} {"jsonrpc":"2.0","id":2,"method":"b"}` + "\n",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":{\"s\":\"\xff\"}}\n",
	`{"jsonrpc":"2.0","id":1,"method":5}` + "\n",
	`{"jsonrpc":"2.0","id":1e400,"method":"a"}` + "\n",
	`{"jsonrpc":"2.0","id":1,"result":{"a":1},"x":[}` + "\n",
	"\r\n  {\"jsonrpc\":\"2.0\",\"id\":1,\n\"method\":\"a\"}\r\n",
	strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + "\n",
	`{"jsonrpc":"2.0","id":1,"method":"a","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + "}\n",
}

func TestLineTransportReads(t *testing.T) {
	for _, in := range lineSeeds {
		sameReads(t, in)
	}
}

// FuzzLineTransport holds the bridge's reader (a reused decoder, the common messages
// decoded without the SDK's decoder) against the SDK's own transport, byte stream by byte
// stream. Inputs stay under the 512 bytes the SDK's decoder reads at once: its check for
// data after a value sees only what it has buffered.
func FuzzLineTransport(f *testing.F) {
	for _, s := range lineSeeds {
		if len(s) < 500 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) >= 500 {
			return
		}
		sameReads(t, in)
	})
}

// FuzzEncodeMessage holds encodeMessage against jsonrpc.EncodeMessage for responses with a
// result as the SDK writes them (its encoding of a value: valid JSON).
func FuzzEncodeMessage(f *testing.F) {
	f.Add(int64(1), "", `{"content":[{"type":"text","text":"a \"b\" <c>"}],"structuredContent":{"x":1}}`, false)
	f.Add(int64(0), "id-7", `{"a":"\u2028 é"}`, true)
	f.Add(int64(-3), "é\"", `[1, 2]`, true)
	f.Add(int64(5), "", "{\n}", false)
	f.Fuzz(func(t *testing.T, n int64, s, result string, stringID bool) {
		if !json.Valid([]byte(result)) {
			return
		}
		id := jsonrpc.ID{}
		if stringID {
			id, _ = jsonrpc.MakeID(s)
		} else {
			id, _ = jsonrpc.MakeID(float64(n))
		}
		resp := &jsonrpc.Response{ID: id, Result: json.RawMessage(result)}
		want, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			return
		}
		got, err := encodeMessage(resp)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s (%v), want %s", result, got, err, want)
		}
	})
}

func TestEncodeMessageOthers(t *testing.T) {
	id, _ := jsonrpc.MakeID("x")
	for _, m := range []jsonrpc.Message{
		&jsonrpc.Request{ID: id, Method: "ping", Params: json.RawMessage(`{}`)},
		&jsonrpc.Request{Method: "notifications/progress"},
		&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -1, Message: "no"}},
		&jsonrpc.Response{ID: id, Result: json.RawMessage(`"s"`)},
	} {
		want, _ := jsonrpc.EncodeMessage(m)
		got, err := encodeMessage(m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%#v: got %s (%v), want %s", m, got, err, want)
		}
	}
}

// TestLineTransportSession runs a client of the SDK against the bridge over LineTransport
// on a pipe: initialize, tools/list, a call, a batch answered as one array, and the end.
func TestLineTransportSession(t *testing.T) {
	ctx := t.Context()
	br := New(newFakeBackend(t), Options{})
	c1, c2 := net.Pipe()
	ran := make(chan error, 1)
	go func() { ran <- br.Run(ctx, &LineTransport{Reader: c2, Writer: c2}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c1, Writer: c1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v, %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: ToolListSessions, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v, %v", res, err)
	}
	cs.Close()
	if err := <-ran; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// TestLineTransportBatch sends a batch of two pings and a notification by hand: one array
// comes back with both answers.
func TestLineTransportBatch(t *testing.T) {
	c1, c2 := net.Pipe()
	conn, _ := (&LineTransport{Reader: c2, Writer: c2}).Connect(t.Context())
	defer conn.Close()
	go func() {
		_, _ = io.WriteString(c1, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`+"\n")
	}()
	var reqs []*jsonrpc.Request
	for range 3 {
		m, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, m.(*jsonrpc.Request))
	}
	out := make(chan string, 1)
	go func() {
		b := make([]byte, 4096)
		n, _ := c1.Read(b)
		out <- string(b[:n])
	}()
	for _, i := range []int{2, 0} { // answered out of order, sent in the batch's
		if err := conn.Write(t.Context(), &jsonrpc.Response{ID: reqs[i].ID, Result: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := <-out, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]`+"\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestLineTransportLimit refuses a message over MaxLineLength, as the SDK's does.
func TestLineTransportLimit(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200) + `"}}` + "\n"
	for _, tr := range []mcp.Transport{
		&LineTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriter{io.Discard}, MaxLineLength: 100},
		&mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(in)), Writer: nopWriter{io.Discard}, MaxLineLength: 100},
	} {
		if msgs, err := readAll(tr); len(msgs) != 0 || err == nil {
			t.Errorf("%T: %v, %v", tr, msgs, err)
		}
	}
}

// TestLineTransportClose unblocks a Read waiting for input.
func TestLineTransportClose(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	conn, _ := (&LineTransport{Reader: io.NopCloser(r), Writer: nopWriter{io.Discard}}).Connect(t.Context())
	done := make(chan error)
	go func() { _, err := conn.Read(context.Background()); done <- err }()
	conn.Close()
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Fatalf("Read after Close: %v", err)
	}
}
