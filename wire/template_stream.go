package wire

import (
	"bytes"
	"encoding/base64"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// A catalog answer for the first L tools of a catalog is, up to its L-th tool, the answer
// for any larger L: a host that pages or narrows its queries gets answers that share all
// but their last stretch. Compressing each anew costs a whole compression per answer (a
// quarter of the process CPU of a first definitions query at 1,000 tools). A Stream
// compresses the long text once, flushing to a byte boundary at chosen cuts (a sync
// flush), and keeps where each cut falls in the gzip bytes and the CRC-32 of the text
// before it; [Stream.Template] makes a [Template] whose head is the text up to a cut
// followed by more JSON, reusing the compressed bytes up to the cut and compressing only
// the rest. The payload is one gzip stream that any reader reads: after a sync flush the
// deflate stream is on a byte boundary between blocks, and the blocks compressed afterwards
// just do not refer back across the cut (deflate does not require them to).
// FuzzStreamTemplate holds the payloads against the plain encoding of the same JSON.

// Stream is a JSON text compressed once, flushed at chosen cuts; see NewStream. It is safe
// for concurrent use.
type Stream struct {
	gz   []byte // the gzip header and the deflate blocks up to the last cut, no final block
	text []byte // base64 of gz[:len(gz)/3*3]
	cuts []streamCut
}

// streamCut is where a cut falls: after json bytes of the text, whose CRC-32 is crc, and
// gz bytes of the gzip stream.
type streamCut struct {
	json, gz int
	crc      uint32
}

// NewStream compresses text up to the last of cuts, flushing at each of them. cuts must
// be increasing offsets in text, the first above 0; text after the last cut is not kept.
// The stream keeps no reference to text.
func NewStream(text []byte, cuts []int) (*Stream, error) {
	s := &Stream{cuts: make([]streamCut, 0, len(cuts))}
	// The gzip header, then raw deflate from the writers Template uses after a cut: one
	// compressor for both (the second Get finds the one the first put back), where a
	// gzip.Writer was a second compressor of about a megabyte to allocate and clear on a
	// cold answer. The bytes are a gzip.Writer's at the same level (TestStreamGzipBytes).
	var buf bytes.Buffer
	buf.Write(streamGzipHeader)
	zw := flateWriters.Get().(*flate.Writer)
	zw.Reset(&buf)
	defer func() {
		zw.Reset(io.Discard) // drop the reference to buf
		flateWriters.Put(zw)
	}()
	var crc uint32
	from := 0
	for _, cut := range cuts {
		if cut <= from || cut > len(text) {
			return nil, errors.New("wire: stream cuts must increase within the text")
		}
		if _, err := zw.Write(text[from:cut]); err != nil {
			return nil, err
		}
		if err := zw.Flush(); err != nil {
			return nil, err
		}
		crc = crc32.Update(crc, crc32.IEEETable, text[from:cut])
		s.cuts = append(s.cuts, streamCut{json: cut, gz: buf.Len(), crc: crc})
		from = cut
	}
	s.gz = slices.Clip(buf.Bytes())
	s.text = base64.StdEncoding.AppendEncode(nil, s.gz[:len(s.gz)/3*3])
	return s, nil
}

// Template returns the template of payloads text[:cut] + head + middle + tail, where text
// is the stream's text and cut one of the cuts it was made with: the compressed bytes up to
// the cut are the stream's, head is compressed after them. Its payloads are what
// NewTemplate(text[:cut]+head, tail) would make of the same middle, but for how the head
// is compressed.
func (s *Stream) Template(cut int, head, tail []byte) (*Template, error) {
	i, found := slices.BinarySearchFunc(s.cuts, cut, func(c streamCut, n int) int { return c.json - n })
	if !found {
		return nil, errors.New("wire: not a cut of the stream")
	}
	c := s.cuts[i]
	aligned := c.gz / 3 * 3
	more := slices.Clone(s.gz[aligned:c.gz]) // the prefix's last gzip bytes, then the head's
	if len(head) > 0 {
		var err error
		if more, err = appendDeflated(more, head); err != nil {
			return nil, err
		}
	}
	moreAligned := len(more) / 3 * 3
	text := make([]byte, 0, aligned/3*4+base64.StdEncoding.EncodedLen(moreAligned))
	text = append(text, s.text[:aligned/3*4]...)
	t := &Template{headLen: cut + len(head), tail: slices.Clone(tail)}
	t.gz = compressedHead{
		text:   base64.StdEncoding.AppendEncode(text, more[:moreAligned]),
		rest:   more[moreAligned:],
		size:   aligned + len(more),
		crc:    crc32.Update(c.crc, crc32.IEEETable, head),
		length: t.headLen,
	}
	t.once.Do(func() {}) // the head is compressed already
	if t.headLen+len(t.tail) < CompressionThreshold {
		// Payloads this small go as they are: keep the head's JSON (a stream this short
		// is not what streams are for, but it must work).
		var err error
		if t.head, err = t.gz.inflate(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// streamGzipHeader is the header a gzip.Writer at the payloads' level writes (no name,
// comment or time).
var streamGzipHeader = func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, compressionLevel) // the level is valid
	_ = zw.Flush()                                     // the header, then an empty sync block
	return slices.Clip(b.Bytes()[:gzipHeader])
}()

// flateWriters are raw deflate writers at the payloads' level, for what follows a cut.
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(io.Discard, compressionLevel) // the level is valid
	return w
}}

// appendDeflated appends to dst data deflated in blocks flushed to a byte boundary (no
// final block).
func appendDeflated(dst, data []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	zw := flateWriters.Get().(*flate.Writer)
	zw.Reset(buf)
	_, err := zw.Write(data)
	if ferr := zw.Flush(); err == nil {
		err = ferr
	}
	zw.Reset(io.Discard) // drop the reference to buf
	flateWriters.Put(zw)
	return buf.Bytes(), err
}
