package wire

import (
	"encoding/binary"
	"fmt"
	"time"
)

// ASJPHeaderSize is the size of the fixed header of a live screenshot frame.
const ASJPHeaderSize = 28

// ASJPFormatJPEG is the only image format of ASJP frames.
const ASJPFormatJPEG = 1

// ASJP flag bits (header byte 7).
const (
	// ASJPFlagKeyboardKnown says the app knows whether an on-screen keyboard is shown.
	ASJPFlagKeyboardKnown = 1 << 0
	// ASJPFlagKeyboardVisible says an on-screen keyboard is shown (meaningful only with
	// ASJPFlagKeyboardKnown).
	ASJPFlagKeyboardVisible = 1 << 1
)

// ASJPFrame is one live screenshot frame ("ASJP"): binary messages an app streams to the
// host outside the tool protocol. All integers are little-endian:
//
//	0..3 "ASJP" | 4 version 1 | 5 format | 6 quality | 7 flags |
//	8..15 capture time, Unix ms | 16..19 width | 20..23 height | 24..27 JPEG length | JPEG
type ASJPFrame struct {
	Format     uint8
	Quality    uint8
	Flags      uint8
	CapturedAt time.Time // UTC, millisecond precision
	Width      int32
	Height     int32
	// JPEG is the image, a sub-slice of the message.
	JPEG []byte
}

// KeyboardVisible reports whether an on-screen keyboard is shown, and whether the app
// knows.
func (f *ASJPFrame) KeyboardVisible() (visible, known bool) {
	return f.Flags&ASJPFlagKeyboardVisible != 0, f.Flags&ASJPFlagKeyboardKnown != 0
}

// IsASJP reports whether a binary message starts with the ASJP magic.
func IsASJP(msg []byte) bool { return len(msg) >= 4 && string(msg[:4]) == "ASJP" }

// ParseASJP reads a live screenshot frame: magic, version 1, non-negative width and
// height, and a JPEG length equal to the bytes after the header. Unknown formats and flag
// bits are accepted (the caller decides what it can show). Failures are [*DecodeError]s.
func ParseASJP(msg []byte) (ASJPFrame, error) {
	switch {
	case len(msg) < ASJPHeaderSize:
		return ASJPFrame{}, frameError(int64(len(msg)), fmt.Sprintf("ASJP message of %d bytes is shorter than the %d-byte header", len(msg), ASJPHeaderSize))
	case !IsASJP(msg):
		return ASJPFrame{}, frameError(0, "not an ASJP frame (bad magic)")
	case msg[4] != 1:
		return ASJPFrame{}, frameError(4, fmt.Sprintf("unsupported ASJP version %d", msg[4]))
	}
	f := ASJPFrame{
		Format:     msg[5],
		Quality:    msg[6],
		Flags:      msg[7],
		CapturedAt: time.UnixMilli(int64(binary.LittleEndian.Uint64(msg[8:16]))).UTC(),
		Width:      int32(binary.LittleEndian.Uint32(msg[16:20])),
		Height:     int32(binary.LittleEndian.Uint32(msg[20:24])),
		JPEG:       msg[ASJPHeaderSize:len(msg):len(msg)],
	}
	if f.Width < 0 || f.Height < 0 {
		return ASJPFrame{}, frameError(16, fmt.Sprintf("negative ASJP image size %dx%d", f.Width, f.Height))
	}
	if n := int32(binary.LittleEndian.Uint32(msg[24:28])); int64(n) != int64(len(f.JPEG)) {
		return ASJPFrame{}, frameError(24, fmt.Sprintf("ASJP image length %d does not match the %d bytes after the header", n, len(f.JPEG)))
	}
	return f, nil
}

// AppendASJP appends f as one ASJP message (the SDK side of live screenshots; also used
// by tests of hosts).
func AppendASJP(dst []byte, f ASJPFrame) ([]byte, error) {
	if f.Width < 0 || f.Height < 0 || int64(len(f.JPEG)) > 1<<31-1 {
		return dst, fmt.Errorf("wire: invalid ASJP frame: %dx%d, %d image bytes", f.Width, f.Height, len(f.JPEG))
	}
	dst = append(dst, 'A', 'S', 'J', 'P', 1, f.Format, f.Quality, f.Flags)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(f.CapturedAt.UnixMilli()))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Width))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Height))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(f.JPEG)))
	return append(dst, f.JPEG...), nil
}
