package wire

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/klauspost/compress/gzip"
)

// bigCatalog returns a compressible compact JSON payload of at least n bytes.
func bigCatalog(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"schema":"ansight.tool-catalog.v3","revision":"sha256:0","tools":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"app.tool_%d","name":"Tool %d","description":"Does thing number %d.","category":"app","policy":"read"}`, i, i, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// wrap builds a wrapper by hand around arbitrary gzip bytes.
func wrap(original int64, gz []byte) []byte {
	return fmt.Appendf(nil, `{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":%d,"compressedByteCount":%d,"data":"%s"}`,
		original, len(gz), base64.StdEncoding.EncodeToString(gz))
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEncodePayloadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, n := range []int{CompressionThreshold, 100_000, 1 << 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			plain := bigCatalog(n)
			enc, err := EncodePayload(plain)
			if err != nil {
				t.Fatal(err)
			}
			if len(enc) >= len(plain) {
				t.Fatalf("%d bytes: wrapper of %d bytes is not smaller", len(plain), len(enc))
			}
			head := `{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":` + strconv.Itoa(len(plain)) + `,"compressedByteCount":`
			if !bytes.HasPrefix(enc, []byte(head)) || !bytes.HasSuffix(enc, []byte(`"}`)) {
				t.Fatalf("wrapper %.200s… does not have the member order of docs/protocol/messages.md#payload-encoding", enc)
			}
			var w struct {
				CompressedByteCount int    `json:"compressedByteCount"`
				Data                []byte `json:"data"`
			}
			if err := Unmarshal(enc, &w); err != nil || w.CompressedByteCount != len(w.Data) {
				t.Fatalf("compressedByteCount %d, gzip bytes %d, %v", w.CompressedByteCount, len(w.Data), err)
			}
			dec, err := DecodePayload(enc, int64(len(plain)))
			if err != nil || !bytes.Equal(dec, plain) {
				t.Fatalf("%d bytes: round trip failed: %v", len(plain), err)
			}
		})
	}
}

func TestEncodePayloadKeepsPlain(t *testing.T) {
	t.Parallel()
	small := bigCatalog(100)
	if enc, _ := EncodePayload(small); !bytes.Equal(enc, small) {
		t.Error("payload below the threshold was wrapped")
	}
	under := bigCatalog(CompressionThreshold - 200)
	under = under[:CompressionThreshold-1] // need not be JSON: below the threshold nothing looks
	if enc, _ := EncodePayload(under); !bytes.Equal(enc, under) {
		t.Error("payload of threshold-1 bytes was wrapped")
	}
	// Random base64 text does not shrink enough to pay for the wrapper.
	r := rand.New(rand.NewPCG(1, 2))
	raw := make([]byte, 40_000)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	noisy := []byte(`"` + base64.StdEncoding.EncodeToString(raw) + `"`)
	if enc, _ := EncodePayload(noisy); !bytes.Equal(enc, noisy) {
		t.Error("incompressible payload was wrapped")
	}
}

