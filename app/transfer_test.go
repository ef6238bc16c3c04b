package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/app/internal/transcript"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// artifactApp registers test.artifact, whose behaviour the test sets per call.
func artifactApp(t *testing.T, h Handler) *App {
	t.Helper()
	a := New(Options{IDs: transcript.CountingIDs()})
	d := def("test.artifact", "Artifact", "test", wire.PolicyRead)
	d.ArgumentsSchema = []byte(`{"type":"object"}`)
	d.ResultSchema = []byte(`{"type":"object","additionalProperties":true}`)
	if err := a.Register(Tool{Definition: d, Handler: h}); err != nil {
		t.Fatal(err)
	}
	return a
}

// frames renders the binary messages as "type seq offset len" and reassembles the chunks
// of every transfer.
func frames(t *testing.T, msgs []message) ([]string, map[string][]byte) {
	t.Helper()
	var out []string
	data := map[string][]byte{}
	for _, m := range msgs {
		if m.typ != transport.MessageBinary {
			continue
		}
		f, err := wire.ParseFrame(m.data)
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%s %d %d %d", f.Type, f.Sequence, f.Offset, len(f.Payload))
		if f.Type == wire.FrameError {
			s = fmt.Sprintf("%s %d %d %s", f.Type, f.Sequence, f.Offset, f.Payload)
		}
		if f.Type == wire.FrameChunk {
			data[f.TransferID] = append(data[f.TransferID], f.Payload...)
		}
		out = append(out, s)
	}
	return out, data
}

func TestTransferFraming(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		size int64
		r    func([]byte) io.Reader
		opts []ArtifactOption
		want []string
	}{
		{"empty", 0, nil, nil, []string{"complete 0 0 0"}},
		{"one byte", 1, nil, nil, []string{"chunk 0 0 1", "complete 1 1 0"}},
		{"exactly one chunk", ChunkSize, nil, nil, []string{"chunk 0 0 65536", "complete 1 65536 0"}},
		{"two chunks and a bit", 2*ChunkSize + 1, nil, nil, []string{"chunk 0 0 65536", "chunk 1 65536 65536", "chunk 2 131072 1", "complete 3 131073 0"}},
		{"one byte at a time", 3, func(b []byte) io.Reader { return &oneByteReader{b: b} }, nil, []string{"chunk 0 0 3", "complete 1 3 0"}},
		{"shorter than announced", 10, func(b []byte) io.Reader { return bytes.NewReader(b[:4]) }, nil,
			[]string{"chunk 0 0 4", "error 1 4 artifact ended after 4 of the announced 10 bytes"}},
		{"longer than announced", 4, func(b []byte) io.Reader { return bytes.NewReader(append(b, 1, 2)) }, nil,
			[]string{"error 0 0 artifact is longer than the announced 4 bytes"}},
		{"longer by a chunk", ChunkSize, func(b []byte) io.Reader { return bytes.NewReader(append(b, 1)) }, nil,
			[]string{"chunk 0 0 65536", "error 1 65536 artifact is longer than the announced 65536 bytes"}},
		{"read failure", ChunkSize + 10, func(b []byte) io.Reader { return &failingReader{n: ChunkSize + 3} }, nil,
			[]string{"chunk 0 0 65536", "chunk 1 65536 3", "error 2 65539 reading the artifact failed: disk on fire"}},
		{"negative size", -1, nil, nil, []string{"error 0 0 artifact has a negative size (-1)"}},
		// chunkBytes as the official SDKs bound it: 1 KiB..512 KiB.
		{"chunks of 1 KiB", 2500, nil, []ArtifactOption{WithChunkBytes(1024)}, []string{"chunk 0 0 1024", "chunk 1 1024 1024", "chunk 2 2048 452", "complete 3 2500 0"}},
		{"chunk size clamped up", 1500, nil, []ArtifactOption{WithChunkBytes(10)}, []string{"chunk 0 0 1024", "chunk 1 1024 476", "complete 2 1500 0"}},
		{"chunk size clamped down", MaxChunkSize + 1, nil, []ArtifactOption{WithChunkBytes(1 << 30)}, []string{"chunk 0 0 524288", "chunk 1 524288 1", "complete 2 524289 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := artifactBytes(int(max(tc.size, 0)))
			r := io.Reader(bytes.NewReader(content))
			if tc.r != nil {
				r = tc.r(content)
			}
			a := artifactApp(t, func(ctx context.Context, c *Call) (any, error) {
				return c.SendArtifact("a.bin", "application/octet-stream", tc.size, r, tc.opts...), nil
			})
			rec := &recorder{}
			if _, err := a.Handle(context.Background(), []byte(callMsg("c", `{"toolId":"test.artifact"}`)), rec); err != nil {
				t.Fatal(err)
			}
			msgs := rec.take()
			if msgs[0].typ != transport.MessageText {
				t.Fatal("the first message is not the response")
			}
			got, data := frames(t, msgs)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			id := fmt.Sprintf("%032x", 1)
			if n := len(data[id]); tc.r == nil && !bytes.Equal(data[id], content[:n]) {
				t.Fatal("the reassembled bytes differ")
			}
		})
	}
}

