package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// A catalog answer is sent again and again while the catalog does not change, and only
// one short stretch near its end changes between two answers: evaluatedAtUtc, the time of
// the query. A Template compresses everything before that stretch once; each payload is
// that compressed head followed by the stretch and the rest in stored (uncompressed)
// deflate blocks, which costs a copy and a CRC-32 of a few dozen bytes instead of a
// compression of the whole. Any gzip reader reads it: a deflate stream may mix compressed
// and stored blocks, and the head ends on a byte boundary (a sync flush).
//
// The reader can use the shape too ([SharedPrefix]): a payload whose compressed bytes
// repeat those of an earlier one up to its stored blocks holds the earlier JSON up to
// there, and only the stored bytes are new.

// Deflate's stored blocks: a header byte (BFINAL in bit 0, BTYPE 00, then padding to the
// byte boundary), LEN and its ones' complement NLEN (little-endian), then LEN bytes.
const (
	storedHeader   = 5
	maxStoredBlock = 0xffff
	gzipTrailer    = 8 // CRC-32 and ISIZE of the uncompressed data, little-endian
)

// syncMarker ends a deflate stream flushed to a byte boundary: an empty stored block.
var syncMarker = []byte{0x00, 0x00, 0xff, 0xff}

// Template is a payload made of a fixed head, a middle given for each payload, and a fixed
// tail; see NewTemplate. It is safe for concurrent use.
type Template struct {
	// head is kept as is while payloads may be sent uncompressed (a small head); a large
	// one only compressed, in gz.
	head    []byte
	headLen int
	tail    []byte

	once sync.Once
	gz   compressedHead
	err  error
}

// compressedHead is a template's head as gzip bytes that stop on a byte boundary after a
// sync flush (no final block, no trailer), kept as the base64 text of its first 3k bytes
// and the 0–2 bytes after them, so that a payload needs to encode only what follows.
type compressedHead struct {
	text   []byte // base64 of the first len(text)/4*3 gzip bytes
	rest   []byte // the remaining gzip bytes of the head (fewer than 3)
	size   int    // all gzip bytes of the head
	crc    uint32 // CRC-32 of the head's JSON
	length int    // length of the head's JSON
}

// NewTemplate returns a template of payloads head + middle + tail. It keeps copies: the
// caller may reuse head and tail. A head that makes every payload large enough to be
// compressed is compressed at once and kept only in that form.
func NewTemplate(head, tail []byte) (*Template, error) {
	t := &Template{headLen: len(head), tail: slices.Clone(tail)}
	if len(head)+len(tail) < CompressionThreshold {
		t.head = slices.Clone(head)
		return t, nil
	}
	t.once.Do(func() { t.gz, t.err = compressHead(head) })
	if t.err != nil {
		return nil, t.err
	}
	if size, _ := t.wrapperSize(0); size >= len(head)+len(t.tail) {
		t.head = slices.Clone(head) // it does not compress: payloads go as they are
	}
	return t, nil
}

// wrapperSize is the size of the wrapper of a payload with a middle of m bytes and the
// size of its gzip bytes.
func (t *Template) wrapperSize(m int) (size, gzSize int) {
	stored := m + len(t.tail)
	blocks := max(1, (stored+maxStoredBlock-1)/maxStoredBlock)
	gzSize = t.gz.size + blocks*storedHeader + stored + gzipTrailer
	n := t.headLen + stored
	return len(wrapperHead) + decimalLen(n) + len(wrapperMiddle) + decimalLen(gzSize) +
		len(wrapperData) + base64.StdEncoding.EncodedLen(gzSize) + len(wrapperTail), gzSize
}

