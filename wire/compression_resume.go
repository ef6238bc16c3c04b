package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/flate"
)

// Two catalog answers of one app for two limits (or any two payloads one Stream wrote)
// are the same gzip bytes up to a cut, and a host that inflated the first need not
// inflate that stretch of the second again. A deflate decoder at the end of a block holds
// nothing but its position and the last 32 KiB it wrote: the next block starts from
// there, whatever came before. So while inflating a payload, gzipMemo records the end of
// every block (klauspost/compress/flate's end-of-block checkpoints); a later payload whose
// base64 text repeats the first one's up to such an end is inflated from there on, with
// the earlier JSON as the window, and the trailer's CRC-32 and size checked over the whole
// as the gzip reader checks them. That is exact, not a guess: the decoder's state at the
// end of a block depends on the bytes before it alone, and they are equal.
// FuzzCatalogMemo holds the result against UnmarshalPayload, the plain path.

// gzipMemo is what inflating a payload leaves for the next one: its base64 text and the
// ends of its deflate blocks.
type gzipMemo struct {
	data   []byte
	points []blockEnd
	copied int // the bytes of JSON copied from the memo before (stretchIndex), not inflated
}

// blockEnd is the end of a deflate block: the decoder has read the gzip bytes before byte
// c and bits bits of byte c, and written u bytes, whose CRC-32 is crc.
type blockEnd struct {
	c    int
	bits uint8
	u    int
	crc  uint32
}

// gzipHeader is the only gzip header inflateMemo reads: no name, comment, extra field or
// header CRC (FLG 0), which is what every SDK writes. Others take the plain path.
const gzipHeader = 10

// inflateMemo inflates the wrapper w as inflater.inflate does and returns the memo of it.
// With prev, the memo of an earlier payload inflated to prevJSON, it resumes at the last
// block end within the base64 text both share: out's first resumed bytes are prevJSON's.
// ok is false for anything it does not take
// (a header with flags, more than one gzip member, bad bytes, a size over the limit): the
// plain path then answers, errors included.
func inflateMemo(w *wrapper, limit int64, prev *gzipMemo, prevJSON []byte) (out []byte, memo *gzipMemo, resumed int, ok bool) {
	if w.original > limit || len(w.data)%4 != 0 || bytes.IndexByte(w.data, '\r') >= 0 || bytes.IndexByte(w.data, '\n') >= 0 {
		return nil, nil, 0, false // base64's line breaks, which the decoder skips, would shift the offsets
	}
	start, kept := blockEnd{c: gzipHeader}, 0
	if prev != nil {
		shared := commonPrefix(w.data, prev.data) / 4 * 3 // whole gzip bytes both texts hold
		for i := len(prev.points) - 1; i >= 0; i-- {
			p := prev.points[i]
			if need := p.c + int(min(p.bits, 1)); need <= shared && p.u <= len(prevJSON) {
				start, kept = p, i+1
				break
			}
		}
		// The shared text must not end in padding, which only the last quantum may hold.
		if kept > 0 && bytes.IndexByte(w.data[:start.c/3*4], '=') >= 0 {
			start, kept = blockEnd{c: gzipHeader}, 0
		}
	}
	from := start.c / 3 // the base64 quantum that holds byte start.c
	gz, err := base64.StdEncoding.AppendDecode(nil, w.data[from*4:])
	if err != nil {
		return nil, nil, 0, false
	}
	gz = gz[start.c-from*3:]
	if kept == 0 {
		head, err := base64.StdEncoding.AppendDecode(nil, w.data[:min(len(w.data), 16)])
		if err != nil || len(head) < gzipHeader || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 || head[3] != 0 {
			return nil, nil, 0, false
		}
	}

	size := start.u + 4*len(gz)
	if d := w.original; d > 0 && d <= int64(len(w.data))/4*3*maxDeflateRatio {
		size = int(d) // believed as far as the compressed bytes could make it true
	}
	if int64(start.u) > limit {
		return nil, nil, 0, false
	}
	out = make([]byte, start.u, max(min(int64(size), limit), int64(start.u))+1)
	copy(out, prevJSON[:start.u])
	var idx *stretchIndex
	if prev != nil && len(prev.points) > 1 {
		idx = &stretchIndex{prev: prev, json: prevJSON}
	}
	var ends []blockEnd
	copied := 0
	src := bytes.NewReader(gz)
	for at := start; ; {
		// Inflate from the block end at, up to the end or to a block end where a
		// stretch of prev's follows (skip), whose output is then copied.
		var skip *stretchSkip
		if out, skip, ok = inflateFrom(out, limit, gz, start.c, at, src, &ends, idx); !ok {
			return nil, nil, 0, false
		}
		if skip == nil {
			break
		}
		// The decoder read past the block end before it stopped: what it wrote there
		// is written again, from prev.
		out = out[:skip.at.u]
		from, to := prev.points[skip.from], prev.points[skip.to]
		if int64(len(out)+to.u-from.u) > limit {
			return nil, nil, 0, false
		}
		out = append(out, prevJSON[from.u:to.u]...)
		copied += to.u - from.u
		for _, p := range prev.points[skip.from+1 : skip.to+1] {
			ends = append(ends, blockEnd{c: skip.at.c + p.c - from.c, bits: p.bits, u: skip.at.u + p.u - from.u})
		}
		at = ends[len(ends)-1]
		if _, err := src.Seek(int64(at.c-start.c), io.SeekStart); err != nil {
			return nil, nil, 0, false
		}
	}
	if int64(len(out)) > limit || src.Len() != gzipTrailer {
		return nil, nil, 0, false
	}
	crc, at := start.crc, start.u
	for i := range ends {
		crc = crc32.Update(crc, crc32.IEEETable, out[at:ends[i].u])
		ends[i].crc, at = crc, ends[i].u
	}
	crc = crc32.Update(crc, crc32.IEEETable, out[at:])
	trailer := gz[len(gz)-gzipTrailer:]
	if binary.LittleEndian.Uint32(trailer) != crc || binary.LittleEndian.Uint32(trailer[4:]) != uint32(len(out)) {
		return nil, nil, 0, false
	}
	memo = &gzipMemo{data: slices.Clone(w.data), points: slices.Concat(prev.pointsTo(kept), ends), copied: copied}
	return out, memo, start.u, true
}

