package wire

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// EncodingGzipBase64JSON is the only payload encoding of the protocol (docs/protocol/messages.md#payload-encoding).
const EncodingGzipBase64JSON = "gzip-base64-json"

// The wrapper's members, in the order they are written.
const (
	wrapperHead   = `{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":`
	wrapperMiddle = `,"compressedByteCount":`
	wrapperData   = `,"data":"`
	wrapperTail   = `"}`
)

// maxPooledBuffer bounds the buffers kept in the pools, so that one huge payload does not
// pin its memory for the life of the process.
const maxPooledBuffer = 8 << 20

// compressionLevel is the gzip level of payloads. Level 2 of klauspost/compress
// compresses a catalog answer (mostly repeated names and schemas) a little smaller than
// the default level 6 in under half the time, and a large repetitive result 12 % larger
// in half the time: a payload is compressed for every answer, so the time matters more.
const compressionLevel = 2

var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, compressionLevel) // the level is valid
		return w
	}}
	gzipBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	inflaters   = sync.Pool{New: func() any { return new(inflater) }}
)

// EncodePayload returns the payload to send for a compact JSON payload: compact itself
// when it is shorter than [CompressionThreshold] or does not shrink, otherwise the
// gzip-base64-json wrapper (docs/protocol/messages.md#encoding-a-payload):
//
//	{"$ansightEncoding":"gzip-base64-json","contentType":"application/json",
//	 "originalByteCount":N,"compressedByteCount":M,"data":"<std base64 of the gzip bytes>"}
//
// The wrapper is used only when it is strictly smaller than compact. Only responses are
// encoded; a host never encodes requests (other SDKs cannot read them).
func EncodePayload(compact []byte) ([]byte, error) {
	if len(compact) < CompressionThreshold {
		return compact, nil
	}
	var out []byte
	err := compress(compact, false, func(gz []byte) {
		size := len(wrapperHead) + decimalLen(len(compact)) + len(wrapperMiddle) + decimalLen(len(gz)) +
			len(wrapperData) + base64.StdEncoding.EncodedLen(len(gz)) + len(wrapperTail)
		if size >= len(compact) {
			out = compact
			return
		}
		out = make([]byte, 0, size)
		out = append(out, wrapperHead...)
		out = strconv.AppendInt(out, int64(len(compact)), 10)
		out = append(out, wrapperMiddle...)
		out = strconv.AppendInt(out, int64(len(gz)), 10)
		out = append(out, wrapperData...)
		out = base64.StdEncoding.AppendEncode(out, gz)
		out = append(out, wrapperTail...)
	})
	return out, err
}

// compress gzips data with the pooled writers and hands the gzip bytes to use, which must
// not keep them: the stream closed, or with flush only flushed to a byte boundary (no final
// block, no trailer), for a Template.
func compress(data []byte, flush bool, use func(gz []byte)) error {
	buf := gzipBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			buf.Reset()
			gzipBuffers.Put(buf)
		}
	}()
	buf.Reset()
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(buf)
	_, err := zw.Write(data)
	end := zw.Close
	if flush {
		end = zw.Flush
	}
	if eerr := end(); err == nil {
		err = eerr
	}
	zw.Reset(io.Discard) // drop the reference to buf (an unfinished stream is dropped)
	gzipWriters.Put(zw)
	if err != nil {
		return err
	}
	use(buf.Bytes())
	return nil
}

func decimalLen(n int) int {
	l := 1
	for n >= 10 {
		n /= 10
		l++
	}
	return l
}

// DecodePayload returns the JSON payload that raw (an envelope's payload) stands for.
// Without a top-level "$ansightEncoding" member raw is returned as is (it was checked by
// [DecodeEnvelope]). With "gzip-base64-json" the data is base64-decoded, gunzipped and
// checked with the strict rules of [Unmarshal]; the result is a new slice. Any other
// encoding, a missing or non-string data member, bad base64, bad gzip, invalid JSON, and
// a declared (originalByteCount) or actual inflated size above maxInflated are a
// [*DecodeError]. Inflation stops as soon as the output passes maxInflated, whatever the
// wrapper declares, so a decompression bomb costs at most about maxInflated bytes.
// maxInflated ≤ 0 means [DefaultMaxInflatedBytes].
//
// To decode the payload into a Go value, use [UnmarshalPayload]: it checks the inflated
// JSON once, where DecodePayload followed by Unmarshal checks it twice.
func DecodePayload(raw []byte, maxInflated int64) ([]byte, error) {
	out, inflated, err := inflatePayload(raw, maxInflated)
	if err != nil || !inflated {
		return out, err
	}
	if err := scanStrict(out, nil); err != nil {
		return nil, inflatedError(err)
	}
	return out, nil
}

