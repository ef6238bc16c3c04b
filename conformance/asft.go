package conformance

import (
	"bytes"
	"context"
	"fmt"

	"github.com/ansight-go/ansight/wire"
)

// transfer is one ASFT transfer announced by a response, followed frame by frame.
type transfer struct {
	id        string
	size      int64 // announced sizeBytes, -1 when not announced
	requestID string
	// nextSeq and offset are what the next frame must carry.
	nextSeq int32
	offset  int64
	frames  int
	// done is set by the complete or error frame; failed holds the error frame's message.
	done     bool
	failed   string
	problems []string
	// head is the start of the content (magic numbers: is a jpeg a JPEG?).
	head []byte
}

// announce registers the transfers a response's payload announces (descriptors anywhere
// in it: results, batch items, evidence).
func (r *run) announce(p *response) {
	if p.val == nil {
		return
	}
	reqID := p.replyTo()
	for _, d := range descriptors(p.val, nil) {
		id, _ := d["transferId"].(string)
		if id == "" {
			continue
		}
		if _, dup := r.transfers[id]; dup {
			r.frameLog = append(r.frameLog, fmt.Sprintf("transfer %s is announced by more than one response", id))
			continue
		}
		size := int64(-1)
		if f, ok := d["sizeBytes"].(float64); ok {
			size = int64(f)
		}
		t := &transfer{id: id, size: size, requestID: reqID}
		r.transfers[id] = t
		if early := r.early[id]; len(early) > 0 {
			t.problems = append(t.problems, fmt.Sprintf("%d frame(s) of transfer %s arrived before the response that announces it (docs/protocol/artifacts.md#sending)", len(early), id))
			delete(r.early, id)
			for _, f := range early {
				t.follow(f)
			}
		}
	}
}

// descriptors returns the ASFT transfer descriptors found anywhere in v.
func descriptors(v any, out []map[string]any) []map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if v["deliveryMode"] == wire.DeliveryModeWebSocketBinary && v["wireProtocol"] == wire.FileTransferProtocol {
			out = append(out, v)
		}
		for _, x := range v {
			out = descriptors(x, out)
		}
	case []any:
		for _, x := range v {
			out = descriptors(x, out)
		}
	}
	return out
}

// frame follows one binary message.
func (r *run) frame(data []byte) {
	f, err := wire.ParseFrame(data)
	if err != nil {
		r.frameLog = append(r.frameLog, fmt.Sprintf("a binary message is not a valid ASFT frame: %v", err))
		return
	}
	h := frameHead{typ: f.Type, seq: f.Sequence, offset: f.Offset, size: len(f.Payload)}
	switch {
	case f.Type == wire.FrameError:
		h.message = string(f.Payload)
	case f.Type == wire.FrameChunk && f.Offset == 0:
		h.head = bytes.Clone(f.Payload[:min(len(f.Payload), headBytes)])
	}
	t := r.transfers[f.TransferID]
	if t == nil {
		// Kept (headers only) until a response announces the transfer.
		if r.earlyFrames < maxEarlyFrames {
			r.earlyFrames++
			r.early[f.TransferID] = append(r.early[f.TransferID], h)
		}
		return
	}
	t.follow(h)
}

// maxEarlyFrames bounds the frames kept for transfers not announced (yet).
const maxEarlyFrames = 4096

// frameHead is what the suite keeps of a frame: its header, its payload's size, for an
// error frame its message, and for the first chunk the content's first bytes.
type frameHead struct {
	typ     wire.FrameType
	seq     int32
	offset  int64
	size    int
	message string
	head    []byte
}

// headBytes is how much of a transfer's content the suite keeps.
const headBytes = 8

// follow checks one frame of t against the frames before it.
func (t *transfer) follow(f frameHead) {
	t.frames++
	bad := func(format string, args ...any) {
		t.problems = append(t.problems, fmt.Sprintf("transfer %s frame %d (%s): ", t.id, f.seq, f.typ)+fmt.Sprintf(format, args...))
	}
	if t.done {
		bad("arrived after the transfer ended")
		return
	}
	if f.seq != t.nextSeq {
		bad("sequence %d, want %d", f.seq, t.nextSeq)
	}
	if f.offset != t.offset && f.typ != wire.FrameError {
		bad("offset %d, want %d", f.offset, t.offset)
	}
	t.nextSeq = f.seq + 1
	switch f.typ {
	case wire.FrameChunk:
		if f.size == 0 {
			bad("empty chunk")
		}
		if f.offset == 0 && t.head == nil {
			t.head = f.head
		}
		if f.size > wire.MaxChunkSize {
			bad("chunk of %d bytes, more than %d", f.size, wire.MaxChunkSize)
		}
		t.offset = f.offset + int64(f.size)
	case wire.FrameComplete:
		t.done = true
		if t.size >= 0 && f.offset != t.size {
			bad("total %d bytes, but the result announced sizeBytes %d", f.offset, t.size)
		}
	case wire.FrameError:
		t.done, t.failed = true, f.message
	}
}

// awaitTransfer reads messages until transfer id has ended, failing when it stalls for
// longer than the timeout.
func (r *run) awaitTransfer(ctx context.Context, id string) error {
	for {
		if t := r.transfers[id]; t != nil && t.done {
			return nil
		}
		wait, cancel := context.WithTimeout(ctx, r.opts.Timeout)
		p, err := r.next(wait)
		cancel()
		if err != nil {
			return err
		}
		if p != nil {
			r.unclaimed = append(r.unclaimed, p)
		}
	}
}