// storedEnd returns the end, in bits from the gzip stream's start, of the block that starts
// at bit at when it is a stored block; gz holds the stream from byte base on.
func storedEnd(gz []byte, base, at int) (int, bool) {
	i := at/8 - base
	if i < 0 || i+1 >= len(gz) {
		return 0, false
	}
	// BFINAL, then BTYPE (two bits, 00 for stored), least significant bit first.
	if typ := (uint(gz[i]) | uint(gz[i+1])<<8) >> (at%8 + 1) & 3; typ != 0 {
		return 0, false
	}
	a := (at+3+7)/8 - base // LEN and NLEN start on the next byte boundary
	if a < 0 || a+4 > len(gz) {
		return 0, false
	}
	n := int(binary.LittleEndian.Uint16(gz[a:]))
	return (a + base + 4 + n) * 8, true
}

// maxMatchWindow is how far back a deflate match may reach.
const maxMatchWindow = 32 << 10

// pointsTo returns the first n block ends (none of a nil memo).
func (m *gzipMemo) pointsTo(n int) []blockEnd {
	if m == nil {
		return nil
	}
	return m.points[:n]
}

// commonPrefix returns the length of the longest common prefix of a and b, comparing
// whole blocks first.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	const block = 4 << 10
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// After a catalog change the answer's head differs (another revision) and so does the
// compressed stream from its first bytes, but an app that copies its answer's compressed
// stretches from the last one (NewStreamPieces) sends most of the same bytes again, at
// other offsets. Inflating them is the host's largest share of such an answer. The
// decoder's state at a block end is its bit position and the last 32 KiB it wrote, so
// where the payload, at a block end, holds the bytes prev held from one of its block ends
// on, and the last 32 KiB written are the same bytes as prev's there, the decoder would
// write what prev's did up to the last block end both hold: that output is copied from
// prevJSON and inflating resumes after it. It is exact whatever wrote the payload (no
// stretch need be independent of what precedes it: the window is compared), and the
// trailer's CRC-32 and size are checked over the whole as before.

// stretchIndex finds, among prev's block ends, those the payload's bytes at a block end
// continue as prev's did.
type stretchIndex struct {
	prev *gzipMemo
	json []byte
	// Made by the first look (most payloads that resume are another limit's, which repeat
	// prev up to their end and look for nothing):
	made bool
	gz   []byte // prev's gzip bytes
	// byStart holds the block ends of prev on a byte boundary, by the 8 bytes that follow
	// them.
	byStart map[uint64][]int
}

// minStretch is the fewest gzip bytes worth a skip: each costs a decoder restart.
const minStretch = 512