// AppendPayload appends to dst the payload to send for the compact JSON head + middle +
// tail, by EncodePayload's rule: the JSON itself when it is shorter than
// [CompressionThreshold] or the wrapper would not be smaller, else a gzip-base64-json
// wrapper. The wrapper's gzip stream is the head compressed once per template, then middle
// and tail in stored blocks (so a long, compressible middle may make it larger than
// EncodePayload's).
func (t *Template) AppendPayload(dst, middle []byte) ([]byte, error) {
	n := t.headLen + len(middle) + len(t.tail)
	if n < CompressionThreshold {
		return appendPlain(dst, t.head, middle, t.tail), nil
	}
	t.once.Do(func() { t.gz, t.err = compressHead(t.head) })
	if t.err != nil {
		return nil, t.err
	}
	h := &t.gz
	size, gzSize := t.wrapperSize(len(middle))
	if size >= n {
		// A head that does not compress, or a huge middle: send the JSON, inflating the
		// head when it was not kept.
		head := t.head
		if head == nil {
			var err error
			if head, err = h.inflate(); err != nil {
				return nil, err
			}
		}
		return appendPlain(dst, head, middle, t.tail), nil
	}

	// What follows the head's text: its last bytes, the stored blocks, the trailer.
	end := make([]byte, 0, len(h.rest)+gzSize-h.size)
	end = append(end, h.rest...)
	data := appendPlain(nil, middle, t.tail)
	for off := 0; ; {
		m := min(len(data)-off, maxStoredBlock)
		final := byte(0)
		if off+m == len(data) {
			final = 1
		}
		end = append(end, final)
		end = binary.LittleEndian.AppendUint16(end, uint16(m))
		end = binary.LittleEndian.AppendUint16(end, ^uint16(m))
		end = append(end, data[off:off+m]...)
		if off += m; final == 1 {
			break
		}
	}
	end = binary.LittleEndian.AppendUint32(end, crc32.Update(h.crc, crc32.IEEETable, data))
	end = binary.LittleEndian.AppendUint32(end, uint32(n))

	dst = slices.Grow(dst, size)
	dst = append(dst, wrapperHead...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, wrapperMiddle...)
	dst = strconv.AppendInt(dst, int64(gzSize), 10)
	dst = append(dst, wrapperData...)
	dst = append(dst, h.text...)
	dst = base64.StdEncoding.AppendEncode(dst, end)
	return append(dst, wrapperTail...), nil
}

func appendPlain(dst []byte, parts ...[]byte) []byte {
	for _, p := range parts {
		dst = append(dst, p...)
	}
	return dst
}

// compressHead compresses head, flushing to a byte boundary instead of closing.
func compressHead(head []byte) (compressedHead, error) {
	var h compressedHead
	err := compress(head, true, func(gz []byte) {
		aligned := len(gz) / 3 * 3
		h = compressedHead{
			text:   base64.StdEncoding.AppendEncode(nil, gz[:aligned]),
			rest:   slices.Clone(gz[aligned:]),
			size:   len(gz),
			crc:    crc32.ChecksumIEEE(head),
			length: len(head),
		}
	})
	return h, err
}

