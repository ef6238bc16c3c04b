package app

// Temporary ASFT frame writer until the wire package's codec lands (wire.AppendFrame,
// wire.NewTransferID); the layout is spec §9.

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
)

type frameType uint8

const (
	frameChunk    frameType = 1
	frameComplete frameType = 2
	frameError    frameType = 3
)

func appendFrame(dst []byte, typ frameType, id string, seq int32, off int64, payload []byte) []byte {
	var h [frameHeaderSize]byte
	copy(h[0:4], "ASFT")
	h[4] = 1
	h[5] = byte(typ)
	copy(h[8:40], id)
	binary.LittleEndian.PutUint32(h[40:44], uint32(seq))
	binary.LittleEndian.PutUint64(h[44:52], uint64(off))
	binary.LittleEndian.PutUint32(h[52:56], uint32(len(payload)))
	dst = append(dst, h[:]...)
	return append(dst, payload...)
}

func newTransferID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