func (x *stretchIndex) make() {
	x.made = true
	gz, err := base64.StdEncoding.AppendDecode(nil, x.prev.data)
	if err != nil {
		return
	}
	x.gz, x.byStart = gz, make(map[uint64][]int)
	for i, p := range x.prev.points[:len(x.prev.points)-1] {
		if p.bits == 0 && p.c+8 <= len(gz) && p.u <= len(x.json) {
			k := binary.LittleEndian.Uint64(gz[p.c:])
			x.byStart[k] = append(x.byStart[k], i)
		}
	}
}

// stretchSkip says that from the block end at on (a block end of the payload), the
// payload holds prev's bytes from its block end from to its block end to.
type stretchSkip struct {
	at       blockEnd
	from, to int
}

// find returns the skip at the payload's block end at, on a byte boundary, where rest is
// the payload's gzip bytes from there and window the last bytes written (all of them
// when fewer than 32 KiB); nil when prev holds nothing that far the same.
func (x *stretchIndex) find(at blockEnd, rest, window []byte) *stretchSkip {
	if len(rest) < minStretch {
		return nil
	}
	if !x.made {
		x.make()
	}
	for _, i := range x.byStart[binary.LittleEndian.Uint64(rest)] {
		p := x.prev.points[i]
		if len(window) < maxMatchWindow && p.u != at.u || p.u < len(window) ||
			!bytes.Equal(x.json[p.u-len(window):p.u], window) {
			continue // another state of the decoder
		}
		n := commonPrefix(rest, x.gz[p.c:])
		to := i
		for j := i + 1; j < len(x.prev.points); j++ {
			q := x.prev.points[j]
			if q.c+int(min(q.bits, 1))-p.c > n || q.u > len(x.json) {
				break
			}
			to = j
		}
		if to > i && x.prev.points[to].c-p.c >= minStretch {
			return &stretchSkip{at: at, from: i, to: to}
		}
	}
	return nil
}

// inflateFrom inflates gz (the gzip bytes from byte base on, read by src, which stands at
// at) from the block end at, appending to out and adding the block ends it passes to
// ends. With idx, it stops at the first block end where idx finds a skip and returns it;
// out then holds what was written up to there and possibly more. ok is false when the
// bytes do not inflate (or exceed limit).
func inflateFrom(out []byte, limit int64, gz []byte, base int, at blockEnd, src *bytes.Reader, ends *[]blockEnd, idx *stretchIndex) (_ []byte, skip *stretchSkip, ok bool) {
	window := out[max(0, at.u-maxMatchWindow):at.u]
	// The decoder's checkpoint after a stored block counts the bytes it held in its bit
	// buffer twice (klauspost/compress v1.20.4, dataBlock), and every later offset with
	// them. A stored block's end is known from its own header, though: the offsets are
	// corrected by what the decoder said too much there (nothing, once that is fixed).
	last, over := at.c*8+int(at.bits), 0 // the true end of the last block, in bits; the excess
	zr := flate.NewReaderOpts(src,
		flate.WithResumeFrom(flate.InflateCheckpoint{UncompressedOffset: int64(at.u), CompressedOffset: int64(at.c), BitOffset: at.bits, Window: window}),
		flate.WithEobCallback(func(cp flate.InflateCheckpoint) {
			if skip != nil || cp.Final {
				return // stopping: what follows is not read; or the end, where nothing resumes
			}
			said := int(cp.CompressedOffset)*8 + int(cp.BitOffset)
			end := said - over
			if stored, ok := storedEnd(gz, base, last); ok {
				end, over = stored, said-stored
			}
			last = end
			e := blockEnd{c: end / 8, bits: uint8(end % 8), u: int(cp.UncompressedOffset)}
			*ends = append(*ends, e)
			if idx != nil && e.bits == 0 && e.c-base < len(gz) {
				if skip = idx.find(e, gz[e.c-base:], cp.Window); skip != nil {
					src.Seek(0, io.SeekEnd) // the decoder stops at its next read
				}
			}
		}))
	for {
		if len(out) == cap(out) {
			if int64(len(out)) > limit {
				return nil, nil, false
			}
			out = slices.Grow(out, min(len(out), int(limit+1)-len(out)))
		}
		n, err := zr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if skip != nil && err != nil {
			// Stopped: whatever the decoder made of the bits it held, out holds all it
			// wrote up to the block end.
			return out, skip, len(out) >= skip.at.u
		}
		if err == io.EOF {
			return out, nil, true
		}
		if err != nil {
			return nil, nil, false
		}
	}
}
