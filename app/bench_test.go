package app

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Benchmarks compare against baselines measured in the same run:
//
//	go test -run '^$' -bench . -benchmem ./app
//
// BenchmarkRoundTrip/pipe-echo is the cost of moving the same request and a response of
// the same size through transport.Pipe with nothing else; BenchmarkRoundTrip/tool-call
// adds the whole runtime (decode, lookup, guard, schema validation, typed handler, result
// validation, encode).

const benchCall = `{"type":"tool.call","id":"bench-1","sessionId":"s1","payload":{"toolId":"bench.add","arguments":{"a":2,"b":3}}}`

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func BenchmarkRoundTrip(b *testing.B) {
	ctx := context.Background()
	b.Run("pipe-echo", func(b *testing.B) {
		appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
		reply := make([]byte, 190) // about the size of the tool.result
		go func() {
			for {
				if _, _, err := appEnd.Read(ctx); err != nil {
					return
				}
				if err := appEnd.Write(ctx, transport.MessageText, reply); err != nil {
					return
				}
			}
		}()
		msg := []byte(benchCall)
		b.ReportAllocs()
		for b.Loop() {
			if err := hostEnd.Write(ctx, transport.MessageText, msg); err != nil {
				b.Fatal(err)
			}
			if _, _, err := hostEnd.Read(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		hostEnd.Close(transport.StatusNormalClosure, "")
		appEnd.Close(transport.StatusNormalClosure, "")
	})
	b.Run("tool-call", func(b *testing.B) {
		a := New(Options{})
		if err := Register(a, def("bench.add", "Add", "bench", wire.PolicyRead), func(ctx context.Context, c *Call, in addIn) (addOut, error) {
			return addOut{Sum: in.A + in.B}, nil
		}); err != nil {
			b.Fatal(err)
		}
		appEnd, hostEnd := transport.Pipe(transport.PipeOptions{})
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- a.Serve(sctx, appEnd, ServeOptions{}) }()
		msg := []byte(benchCall)
		var last []byte
		b.ReportAllocs()
		for b.Loop() {
			if err := hostEnd.Write(ctx, transport.MessageText, msg); err != nil {
				b.Fatal(err)
			}
			_, data, err := hostEnd.Read(ctx)
			if err != nil {
				b.Fatal(err)
			}
			last = data
		}
		b.StopTimer()
		if !strings.Contains(string(last), `"result":{"sum":5}`) {
			b.Fatalf("response %s", last)
		}
		cancel()
		<-done
		hostEnd.Close(transport.StatusNormalClosure, "")
		appEnd.Close(transport.StatusNormalClosure, "")
	})
}

// discard is a MessageWriter that drops everything.
type discard struct{}

func (discard) Write(context.Context, transport.MessageType, []byte) error { return nil }

// BenchmarkQuery10k answers tool.query with 10,000 registered tools: the full index, the
// full catalog, and the unchanged short form a host gets when its cached revisions match.
func BenchmarkQuery10k(b *testing.B) {
	a := New(Options{})
	args := jsontext.Value(`{"type":"object","properties":{"reference":{"type":"string"},"count":{"type":"integer"}},"required":["reference"]}`)
	result := jsontext.Value(`{"type":"object","additionalProperties":true}`)
	noop := func(ctx context.Context, c *Call) (any, error) { return nil, nil }
	for i := range 10_000 {
		d := def("bench.tool_"+itoa(i), "Tool "+itoa(i), "cat"+itoa(i%20), wire.PolicyRead)
		d.ArgumentsSchema, d.ResultSchema = args, result
		if err := a.Register(Tool{Definition: d, Handler: noop}); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	v, err := a.current()
	if err != nil {
		b.Fatal(err)
	}
	avail := answerAvailabilityRevision(b, a)
	for _, bc := range []struct{ name, payload string }{
		{"index", `{"detail":"index"}`},
		{"full", `{}`},
		{"unchanged", `{"detail":"index","ifRevision":"` + v.set.Revision() + `","ifAvailabilityRevision":"` + avail + `"}`},
		// The lists a host sends: a few definitions by id, a search of a few words.
		{"ids", `{"detail":"definitions","ids":["bench.tool_17","bench.tool_4242","bench.tool_9999","bench.tool_17"]}`},
		{"search", `{"detail":"index","query":"tool 99","feature":"cat9"}`},
	} {
		msg := []byte(`{"type":"tool.query","id":"q","payload":` + bc.payload + `}`)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Handle(ctx, msg, discard{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func answerAvailabilityRevision(b *testing.B, a *App) string {
	rec := &recorder{}
	if _, err := a.Handle(context.Background(), []byte(`{"type":"tool.query","id":"q","payload":{"detail":"index","limit":1}}`), rec); err != nil {
		b.Fatal(err)
	}
	_, p := response(b, rec.take())
	var c wire.Catalog
	if err := wire.Unmarshal(p, &c); err != nil {
		b.Fatal(err)
	}
	return c.AvailabilityRevision
}

// BenchmarkLargeResult answers a call whose result is 1 MiB of JSON (an array of
// records): result validation, encoding and gzip-base64 compression of the payload.
// BenchmarkLargeResult/compress-only is the payload compression alone.
func BenchmarkLargeResult(b *testing.B) {
	var sb strings.Builder
	sb.WriteByte('[')
	for i := 0; sb.Len() < 1<<20; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"id":"node-` + itoa(i) + `","role":"button","label":"Save item ` + itoa(i) + `","visible":true}`)
	}
	sb.WriteByte(']')
	blob := jsontext.Value(sb.String())
	a := New(Options{})
	d := def("bench.large", "Large", "bench", wire.PolicyRead)
	d.ArgumentsSchema = jsontext.Value(`{"type":"object"}`)
	d.ResultSchema = jsontext.Value(`{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"role":{"type":"string"},"label":{"type":"string"},"visible":{"type":"boolean"}}}}`)
	if err := a.Register(Tool{Definition: d, Handler: func(ctx context.Context, c *Call) (any, error) { return blob, nil }}); err != nil {
		b.Fatal(err)
	}
	msg := []byte(callMsg("c", `{"toolId":"bench.large"}`))
	b.Run("tool-call", func(b *testing.B) {
		b.SetBytes(int64(len(blob)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Handle(context.Background(), msg, discard{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	payload := []byte(`{"toolId":"bench.large","success":true,"result":` + string(blob) + `}`)
	b.Run("compress-only", func(b *testing.B) {
		b.SetBytes(int64(len(blob)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := wire.EncodePayload(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHandleCall is the app's whole share of a small call without the transport:
// App.Handle of a tool.call (envelope and payload decoding, lookup, guard, availability,
// argument validation, typed handler, result validation, response encoding).
func BenchmarkHandleCall(b *testing.B) {
	a := New(Options{})
	if err := Register(a, def("bench.add", "Add", "bench", wire.PolicyRead), func(ctx context.Context, c *Call, in addIn) (addOut, error) {
		return addOut{Sum: in.A + in.B}, nil
	}); err != nil {
		b.Fatal(err)
	}
	msg := []byte(benchCall)
	b.ReportAllocs()
	for b.Loop() {
		if ok, err := a.Handle(b.Context(), msg, discard{}); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkArtifactStream sends a 1 MiB artifact as ASFT frames of the default chunk size
// to a writer that drops them: the read and frame buffers come from the runtime's pool.
func BenchmarkArtifactStream(b *testing.B) {
	data := strings.Repeat("a", 1<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		t := &transfer{id: "0123456789abcdef0123456789abcdef", size: int64(len(data)), chunk: ChunkSize, r: strings.NewReader(data)}
		if err := t.stream(context.Background(), discard{}); err != nil {
			b.Fatal(err)
		}
	}
}
