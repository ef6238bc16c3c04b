package notes

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/wire"
)

// Bounds of the benchmark tools.
const (
	// MaxSyntheticTools bounds Options.SyntheticTools.
	MaxSyntheticTools  = 100000
	defaultLargeResult = 1 << 20
	maxLargeResult     = 32 << 20
	maxGeneratedFile   = 64 << 30
)

func (m *Model) registerBench(a *app.App) error {
	if m.syntheticTools < 0 || m.syntheticTools > MaxSyntheticTools {
		return fmt.Errorf("SyntheticTools must be 0..%d, not %d", MaxSyntheticTools, m.syntheticTools)
	}
	large := def("data.large_result", "Large result", "data", wire.PolicyRead,
		"large big result payload compression benchmark",
		"Returns a JSON result of at least sizeBytes bytes made of repetitive records: for testing payload compression and large responses.",
		`{"type":"object","properties":{"sizeBytes":{"type":"integer","minimum":1024,"maximum":`+strconv.Itoa(maxLargeResult)+
			`,"default":`+strconv.Itoa(defaultLargeResult)+`,"description":"Smallest size of the result's compact JSON."}}}`)
	large.ResultSchema = jsontext.Value(largeResultSchema)
	if err := app.Register(a, large, func(ctx context.Context, c *app.Call, in largeArgs) (jsontext.Value, error) {
		if in.SizeBytes == 0 {
			in.SizeBytes = defaultLargeResult
		}
		return largeResult(in.SizeBytes), nil
	}); err != nil {
		return err
	}
	if err := app.Register(a, def("files.generate", "Generate file", "files", wire.PolicyRead,
		"file generate artifact download binary transfer benchmark",
		"Generates a file of exactly sizeBytes bytes and delivers it as an ASFT binary transfer, streamed as it is produced (never held in memory). "+
			"Patterns: zeros; sequence (byte i is i mod 251, easy to verify); random (ChaCha8 seeded by seed, incompressible).",
		`{"type":"object","properties":{`+
			`"sizeBytes":{"type":"integer","minimum":0,"maximum":`+strconv.FormatInt(maxGeneratedFile, 10)+`,"description":"Exact size of the file."},`+
			`"pattern":{"enum":["zeros","sequence","random"],"default":"sequence"},`+
			`"seed":{"type":"integer","minimum":0,"maximum":4294967295,"default":1,"description":"Seed of the random pattern."},`+
			`"fileName":{"type":"string","minLength":1,"maxLength":100,"pattern":"^[A-Za-z0-9][A-Za-z0-9._-]*$","description":"Name of the file; default generated-<sizeBytes>.bin."}},`+
			`"required":["sizeBytes"]}`),
		func(ctx context.Context, c *app.Call, in generateArgs) (*generateResult, error) {
			if in.Pattern == "" {
				in.Pattern = "sequence"
			}
			if in.Seed == nil {
				one := uint64(1)
				in.Seed = &one
			}
			if in.FileName == "" {
				in.FileName = "generated-" + strconv.FormatInt(in.SizeBytes, 10) + ".bin"
			}
			r := newPatternReader(in.Pattern, *in.Seed, in.SizeBytes)
			return &generateResult{Pattern: in.Pattern,
				TransferDescriptor: c.SendArtifact(in.FileName, "application/octet-stream", in.SizeBytes, r)}, nil
		}); err != nil {
		return err
	}
	width := len(strconv.Itoa(m.syntheticTools))
	for i := 1; i <= m.syntheticTools; i++ {
		id := fmt.Sprintf("bench.synthetic_%0*d", max(width, 5), i)
		word := benchWords[i%len(benchWords)]
		d := def(id, fmt.Sprintf("Synthetic %s %d", word, i), "bench", wire.PolicyRead, "synthetic benchmark "+word,
			fmt.Sprintf("Synthetic tool %d of %d (%s) for catalog benchmarks: echoes its value.", i, m.syntheticTools, word),
			`{"type":"object","properties":{"value":{"type":"string","maxLength":100,"description":"Echoed back."}}}`)
		if err := app.Register(a, d, func(ctx context.Context, c *app.Call, in echoArgs) (*echoResult, error) {
			return &echoResult{Tool: c.ToolID, Value: in.Value}, nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// benchWords vary the synthetic tools' names so that text queries have something to find.
var benchWords = []string{"inventory", "orders", "billing", "profile", "search", "media", "messages", "maps", "calendar", "weather"}

type echoArgs struct {
	Value string `json:"value,omitzero"`
}

type echoResult struct {
	Tool  string `json:"tool"`
	Value string `json:"value"`
}

type largeArgs struct {
	SizeBytes int `json:"sizeBytes,omitzero"`
}

const largeResultSchema = `{"type":"object","properties":{` +
	`"items":{"type":"array","items":{"type":"object","properties":{` +
	`"index":{"type":"integer"},"id":{"type":"string"},"title":{"type":"string"},"text":{"type":"string"},` +
	`"tags":{"type":"array","items":{"type":"string"}}},"required":["index","id","title","text","tags"]}},` +
	`"count":{"type":"integer","minimum":0}},"required":["items","count"]}`

// largeResult builds {"items":[…],"count":n} of at least size bytes. The records repeat
// (only their index changes), so the payload compresses well.
func largeResult(size int) jsontext.Value {
	b := make([]byte, 0, size+512)
	b = append(b, `{"items":[`...)
	n := 0
	for len(b) < size {
		if n > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"index":%d,"id":"item-%06d","title":"Record %d","text":"The quick brown fox jumps over the lazy dog. `+
			`Pack my box with five dozen liquor jugs.","tags":["demo","benchmark","compression"]}`, n, n, n)
		n++
	}
	return fmt.Appendf(b, `],"count":%d}`, n)
}

type generateArgs struct {
	SizeBytes int64   `json:"sizeBytes"`
	Pattern   string  `json:"pattern,omitzero"`
	Seed      *uint64 `json:"seed,omitzero"`
	FileName  string  `json:"fileName,omitzero"`
}

type generateResult struct {
	Pattern string `json:"pattern"`
	wire.TransferDescriptor
}

// patternReader produces size bytes of a pattern on demand.
type patternReader struct {
	pattern   string
	off, size int64
	rng       *rand.ChaCha8
}

func newPatternReader(pattern string, seed uint64, size int64) *patternReader {
	r := &patternReader{pattern: pattern, size: size}
	if pattern == "random" {
		var s [32]byte
		binary.LittleEndian.PutUint64(s[:], seed)
		r.rng = rand.NewChaCha8(s)
	}
	return r
}

func (r *patternReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.size-r.off)]
	switch r.pattern {
	case "zeros":
		clear(p)
	case "random":
		_, _ = r.rng.Read(p) // never fails
	default: // sequence
		for i := range p {
			p[i] = byte((r.off + int64(i)) % 251)
		}
	}
	r.off += int64(len(p))
	return len(p), nil
}
