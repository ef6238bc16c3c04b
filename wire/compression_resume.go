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

	var ends []blockEnd
	src := bytes.NewReader(gz)
	var window []byte
	if kept > 0 {
		window = prevJSON[max(0, start.u-maxMatchWindow):start.u]
	}
	// The decoder's checkpoint after a stored block counts the bytes it held in its bit
	// buffer twice (klauspost/compress v1.20.4, dataBlock), and every later offset with
	// them. A stored block's end is known from its own header, though: the offsets are
	// corrected by what the decoder said too much there (nothing, once that is fixed).
	last, over := start.c*8+int(start.bits), 0 // the true end of the last block, in bits; the excess
	zr := flate.NewReaderOpts(src,
		flate.WithResumeFrom(flate.InflateCheckpoint{UncompressedOffset: int64(start.u), CompressedOffset: int64(start.c), BitOffset: start.bits, Window: window}),
		flate.WithEobCallback(func(cp flate.InflateCheckpoint) {
			said := int(cp.CompressedOffset)*8 + int(cp.BitOffset)
			end := said - over
			if stored, ok := storedEnd(gz, start.c, last); ok {
				end, over = stored, said-stored
			}
			last = end
			ends = append(ends, blockEnd{c: end / 8, bits: uint8(end % 8), u: int(cp.UncompressedOffset)})
		}))
	size := start.u + 4*len(gz)
	if d := w.original; d > 0 && d <= int64(len(w.data))/4*3*maxDeflateRatio {
		size = int(d) // believed as far as the compressed bytes could make it true
	}
	if int64(start.u) > limit {
		return nil, nil, 0, false
	}
	out = make([]byte, start.u, max(min(int64(size), limit), int64(start.u))+1)
	copy(out, prevJSON[:start.u])
	for {
		if len(out) == cap(out) {
			if int64(len(out)) > limit {
				return nil, nil, 0, false
			}
			out = slices.Grow(out, min(len(out), int(limit+1)-len(out)))
		}
		n, err := zr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
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
	memo = &gzipMemo{data: slices.Clone(w.data), points: slices.Concat(prev.pointsTo(kept), ends)}
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
