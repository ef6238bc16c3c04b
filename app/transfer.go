package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ansight-go/ansight/internal/bpool"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// ChunkSize is the payload size of the ASFT chunk frames the runtime sends unless an
// artifact asks for another (WithChunkBytes).
const ChunkSize = wire.DefaultChunkSize

// The chunk sizes an artifact may ask for: the official SDKs' chunkBytes bounds.
const (
	MinChunkSize = 1 << 10
	MaxChunkSize = wire.MaxChunkSize
)

// ArtifactOption adjusts an artifact queued with Call.SendArtifact.
type ArtifactOption func(*transfer)

// WithChunkBytes sends the artifact in chunks of n bytes (the last one shorter), clamped to
// MinChunkSize..MaxChunkSize, as the official SDKs' chunkBytes argument does. The default is
// ChunkSize.
func WithChunkBytes(n int) ArtifactOption {
	return func(t *transfer) { t.chunk = max(MinChunkSize, min(n, MaxChunkSize)) }
}

// frameHeaderSize is the size of an ASFT frame header (docs/protocol/artifacts.md#frame-layout).
const frameHeaderSize = wire.FrameHeaderSize

// MessageWriter sends whole messages; transport.Conn is one. Write must not keep data
// after it returns.
type MessageWriter interface {
	Write(ctx context.Context, typ transport.MessageType, data []byte) error
}

// transfer is one queued artifact.
type transfer struct {
	id    string
	size  int64
	chunk int // payload bytes per chunk frame
	r     io.Reader
	once  sync.Once
}

// close releases the reader.
func (t *transfer) close() {
	t.once.Do(func() {
		if c, ok := t.r.(io.Closer); ok {
			_ = c.Close()
		}
	})
}

// frameBuffers recycles the buffers of frames and of reads of the default chunk size: one
// transfer needs one of each, 64 KiB plus a header. Other sizes are rare (a caller's
// chunkBytes) and get buffers of their own.
var frameBuffers = bpool.New(frameHeaderSize+ChunkSize, frameHeaderSize+ChunkSize)

// buffers returns a read and a frame buffer for t's chunk size, and a function that
// releases them.
func (t *transfer) buffers() (read, frame *[]byte, release func()) {
	if t.chunk != ChunkSize {
		r, f := make([]byte, t.chunk), make([]byte, 0, frameHeaderSize+t.chunk)
		return &r, &f, func() {}
	}
	read, frame = frameBuffers.Get(), frameBuffers.Get()
	return read, frame, func() { frameBuffers.Put(read); frameBuffers.Put(frame) }
}

// stream sends the transfer as ASFT frames: chunks, then complete; an error frame when
// the reader fails or yields a different number of bytes than announced. It returns the
// error of the connection, if any (an error frame is not an error of stream).
func (t *transfer) stream(ctx context.Context, w MessageWriter) error {
	defer t.close()
	readBuf, frameBuf, release := t.buffers()
	defer release()
	chunk := (*readBuf)[:t.chunk]

	var seq int32
	var off int64
	send := func(typ wire.FrameType, payload []byte) error {
		f, err := wire.AppendFrame((*frameBuf)[:0], wire.Frame{Type: typ, TransferID: t.id, Sequence: seq, Offset: off, Payload: payload})
		if err != nil {
			return err // cannot happen: the id is checked by SendArtifact, chunks are small
		}
		*frameBuf = f[:0]
		seq++
		return w.Write(ctx, transport.MessageBinary, f)
	}
	fail := func(msg string) error { return send(wire.FrameError, []byte(msg)) }

	if t.size < 0 {
		return fail(fmt.Sprintf("artifact has a negative size (%d)", t.size))
	}
	for {
		n, err := io.ReadFull(t.r, chunk)
		if n > 0 {
			if int64(n) > t.size-off {
				return fail(fmt.Sprintf("artifact is longer than the announced %d bytes", t.size))
			}
			if err := send(wire.FrameChunk, chunk[:n]); err != nil {
				return err
			}
			off += int64(n)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			if off != t.size {
				return fail(fmt.Sprintf("artifact ended after %d of the announced %d bytes", off, t.size))
			}
			return send(wire.FrameComplete, nil)
		default:
			return fail("reading the artifact failed: " + err.Error())
		}
	}
}
