package tools

import (
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// BenchmarkCall measures one call round trip over a Pipe against the fake app.
func BenchmarkCall(b *testing.B) {
	app := newFakeApp(b, readTool)
	hs := newHarness(b, Options{}, app.handler())
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		return []msg{reply(b, req, wire.TypeResult, `{"toolId":"t.read","success":true,"result":{"n":1}}`)}
	}
	call := wire.Call{ToolID: "t.read", Arguments: jsontext.Value(`{"n":1}`)}
	if _, err := hs.c.Call(b.Context(), call); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hs.c.Call(b.Context(), call); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTransfer measures receiving an 8 MiB artifact in 64 KiB frames into a file.
func BenchmarkTransfer(b *testing.B) {
	data := randomBytes(8 << 20)
	app := newFakeApp(b, readTool)
	n := 0
	app.onCall = func(req *wire.Envelope, c wire.Call) []msg {
		n++ // transfer ids are never reused
		id := fmt.Sprintf("%032x", n)
		return append([]msg{reply(b, req, wire.TypeResult, `{"toolId":"t.read","success":true,"result":`+desc(id, "f.bin", len(data))+`}`)},
			chunks(id, data, 64<<10)...)
	}
	hs := newHarness(b, Options{}, app.handler())
	if _, err := hs.c.Catalog(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := hs.c.Call(b.Context(), wire.Call{ToolID: "t.read"})
		if err != nil || res.Artifacts[0].Err != nil {
			b.Fatal(err, res.Artifacts)
		}
	}
}