// inflate returns the head's JSON back: the gzip bytes, closed by an empty final stored
// block and the trailer, inflated.
func (h *compressedHead) inflate() ([]byte, error) {
	gz, err := base64.StdEncoding.AppendDecode(nil, h.text)
	if err != nil {
		return nil, err
	}
	gz = append(append(gz, h.rest...), 1, 0, 0, 0xff, 0xff)
	gz = binary.LittleEndian.AppendUint32(gz, h.crc)
	gz = binary.LittleEndian.AppendUint32(gz, uint32(h.length))
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// SharedPrefix is the compressed head of a gzip-base64-json payload that a [Template]
// wrote: what later payloads of the same template repeat. See PrefixOf. It is safe for
// concurrent use.
type SharedPrefix struct {
	compressedHead
	// head is the head's JSON, whose CRC-32 is taken when a later payload is first
	// compared: a payload that is never repeated does not pay for it.
	head    []byte
	crcOnce sync.Once
}

// maxSharedTail bounds the stored bytes PrefixOf looks for at the end of a payload: a
// template's middle and tail are a few dozen bytes, and the search tries each length.
const maxSharedTail = 4096

// PrefixOf returns the shared prefix of raw, a payload that DecodePayload or
// UnmarshalPayload decoded to inflated: non-nil when raw is a gzip-base64-json wrapper whose
// gzip stream ends with a sync flush, one final stored block of at most 4096 bytes and the
// trailer, the block holding the end of inflated — the shape a Template writes. The prefix
// keeps inflated, which must not be modified.
func PrefixOf(raw, inflated []byte) *SharedPrefix {
	w, err := readWrapper(raw)
	if err != nil || w == nil || len(w.data)%4 != 0 {
		return nil
	}
	// Only the end of the gzip stream is needed: decode the base64 text from a quantum
	// boundary before the largest stored block looked for.
	from := max(0, len(w.data)-(maxSharedTail+storedHeader+len(syncMarker)+gzipTrailer+3)/3*4-4)
	end, err := base64.StdEncoding.AppendDecode(nil, w.data[from:])
	if err != nil {
		return nil
	}
	gzSize := from/4*3 + len(end)
	for l := 0; l <= min(maxSharedTail, len(inflated)); l++ {
		block := len(end) - gzipTrailer - l - storedHeader // where the final block starts
		if block < len(syncMarker) {
			break
		}
		if end[block] != 1 || binary.LittleEndian.Uint16(end[block+1:]) != uint16(l) ||
			binary.LittleEndian.Uint16(end[block+3:]) != ^uint16(l) ||
			!bytes.Equal(end[block-len(syncMarker):block], syncMarker) ||
			!bytes.Equal(end[block+storedHeader:block+storedHeader+l], inflated[len(inflated)-l:]) {
			continue
		}
		headSize := gzSize - (len(end) - block) // gzip bytes before the final block
		aligned := headSize / 3 * 3
		if aligned < from/4*3 {
			return nil // cannot happen: from leaves room for the largest block
		}
		head := inflated[:len(inflated)-l]
		return &SharedPrefix{compressedHead: compressedHead{
			text:   slices.Clone(w.data[:aligned/3*4]),
			rest:   slices.Clone(end[aligned-from/4*3 : block]),
			size:   headSize,
			length: len(head),
		}, head: head}
	}
	return nil
}

// Len returns the length of the JSON the prefix stands for.
func (p *SharedPrefix) Len() int { return p.length }

// Tail reports whether raw is a gzip-base64-json payload made of the same compressed head
// followed by one final stored block and the trailer, and returns the block's bytes: raw's
// JSON is then the prefix's JSON followed by tail, which the trailer's CRC-32 and size
// confirm. It checks the wrapper as DecodePayload does, and refuses what DecodePayload
// would (a declared or actual size above maxInflated, ≤ 0 meaning
// DefaultMaxInflatedBytes); tail's JSON is not checked. When ok is false, decode raw in
// full: that reports any error.
func (p *SharedPrefix) Tail(raw []byte, maxInflated int64) (tail []byte, ok bool) {
	if maxInflated <= 0 {
		maxInflated = DefaultMaxInflatedBytes
	}
	w, err := readWrapper(raw)
	if err != nil || w == nil || w.encoding != EncodingGzipBase64JSON || w.original > maxInflated ||
		!bytes.HasPrefix(w.data, p.text) {
		return nil, false
	}
	end, err := base64.StdEncoding.AppendDecode(nil, w.data[len(p.text):])
	if err != nil || !bytes.HasPrefix(end, p.rest) {
		return nil, false
	}
	end = end[len(p.rest):]
	if len(end) < storedHeader+gzipTrailer || end[0] != 1 {
		return nil, false
	}
	l := int(binary.LittleEndian.Uint16(end[1:]))
	if binary.LittleEndian.Uint16(end[3:]) != ^uint16(l) || len(end) != storedHeader+l+gzipTrailer {
		return nil, false
	}
	tail = end[storedHeader : storedHeader+l]
	trailer := end[storedHeader+l:]
	total := int64(p.length) + int64(l)
	p.crcOnce.Do(func() { p.crc = crc32.ChecksumIEEE(p.head) })
	if total > maxInflated || binary.LittleEndian.Uint32(trailer[4:]) != uint32(total) ||
		binary.LittleEndian.Uint32(trailer) != crc32.Update(p.crc, crc32.IEEETable, tail) {
		return nil, false
	}
	return tail, true
}