func TestDecodePayloadPlain(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"toolId":"a"}`, `[1,2]`, `"text"`, `null`, `{"$schema":"x","a":{"$ansightEncoding":"nested is not a wrapper"}}`,
		` {"a":"\n"} `,
	} {
		got, err := DecodePayload([]byte(in), 0)
		if err != nil || string(got) != in {
			t.Errorf("DecodePayload(%s) = %s, %v; want it unchanged", in, got, err)
		}
	}
}

func TestDecodePayloadErrors(t *testing.T) {
	t.Parallel()
	good := gzipBytes(t, []byte(`{"a":1}`))
	b64 := base64.StdEncoding.EncodeToString(good)
	tests := []struct {
		name, in, wantErr string
		limit             int64
	}{
		{"unknown encoding", `{"$ansightEncoding":"br-base64-json","data":""}`, "unsupported payload encoding", 0},
		{"empty encoding", `{"$ansightEncoding":"","data":"` + b64 + `"}`, "unsupported payload encoding", 0},
		{"encoding not a string", `{"$ansightEncoding":1,"data":"` + b64 + `"}`, "must be a string", 0},
		{"case variant of the marker", `{"$AnsightEncoding":"gzip-base64-json","data":"` + b64 + `"}`, "only by case", 0},
		{"missing data", `{"$ansightEncoding":"gzip-base64-json"}`, "has no data", 0},
		{"null data", `{"$ansightEncoding":"gzip-base64-json","data":null}`, "must be a string", 0},
		{"bad base64", `{"$ansightEncoding":"gzip-base64-json","data":"@@@@"}`, "not valid base64", 0},
		{"unpadded base64", `{"$ansightEncoding":"gzip-base64-json","data":"` + strings.TrimRight(b64, "=") + `"}`, "not valid base64", 0},
		{"not gzip", `{"$ansightEncoding":"gzip-base64-json","data":"` + base64.StdEncoding.EncodeToString([]byte("plain text, no gzip")) + `"}`, "not valid gzip", 0},
		{"truncated gzip", `{"$ansightEncoding":"gzip-base64-json","data":"` + base64.StdEncoding.EncodeToString(good[:len(good)-4]) + `"}`, "not valid gzip", 0},
		{"corrupt checksum", `{"$ansightEncoding":"gzip-base64-json","data":"` + base64.StdEncoding.EncodeToString(append(bytes.Clone(good[:len(good)-8]), 0, 0, 0, 0, 7, 0, 0, 0)) + `"}`, "not valid gzip", 0},
		{"empty data", `{"$ansightEncoding":"gzip-base64-json","data":""}`, "not valid gzip", 0},
		{"inflates to invalid JSON", string(wrap(5, gzipBytes(t, []byte(`{"a":`)))), "inflated payload", 0},
		{"inflates to deep nesting", string(wrap(600, gzipBytes(t, []byte(strings.Repeat("[", 300)+strings.Repeat("]", 300))))), "inflated payload: JSON nesting exceeds", 0},
		{"inflates to duplicates", string(wrap(13, gzipBytes(t, []byte(`{"a":1,"a":2}`)))), "inflated payload: invalid JSON: duplicate", 0},
		{"variant of a member name", `{"$ansightEncoding":"gzip-base64-json","Data":"","data":"` + b64 + `"}`, `"Data" differs from a gzip-base64-json member name`, 0},
		{"inflates to two values", string(wrap(4, gzipBytes(t, []byte(`1 2`)))), "inflated payload", 0},
		{"declared size over the limit", string(wrap(1001, good)), "declared inflated size 1001", 1000},
		{"actual size over the limit", string(wrap(3, gzipBytes(t, bigCatalog(2000)))), "exceeds the limit of 1000", 1000},
		{"negative count", string(wrap(-1, good)), "non-negative integer", 0},
		{"fractional count", `{"$ansightEncoding":"gzip-base64-json","originalByteCount":1.5,"data":"` + b64 + `"}`, "non-negative integer", 0},
		{"wrong content type", `{"$ansightEncoding":"gzip-base64-json","contentType":"text/plain","data":"` + b64 + `"}`, "content type", 0},
		{"duplicate member", `{"$ansightEncoding":"gzip-base64-json","data":"` + b64 + `","data":""}`, "duplicate", 0},
		{"invalid JSON around", `{"$ansightEncoding":"gzip-base64-json","data":"` + b64 + `"`, "invalid JSON", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodePayload([]byte(tt.in), tt.limit)
			checkErr(t, err, tt.wantErr)
			var v jsontext.Value
			_, err = UnmarshalPayload([]byte(tt.in), tt.limit, &v)
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestUnmarshalPayload(t *testing.T) {
	t.Parallel()
	result := `{"toolId":"app.list","success":true,"result":{"Name":1,"name":2},"padding":"` + strings.Repeat("x", CompressionThreshold) + `"}`
	wrapped, err := EncodePayload([]byte(result))
	if err != nil || bytes.Equal(wrapped, []byte(result)) {
		t.Fatalf("EncodePayload did not wrap: %v", err)
	}
	for name, in := range map[string][]byte{"plain": []byte(result), "wrapped": wrapped} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var r Result
			out, err := UnmarshalPayload(in, 0, &r)
			if err != nil || string(out) != result || r.ToolID != "app.list" || !r.Success || string(r.Result) != `{"Name":1,"name":2}` {
				t.Errorf("%s: got %+v from %.60s…, %v", name, r, out, err)
			}
		})
	}

	variant := `{"toolId":"a","ToolId":"b","success":true,"padding":"` + strings.Repeat("x", CompressionThreshold) + `"}`
	wrappedVariant, err := EncodePayload([]byte(variant))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      []byte
		v       any
		wantErr string
	}{
		{"case variant, plain", []byte(variant), new(Result), `differ only by case`},
		{"case variant, inflated", wrappedVariant, new(Result), `inflated payload: object keys "toolId" and "ToolId" differ only by case`},
		{"wrong type, inflated", wrapped, new([]int), `inflated payload:`},
		{"not a pointer", wrapped, Result{}, "non-nil pointer"},
		{"over the limit", wrapped, new(Result), "exceeds the limit of 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := int64(0)
			if strings.Contains(tt.name, "limit") {
				limit = 100
			}
			_, err := UnmarshalPayload(tt.in, limit, tt.v)
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestDecodePayloadTolerance(t *testing.T) {
	t.Parallel()
	plain := []byte(`{"a":[1,2,3]}`)
	gz := gzipBytes(t, plain)
	b64 := base64.StdEncoding.EncodeToString(gz)
	for name, in := range map[string]string{
		"no counts, no content type": `{"$ansightEncoding":"gzip-base64-json","data":"` + b64 + `"}`,
		"escaped slashes in data":    `{"$ansightEncoding":"gzip-base64-json","data":"` + strings.ReplaceAll(b64, "/", `\/`) + `"}`,
		"escaped marker name":        `{"\u0024ansightEncoding":"gzip-base64-json","data":"` + b64 + `"}`,
		"wrong declared sizes":       `{"$ansightEncoding":"gzip-base64-json","originalByteCount":1,"compressedByteCount":99999,"data":"` + b64 + `"}`,
		"charset parameter":          `{"$ansightEncoding":"gzip-base64-json","contentType":"application/json; charset=utf-8","data":"` + b64 + `"}`,
		"unknown member":             `{"$ansightEncoding":"gzip-base64-json","x-level":9,"data":"` + b64 + `"}`,
		"concatenated gzip members":  string(wrap(int64(2*len(plain)), append(gzipBytes(t, plain[:5]), gzipBytes(t, plain[5:])...))),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodePayload([]byte(in), 0)
			if err != nil || !bytes.Equal(got, plain) && name != "concatenated gzip members" {
				t.Errorf("got %s, %v", got, err)
			}
		})
	}
}

// gzipBomb returns the gzip form of size zero bytes, built by streaming: one gzip member
// of 1 MiB of zeros, repeated (a multi-member stream inflates to the concatenation).
func gzipBomb(t testing.TB, size int64) []byte {
	const member = 1 << 20
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := io.Copy(zw, io.LimitReader(zeroReader{}, member)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	one := buf.Bytes()
	return bytes.Repeat(one, int(size/member))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestDecodePayloadBomb(t *testing.T) {
	bomb := gzipBomb(t, 1<<30)
	const limit = 4 << 20

	// An honest wrapper is refused before inflating anything.
	_, err := DecodePayload(wrap(1<<30, bomb), limit)
	checkErr(t, err, "declared inflated size")

	// A lying one is inflated only up to the limit, first with cold pools, then warm.
	lying := wrap(1000, bomb)
	// Bounded by the limit plus the gzip bytes (which are base64-decoded first), plus slack
	// for the gzip reader's own state.
	bound := uint64(limit + len(bomb) + 1<<20)
	for _, run := range []string{"cold", "warm"} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = DecodePayload(lying, limit)
		runtime.ReadMemStats(&after)
		checkErr(t, err, "exceeds the limit")
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s pools: 1 GiB bomb (%d bytes wrapped): %d bytes allocated with a limit of %d", run, len(lying), allocated, limit)
		if allocated > bound {
			t.Errorf("%s pools: decoding the bomb allocated %d bytes; the limit is %d", run, allocated, limit)
		}
	}
}

// The declared size only sizes the buffer: an exact, a smaller, a larger, an absurd or no
// declared size inflates to the same payload, and a small payload declaring a large size
// makes no large allocation.
func TestDecodePayloadDeclaredSize(t *testing.T) {
	plain := bigCatalog(100_000)
	gz := gzipBytes(t, plain)
	for _, declared := range []int64{int64(len(plain)), 1, int64(len(plain)) - 1, int64(len(plain)) + 1, 2 * int64(len(plain)), 1 << 40, 0} {
		raw := wrap(declared, gz)
		if declared == 0 {
			raw = []byte(`{"$ansightEncoding":"gzip-base64-json","data":"` + base64.StdEncoding.EncodeToString(gz) + `"}`)
		}
		got, err := DecodePayload(raw, 0)
		if declared == 1<<40 {
			checkErr(t, err, "declared inflated size")
			continue
		}
		if err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("declared %d: %v", declared, err)
		}
		if cap(got) != len(got) {
			t.Errorf("declared %d: %d bytes returned in a buffer of %d", declared, len(got), cap(got))
		}
	}
	small := gzipBytes(t, []byte(`{"a":1}`))
	if raceEnabled {
		return
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := DecodePayload(wrap(60<<20, small), 0); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("a %d-byte gzip stream declaring 60 MiB made %d bytes of allocations", len(small), n)
	}
}
