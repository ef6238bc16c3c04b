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
	// pieces says each stretch between two cuts (the first from the header) was deflated
	// on its own, referring back only to its window (NewStreamPieces): its bytes stand for
	// its text after that window wherever they are put.
	pieces bool
}

// streamCut is where a cut falls: after json bytes of the text, whose CRC-32 is crc, and
// gz bytes of the gzip stream; piece is the CRC-32 of the text since the cut before.
type streamCut struct {
	json, gz   int
	crc, piece uint32
	// window is how many bytes of the text before the piece its window held, whose
	// CRC-32 is windowCRC (NewStreamPieces).
	window    int
	windowCRC uint32
}

// NewStream compresses text up to the last of cuts, flushing at each of them. cuts must
// be increasing offsets in text, the first above 0; text after the last cut is not kept.
// The stream keeps no reference to text.
func NewStream(text []byte, cuts []int) (*Stream, error) {
	return newStream(text, cuts, false, nil, nil, nil)
}

// A catalog changes by a few tools at a time — a guard that shows or hides some, a tool
// registered — and its new answer text is the old one's but for a few entries and the
// head (the revision). NewStream compresses all of it again: the most CPU of such an
// answer, both ends counted. NewStreamPieces deflates each stretch between two cuts on its
// own, referring back only to the window the caller names (a few KiB of whole entries
// before it, or nothing), so that no match reaches further back across a cut and the
// compressed bytes of a stretch stand for its text after that window; a stretch that
// another stream of pieces holds after the same window is then copied from it, not
// compressed. The payloads are one gzip stream as before, which any reader reads (a
// deflate stream is any sequence of blocks, and each piece ends on a byte boundary after a
// sync flush); only the CRC-32s are taken over the new text. An empty window would cost
// the first matches of every piece (+31 % bytes for a thousand synthetic tools at 16 KiB
// pieces); a window costs compressing it again. FuzzStreamPieces holds the payloads
// against the text they stand for, whatever the reuse hints say.

// NewStreamPieces is NewStream, each stretch of text between two cuts (the first from its
// start) deflated on its own, with text[windows[i]:cuts[i-1]] (at most 32 KiB; empty
// when windows[i] is cuts[i-1] or windows is nil) as the dictionary of the stretch ending
// at cuts[i]. reuse, nil or one entry per cut, names for the piece ending at cuts[i] a
// piece of prev (a stream NewStreamPieces made) whose text and window are the same, or is
// negative: that piece's bytes are copied instead of compressed. A hint is checked
// against the piece's and its window's lengths and CRC-32s (one that does not match is
// compressed: the caller vouches for equality, the check catches a wrong hint); prev's
// first piece, which begins with the gzip header, can be named too.
func NewStreamPieces(text []byte, cuts, windows []int, prev *Stream, reuse []int) (*Stream, error) {
	if reuse != nil && len(reuse) != len(cuts) || windows != nil && len(windows) != len(cuts) {
		return nil, errors.New("wire: one reuse hint and one window per cut")
	}
	if prev != nil && !prev.pieces {
		prev, reuse = nil, nil // its stretches refer back across the cuts
	}
	return newStream(text, cuts, true, windows, prev, reuse)
}

func newStream(text []byte, cuts []int, pieces bool, windows []int, prev *Stream, reuse []int) (*Stream, error) {
	s := &Stream{cuts: make([]streamCut, 0, len(cuts)), pieces: pieces}
	// The gzip header, then raw deflate from the writers Template uses after a cut: one
	// compressor for both (the second Get finds the one the first put back), where a
	// gzip.Writer was a second compressor of about a megabyte to allocate and clear on a
	// cold answer. The bytes are a gzip.Writer's at the same level (TestStreamGzipBytes).
	var buf bytes.Buffer
	size := len(streamGzipHeader) + len(text)/8 // about what a catalog compresses to
	if prev != nil {
		size = len(prev.gz) + len(prev.gz)/8
	}
	buf.Grow(size)
	buf.Write(streamGzipHeader)
	zw := flateWriters.Get().(*flate.Writer)
	zw.Reset(&buf)
	defer func() {
		zw.ResetDict(io.Discard, nil) // drop the references to buf and to a window
		flateWriters.Put(zw)
	}()
	var crc uint32
	from := 0
	for i, cut := range cuts {
		if cut <= from || cut > len(text) {
			return nil, errors.New("wire: stream cuts must increase within the text")
		}
		piece := text[from:cut]
		c := streamCut{json: cut, crc: crc32.Update(crc, crc32.IEEETable, piece)}
		var window []byte
		if pieces {
			c.piece = crc32.ChecksumIEEE(piece)
			if windows != nil && i > 0 {
				if w := windows[i]; w < from && w >= max(0, from-maxMatchWindow) {
					window = text[w:from]
				} else if w != from {
					return nil, errors.New("wire: a piece's window must end where it starts, within 32 KiB")
				}
			}
			c.window, c.windowCRC = len(window), crc32.ChecksumIEEE(window)
		}
		if b := prev.piece(reuse, i, &c, len(piece)); b != nil {
			buf.Write(b)
		} else {
			if pieces && i > 0 {
				// Only the window, nothing else of the text before, is referred to.
				zw.ResetDict(&buf, window) // an empty one too: Reset would fill the last again
			}
			if _, err := zw.Write(piece); err != nil {
				return nil, err
			}
			if err := zw.Flush(); err != nil {
				return nil, err
			}
		}
		c.gz = buf.Len()
		s.cuts = append(s.cuts, c)
		crc, from = c.crc, cut
	}
	s.gz = slices.Clip(buf.Bytes())
	s.text = base64.StdEncoding.AppendEncode(nil, s.gz[:len(s.gz)/3*3])
	return s, nil
}

// Pieces reports whether s was made by NewStreamPieces: whether another stream can copy
// its pieces.
func (s *Stream) Pieces() bool { return s.pieces }

// piece returns the compressed bytes of the piece reuse[i] of s when it is one of s's and
// holds n bytes of text and a window as c says (their lengths and CRC-32s); else nil.
func (s *Stream) piece(reuse []int, i int, want *streamCut, n int) []byte {
	if s == nil || reuse == nil || reuse[i] < 0 || reuse[i] >= len(s.cuts) {
		return nil
	}
	k := reuse[i]
	c := s.cuts[k]
	start, json := len(streamGzipHeader), 0
	if k > 0 {
		start, json = s.cuts[k-1].gz, s.cuts[k-1].json
	}
	if c.json-json != n || c.piece != want.piece || c.window != want.window || c.windowCRC != want.windowCRC {
		return nil
	}
	return s.gz[start:c.gz]
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