type oneByteReader struct{ b []byte }

func (r *oneByteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	p[0] = r.b[0]
	r.b = r.b[1:]
	return 1, nil
}

// TestTransferDropped: an artifact is streamed only when the call succeeds and its result
// announces it; otherwise the reader is closed without a frame.
func TestTransferDropped(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    func(c *Call, r io.Reader) (any, error)
	}{
		{"call fails", func(c *Call, r io.Reader) (any, error) {
			c.SendArtifact("a", "b", 1, r)
			return nil, errors.New("no")
		}},
		{"call panics", func(c *Call, r io.Reader) (any, error) {
			c.SendArtifact("a", "b", 1, r)
			panic("no")
		}},
		{"not announced", func(c *Call, r io.Reader) (any, error) {
			c.SendArtifact("a", "b", 1, r)
			return map[string]any{"nothing": "here"}, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closed := false
			a := artifactApp(t, func(ctx context.Context, c *Call) (any, error) {
				return tc.h(c, &failingReader{n: 1, closed: &closed})
			})
			rec := &recorder{}
			if _, err := a.Handle(context.Background(), []byte(callMsg("c", `{"toolId":"test.artifact"}`)), rec); err != nil {
				t.Fatal(err)
			}
			if msgs := rec.take(); len(msgs) != 1 {
				t.Fatalf("%d messages, want only the response", len(msgs))
			}
			if !closed {
				t.Fatal("the artifact's reader was not closed")
			}
		})
	}
}

// TestTransferLateArtifact: SendArtifact after the handler returned drops the artifact.
func TestTransferLateArtifact(t *testing.T) {
	t.Parallel()
	var late *Call
	a := artifactApp(t, func(ctx context.Context, c *Call) (any, error) {
		late = c
		return map[string]any{}, nil
	})
	rec := &recorder{}
	if _, err := a.Handle(context.Background(), []byte(callMsg("c", `{"toolId":"test.artifact"}`)), rec); err != nil {
		t.Fatal(err)
	}
	closed := false
	late.SendArtifact("a", "b", 1, &failingReader{n: 1, closed: &closed})
	if !closed {
		t.Fatal("a late artifact was not dropped")
	}
}

// TestTransferWriteFailure: when the connection fails mid-stream, Handle returns the
// error and every reader is closed.
func TestTransferWriteFailure(t *testing.T) {
	t.Parallel()
	var closed [2]bool
	a := artifactApp(t, func(ctx context.Context, c *Call) (any, error) {
		d1 := c.SendArtifact("a", "b", 10, &failingReader{n: 10, closed: &closed[0]})
		d2 := c.SendArtifact("a", "b", 10, &failingReader{n: 10, closed: &closed[1]})
		return map[string]any{"first": d1, "second": d2}, nil
	})
	w := &failAfter{n: 2} // the response and one chunk
	_, err := a.Handle(context.Background(), []byte(callMsg("c", `{"toolId":"test.artifact"}`)), w)
	if !errors.Is(err, errBroken) {
		t.Fatalf("Handle returned %v", err)
	}
	if !closed[0] || !closed[1] {
		t.Fatalf("readers closed: %v", closed)
	}
}

var errBroken = errors.New("broken pipe")

type failAfter struct{ n int }

func (w *failAfter) Write(ctx context.Context, typ transport.MessageType, data []byte) error {
	if w.n == 0 {
		return errBroken
	}
	w.n--
	return nil
}

// TestTransferIDs: ids come from Options.IDs when they have the protocol's form, else
// they are random.
func TestTransferIDs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ids  func() string
		want func(string) bool
	}{
		{func() string { return strings.Repeat("ab", 16) }, func(id string) bool { return id == strings.Repeat("ab", 16) }},
		{func() string { return "not-hex" }, func(id string) bool { return isTransferID(id) && id != "not-hex" }},
	} {
		a := New(Options{IDs: tc.ids})
		c := &Call{app: a}
		d := c.SendArtifact("f", "m", 0, bytes.NewReader(nil))
		if !tc.want(d.TransferID) {
			t.Fatalf("transfer id %q", d.TransferID)
		}
		if d.DeliveryMode != wire.DeliveryModeWebSocketBinary || d.WireProtocol != wire.FileTransferProtocol || d.Status != "queued" {
			t.Fatalf("descriptor %+v", d)
		}
		c.finish(false, nil)
	}
}
