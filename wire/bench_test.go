package wire

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// benchNode is a visual-tree node, the typical large tool result.
type benchNode struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Text     string      `json:"text,omitzero"`
	Bounds   [4]int      `json:"bounds"`
	Enabled  bool        `json:"enabled"`
	Children []benchNode `json:"children,omitzero"`
}

// benchTree returns a tree whose compact JSON is about size bytes.
func benchTree(size int) *benchNode {
	root := &benchNode{ID: "root", Type: "Window", Bounds: [4]int{0, 0, 1080, 2400}, Enabled: true}
	for i := 0; ; i++ {
		group := benchNode{ID: fmt.Sprintf("root.%d", i), Type: "StackLayout", Bounds: [4]int{0, i * 40, 1080, 40}, Enabled: true}
		for j := range 8 {
			group.Children = append(group.Children, benchNode{
				ID: fmt.Sprintf("root.%d.%d", i, j), Type: "Label", Text: fmt.Sprintf("Item %d of group %d", j, i),
				Bounds: [4]int{j * 120, i * 40, 120, 40}, Enabled: j%3 != 0,
			})
		}
		root.Children = append(root.Children, group)
		if i%64 == 0 { // measure only now and then
			if b, _ := json.Marshal(root); len(b) >= size {
				return root
			}
		}
	}
}

// BenchmarkEncodeResult compares a 1 MiB tool.result payload written plainly (the
// baseline) with the same payload gzip-base64-json wrapped.
func BenchmarkEncodeResult(b *testing.B) {
	tree := benchTree(1 << 20)
	res := struct {
		ToolID  string     `json:"toolId"`
		Success bool       `json:"success"`
		Result  *benchNode `json:"result"`
	}{"ui.get_visual_tree", true, tree}
	plain, _ := Marshal(&res)
	enc, _ := EncodePayload(plain)
	b.Logf("payload %d bytes, wrapped %d bytes", len(plain), len(enc))

	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := Marshal(&res)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(p)))
		}
	})
	b.Run("compressed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := Marshal(&res)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(p)))
			if _, err := EncodePayload(p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-plain", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := DecodePayload(plain, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-compressed", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			if _, err := DecodePayload(enc, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	// What a host does with a compressed result: inflate, then decode strictly into the
	// payload type. decode-then-unmarshal is the two-pass way (the baseline).
	b.Run("decode-then-unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			body, err := DecodePayload(enc, 0)
			var r Result
			if err == nil {
				err = Unmarshal(body, &r)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unmarshal-payload", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(plain)))
		for b.Loop() {
			var r Result
			if _, err := UnmarshalPayload(enc, 0, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeCall measures the codec's part of a small tool.call against the json
// package's non-strict decoding of the same bytes (the baseline).
func BenchmarkDecodeCall(b *testing.B) {
	data := []byte(smallCall)
	b.Run("baseline-json-v2", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var e struct {
				Type       string         `json:"type"`
				ID         string         `json:"id"`
				ReplyTo    string         `json:"replyTo"`
				SessionID  string         `json:"sessionId"`
				SentAt     time.Time      `json:"sentAt"`
				Capability string         `json:"capability"`
				Payload    jsontext.Value `json:"payload"`
			}
			if err := json.Unmarshal(data, &e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeEnvelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeEnvelope(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	payload := []byte(`{"toolId":"app.echo","arguments":{"text":"hello"},"callId":"c1"}`)
	b.Run("baseline-json-v2-call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Call
			if err := json.Unmarshal(payload, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Unmarshal-call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c Call
			if err := Unmarshal(payload, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	resp := NewResponse(&Envelope{Type: TypeCall, ID: "call-0191", SessionID: "session_1"}, TypeResult,
		jsontext.Value(`{"toolId":"app.echo","success":true,"result":{"text":"hello"}}`), time.Now())
	buf := make([]byte, 0, 512)
	b.Run("AppendEnvelope", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendEnvelope(buf[:0], resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchCatalog is a tool.query answer at detail=definitions for n tools shaped like the
// demo app's synthetic ones (BenchmarkCatalogCold's): about 570 bytes of JSON a tool.
func benchCatalog(n int) []byte {
	b := []byte(`{"schema":"ansight.tool-catalog.v3","revision":"sha256:c026d96825eb1ab88d428055f8748c9fd8002852f8cdc62a6009b79ee6f1ca59","tools":[`)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"id":"bench.synthetic_%05d","name":"Synthetic calendar %d","description":"Synthetic tool %d of %d (calendar) for catalog benchmarks: echoes its value.",`+
			`"category":"bench","policy":"read","argumentsSchema":{"type":"object","properties":{"value":{"type":"string","maxLength":100,"description":"Echoed back."}}},`+
			`"resultSchema":{"type":"object","properties":{"tool":{"type":"string"},"value":{"type":"string"}},"required":["tool","value"]},`+
			`"keywords":"synthetic benchmark calendar","definitionRevision":"sha256:%064x"}`, i, i, i, n, uint64(i)*0x9e3779b97f4a7c15)
	}
	return fmt.Appendf(b, `],"count":%d,"detail":"definitions"}`, n)
}

// BenchmarkDecodeCatalog is the host's strict decoding of a new app's first catalog
// answer, 1,000 tools at detail=definitions, once inflated: what UnmarshalCatalogPayload
// does after inflating when it holds no memo.
func BenchmarkDecodeCatalog(b *testing.B) {
	data := benchCatalog(1000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	cpu := processCPU()
	for b.Loop() {
		if err := new(CatalogMemo).decode(data, nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/1e3/float64(b.N), "cpu-µs/op")
}

// processCPU is the CPU time the process used so far (user and system, every thread):
// on a shared machine it moves less with the other work than the wall time does.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
