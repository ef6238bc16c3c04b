package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// FrameType is the kind of an ASFT frame (docs/protocol/artifacts.md#frame-layout).
type FrameType uint8

// The three ASFT frame types.
const (
	// FrameChunk carries the next bytes of a transfer.
	FrameChunk FrameType = 1
	// FrameComplete ends a transfer: empty payload, offset = total size.
	FrameComplete FrameType = 2
	// FrameError aborts a transfer; the payload is a UTF-8 message.
	FrameError FrameType = 3
)

// String returns "chunk", "complete", "error" or "FrameType(n)".
func (t FrameType) String() string {
	switch t {
	case FrameChunk:
		return "chunk"
	case FrameComplete:
		return "complete"
	case FrameError:
		return "error"
	}
	return fmt.Sprintf("FrameType(%d)", uint8(t))
}

// ASFT sizes (docs/protocol/artifacts.md#frame-layout).
const (
	// FrameHeaderSize is the size of the fixed ASFT header before the payload.
	FrameHeaderSize = 56
	// DefaultChunkSize is the payload size of a chunk frame unless a tool asks otherwise.
	DefaultChunkSize = 64 << 10
	// MaxChunkSize is the largest chunk payload AppendFrame writes.
	MaxChunkSize = 512 << 10
)

// asftVersion is the only ASFT version.
const asftVersion = 1

// Frame is one ASFT binary message: a 56-byte little-endian header and the payload.
type Frame struct {
	Type FrameType
	// TransferID is the transfer's 32 lower-case hex digits (see NewTransferID).
	TransferID string
	// Sequence counts the transfer's frames from 0.
	Sequence int32
	// Offset is the position of the payload's first byte in the file (for a complete
	// frame, the total size).
	Offset int64
	// Payload is the chunk's bytes or the error message; empty for a complete frame.
	Payload []byte
}

// IsASFT reports whether a binary message starts with the ASFT magic.
func IsASFT(msg []byte) bool { return len(msg) >= 4 && string(msg[:4]) == "ASFT" }

// AppendFrame appends f as one ASFT message. It refuses an unknown type, a malformed
// transfer id, a negative sequence or offset, a non-empty complete frame and a payload
// above MaxChunkSize.
func AppendFrame(dst []byte, f Frame) ([]byte, error) {
	if p := f.problem(); p != "" {
		return dst, errors.New("wire: " + p)
	}
	if len(f.Payload) > MaxChunkSize {
		return dst, fmt.Errorf("wire: ASFT payload of %d bytes exceeds %d", len(f.Payload), MaxChunkSize)
	}
	dst = append(dst, 'A', 'S', 'F', 'T', asftVersion, byte(f.Type), 0, 0)
	dst = append(dst, f.TransferID...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f.Sequence))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(f.Offset))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(f.Payload)))
	return append(dst, f.Payload...), nil
}

// ParseFrame reads one ASFT message: magic "ASFT", version 1, a known frame type, zero
// reserved bytes, a 32 lower-case hex transfer id, non-negative sequence and offset, a
// payload length equal to the bytes after the header, and an empty complete frame.
// Payload is a sub-slice of msg, not a copy. Failures are [*DecodeError]s (Offset is the
// header byte at fault when one is).
func ParseFrame(msg []byte) (Frame, error) {
	if len(msg) < FrameHeaderSize {
		return Frame{}, frameError(int64(len(msg)), fmt.Sprintf("ASFT message of %d bytes is shorter than the %d-byte header", len(msg), FrameHeaderSize))
	}
	if !IsASFT(msg) {
		return Frame{}, frameError(0, "not an ASFT frame (bad magic)")
	}
	if msg[4] != asftVersion {
		return Frame{}, frameError(4, fmt.Sprintf("unsupported ASFT version %d", msg[4]))
	}
	if t := FrameType(msg[5]); t != FrameChunk && t != FrameComplete && t != FrameError {
		return Frame{}, frameError(5, fmt.Sprintf("unknown ASFT frame type %d", msg[5]))
	}
	if msg[6] != 0 || msg[7] != 0 {
		return Frame{}, frameError(6, "ASFT reserved bytes are not zero")
	}
	length := int32(binary.LittleEndian.Uint32(msg[52:56]))
	if int64(length) != int64(len(msg)-FrameHeaderSize) {
		return Frame{}, frameError(52, fmt.Sprintf("ASFT payload length %d does not match the %d bytes after the header", length, len(msg)-FrameHeaderSize))
	}
	id := msg[8:40]
	if !isTransferID(id) {
		return Frame{}, frameError(8, "ASFT transfer id is not 32 lower-case hex digits")
	}
	f := Frame{
		Type:       FrameType(msg[5]),
		TransferID: string(id),
		Sequence:   int32(binary.LittleEndian.Uint32(msg[40:44])),
		Offset:     int64(binary.LittleEndian.Uint64(msg[44:52])),
		Payload:    msg[FrameHeaderSize:len(msg):len(msg)],
	}
	if p := f.problem(); p != "" {
		return Frame{}, frameError(-1, p)
	}
	return f, nil
}

// problem describes what is wrong with the header fields shared by AppendFrame and
// ParseFrame, or returns "".
func (f *Frame) problem() string {
	switch {
	case f.Type != FrameChunk && f.Type != FrameComplete && f.Type != FrameError:
		return fmt.Sprintf("unknown ASFT frame type %d", uint8(f.Type))
	case !isTransferID(f.TransferID):
		return "ASFT transfer id is not 32 lower-case hex digits"
	case f.Sequence < 0:
		return fmt.Sprintf("negative ASFT sequence %d", f.Sequence)
	case f.Offset < 0:
		return fmt.Sprintf("negative ASFT offset %d", f.Offset)
	case f.Type == FrameComplete && len(f.Payload) > 0:
		return "ASFT complete frame with a payload"
	case len(f.Payload) > math.MaxInt32:
		return "ASFT payload too large"
	}
	return ""
}

func frameError(offset int64, msg string) *DecodeError {
	return &DecodeError{Offset: offset, Msg: msg}
}

// isTransferID reports whether id is 32 lower-case hex digits.
func isTransferID[T ~string | ~[]byte](id T) bool {
	if len(id) != 32 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewTransferID returns a fresh random transfer id: 32 lower-case hex digits.
func NewTransferID() string { return randomHex() }