// UnmarshalPayload is [DecodePayload] followed by [Unmarshal] into v, in one strict pass
// over the inflated JSON. It returns the payload's JSON as DecodePayload does (raw itself
// when it is not wrapped), which is what v was decoded from. Every failure is a
// [*DecodeError]; for a wrapped payload, failures of the inflated JSON say so.
func UnmarshalPayload(raw []byte, maxInflated int64, v any) ([]byte, error) {
	return unmarshalPayload(raw, maxInflated, func(data []byte) error { return decodeStrict(data, v) })
}

// UnmarshalResultPayload is [UnmarshalPayload] into a Result whose Result member, in the
// common form, is a sub-slice of the returned payload rather than a copy of it: for a
// caller that keeps the payload anyway (the host's client returns both). raw must then
// not be modified while the Result is in use.
func UnmarshalResultPayload(raw []byte, maxInflated int64, r *Result) ([]byte, error) {
	return unmarshalPayload(raw, maxInflated, func(data []byte) error {
		s := getScanner(data)
		defer s.put()
		s.alias = true
		err := s.fast(resultShape, (*scanner).readResult)
		if err == nil {
			*r = s.result
		}
		if err != errSlowPath {
			return err
		}
		return decodeStrict(data, r)
	})
}

// unmarshalPayload unwraps raw and decodes the JSON with decode (a strict decoder).
func unmarshalPayload(raw []byte, maxInflated int64, decode func([]byte) error) ([]byte, error) {
	out, inflated, err := inflatePayload(raw, maxInflated)
	if err != nil {
		return nil, err
	}
	if err := decodeUnwrapped(out, inflated, decode); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeUnwrapped decodes a payload's JSON out with decode, inflated telling whether it
// was wrapped: the errors are UnmarshalPayload's.
func decodeUnwrapped(out []byte, inflated bool, decode func([]byte) error) error {
	var err error
	// The inflated size is bounded by maxInflated, not by the message limit.
	if !inflated && len(out) > DefaultMaxMessageBytes {
		err = tooLarge("input", len(out))
	} else {
		err = decode(out)
	}
	if err != nil && inflated {
		err = inflatedError(err)
	}
	return err
}

// inflatePayload unwraps raw without checking the inflated JSON; inflated reports whether
// raw was a wrapper (out is then a new slice).
func inflatePayload(raw []byte, maxInflated int64) (out []byte, inflated bool, err error) {
	if maxInflated <= 0 {
		maxInflated = DefaultMaxInflatedBytes
	}
	w, err := readWrapper(raw)
	if err != nil || w == nil {
		if err != nil {
			return nil, false, err
		}
		return raw, false, nil
	}
	if w.encoding != EncodingGzipBase64JSON {
		return nil, false, decodeError("/$ansightEncoding", -1, "unsupported payload encoding "+strconv.Quote(w.encoding))
	}
	if w.original > maxInflated {
		return nil, false, decodeError("/originalByteCount", -1, "declared inflated size "+strconv.FormatInt(w.original, 10)+
			" bytes exceeds the limit of "+strconv.FormatInt(maxInflated, 10))
	}
	f := inflaters.Get().(*inflater)
	defer f.put()
	out, err = f.inflate(w, maxInflated)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// inflatedError marks a decoding failure as one of the inflated JSON.
func inflatedError(err error) error {
	var de *DecodeError
	if !errors.As(err, &de) {
		return err
	}
	return &DecodeError{Path: de.Path, Offset: de.Offset, Msg: "inflated payload: " + de.Msg, Err: de.Err}
}

// wrapper is a parsed gzip-base64-json wrapper; data is the base64 text, unescaped.
type wrapper struct {
	encoding string
	original int64 // -1 when absent
	data     []byte
}

// readWrapper reads the top-level members of raw and returns the wrapper it is, or nil when
// raw has no "$ansightEncoding" member. Only names at the top level are read; nested values
// are skipped (syntax-checked by jsontext, nothing else).
func readWrapper(raw []byte) (*wrapper, error) {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	// Fast path: the member name starts with '$' or, escaped, with a backslash. Most
	// payloads hold neither byte, which two vectorized scans tell; looking for the
	// two-byte sequences restarts at every quote.
	if len(trimmed) == 0 || trimmed[0] != '{' ||
		bytes.IndexByte(raw, '$') < 0 && bytes.IndexByte(raw, '\\') < 0 ||
		(!bytes.Contains(raw, []byte(`"$`)) && !bytes.Contains(raw, []byte(`"\`))) {
		return nil, nil
	}
	s := getScanner(raw)
	defer s.put()
	var (
		w                      = wrapper{original: -1}
		encRaw, dataRaw, ctRaw []byte
		origRaw, compRaw       []byte
		hasEncoding            bool
		members                = [...]string{"$ansightEncoding", "contentType", "originalByteCount", "compressedByteCount", "data"}
		slots                  = [...]*[]byte{&encRaw, &ctRaw, &origRaw, &compRaw, &dataRaw}
		variant                string // a name equal to a member's only under case folding
	)
	if err := s.js.EnterObject(); err != nil {
		return nil, asDecodeError(err)
	}
	for i := 0; ; i++ {
		name, more, err := s.js.Member(i)
		if err != nil {
			return nil, asDecodeError(err)
		}
		if !more {
			break
		}
		slot := -1
		for i, m := range members {
			if string(name) == m {
				slot = i
			} else if variant == "" && bytes.EqualFold(name, []byte(m)) {
				variant = string(name)
			}
		}
		v, err := s.js.Value()
		if err != nil {
			return nil, asDecodeError(inPath(err, string(name)))
		}
		if slot >= 0 {
			*slots[slot] = v
			hasEncoding = hasEncoding || slot == 0
		}
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if variant != "" && (hasEncoding || bytes.EqualFold([]byte(variant), []byte(members[0]))) {
		return nil, decodeError("/"+variant, -1, "payload key "+strconv.Quote(variant)+" differs from a gzip-base64-json member name only by case")
	}
	if !hasEncoding {
		return nil, nil
	}

	enc, ok := jsonString(encRaw)
	if !ok {
		return nil, decodeError("/$ansightEncoding", -1, "payload encoding must be a string")
	}
	w.encoding = string(enc)
	if ctRaw != nil {
		ct, ok := jsonString(ctRaw)
		mt, _, _ := strings.Cut(string(ct), ";")
		if !ok || !strings.EqualFold(strings.TrimSpace(mt), "application/json") {
			return nil, decodeError("/contentType", -1, "unsupported payload content type "+string(ctRaw))
		}
	}
	for _, c := range []struct {
		raw  []byte
		name string
		dst  *int64
	}{{origRaw, "originalByteCount", &w.original}, {compRaw, "compressedByteCount", nil}} {
		if c.raw == nil {
			continue
		}
		n, err := strconv.ParseInt(string(c.raw), 10, 64)
		if err != nil || n < 0 {
			return nil, decodeError("/"+c.name, -1, c.name+" must be a non-negative integer, got "+string(c.raw[:min(len(c.raw), 32)]))
		}
		if c.dst != nil {
			*c.dst = n
		}
	}
	if dataRaw == nil {
		return nil, decodeError("/data", -1, "gzip-base64-json payload has no data")
	}
	if w.data, ok = jsonString(dataRaw); !ok {
		return nil, decodeError("/data", -1, "payload data must be a string")
	}
	return &w, nil
}

// jsonString returns the unescaped contents of a raw JSON value that the strict scan
// accepted (a wrapper member), when it is a string.
func jsonString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	return unquote(raw, bytes.IndexByte(raw, '\\') >= 0), true
}

// inflater holds the reusable state of one DecodePayload: the decoded gzip bytes, the gzip
// reader over them and the output scratch.
type inflater struct {
	gz     []byte   // the base64-decoded data
	chunks [][]byte // scratch for the inflated bytes, inflateChunk bytes each
	src    bytes.Reader
	zr     gzip.Reader
}

// inflateChunk is the unit in which inflated output is buffered.
const inflateChunk = 256 << 10

func (f *inflater) put() {
	if cap(f.gz) > maxPooledBuffer {
		f.gz = nil
	}
	if len(f.chunks) > maxPooledBuffer/inflateChunk {
		clear(f.chunks[maxPooledBuffer/inflateChunk:])
		f.chunks = f.chunks[:maxPooledBuffer/inflateChunk]
	}
	f.gz = f.gz[:0]
	f.src.Reset(nil)
	inflaters.Put(f)
}

// inflate base64-decodes w.data and gunzips it, reading at most limit+1 bytes.
func (f *inflater) inflate(w *wrapper, limit int64) ([]byte, error) {
	n := base64.StdEncoding.DecodedLen(len(w.data))
	if cap(f.gz) < n {
		f.gz = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(f.gz[:n], w.data)
	if err != nil {
		return nil, &DecodeError{Path: "/data", Offset: -1, Msg: "payload data is not valid base64: " + err.Error(), Err: err}
	}
	gz := f.gz[:n]
	if err := f.reset(gz); err != nil {
		return nil, err
	}
	// A payload that says how large it is (every SDK's does) is inflated straight into a
	// buffer of that size. The declared size is believed only as far as the compressed
	// bytes could make it true (deflate expands at most about 1032 times), so a false one
	// costs no more memory than a real bomb of the same size; a payload longer than it
	// says is inflated again the careful way.
	if d := w.original; d > 0 && d <= limit && d <= int64(n)*maxDeflateRatio {
		out, exact, err := f.inflateInto(make([]byte, d))
		if err != nil || exact {
			return out, err
		}
		if err := f.reset(gz); err != nil {
			return nil, err
		}
	}

	// Inflate into pooled fixed-size chunks, never trusting the declared size: memory is
	// taken only as real output arrives, and reading stops one byte past the limit, so a
	// bomb costs about the limit (once; the chunks are reused) and nothing is copied while
	// growing. The caller gets an exact-size copy: one allocation per payload.
	var total int64
	for {
		i, off := int(total/inflateChunk), int(total%inflateChunk)
		if i == len(f.chunks) {
			f.chunks = append(f.chunks, make([]byte, inflateChunk))
		}
		c := f.chunks[i][off:]
		c = c[:min(int64(len(c)), limit+1-total)]
		m, err := f.zr.Read(c)
		total += int64(m)
		if total > limit {
			return nil, decodeError("/data", -1, "inflated payload exceeds the limit of "+strconv.FormatInt(limit, 10)+" bytes")
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, gzipError(err)
		}
	}
	out := make([]byte, total)
	for i, rest := 0, out; len(rest) > 0; i++ {
		rest = rest[copy(rest, f.chunks[i]):]
	}
	return out, nil
}

// maxDeflateRatio bounds how many times deflate can expand its input (258 bytes per
// 2-bit code at best, with the block overhead), with some slack.
const maxDeflateRatio = 1100

func (f *inflater) reset(gz []byte) error {
	f.src.Reset(gz)
	if err := f.zr.Reset(&f.src); err != nil {
		return gzipError(err)
	}
	return nil
}

// inflateInto inflates into out. exact reports that the stream ended within out: the
// payload is out[:len]; otherwise it is longer than out and must be read again.
func (f *inflater) inflateInto(out []byte) (payload []byte, exact bool, err error) {
	m := 0
	for m < len(out) {
		k, err := f.zr.Read(out[m:])
		m += k
		if err == io.EOF {
			if m < len(out) { // shorter than declared: keep an exact copy, not the buffer
				out = append(make([]byte, 0, m), out[:m]...)
			}
			return out, true, nil
		}
		if err != nil {
			return nil, false, gzipError(err)
		}
	}
	var one [1]byte
	for range 8 { // a Read may return nothing and no error; not forever
		k, err := f.zr.Read(one[:])
		switch {
		case k > 0:
			return nil, false, nil
		case err == io.EOF:
			return out, true, nil
		case err != nil:
			return nil, false, gzipError(err)
		}
	}
	return nil, false, nil
}

func gzipError(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &DecodeError{Path: "/data", Offset: -1, Msg: "payload data is not valid gzip: " + err.Error(), Err: err}
}
