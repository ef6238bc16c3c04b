package app

import (
	"bytes"
	"io"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// Call is one tool invocation as a handler sees it.
type Call struct {
	// ToolID is the invoked tool.
	ToolID string
	// CallID is the caller's callId (empty when none was given).
	CallID string
	// RequestID is the id of the request envelope (a tool.call or a tool.batch).
	RequestID string
	// SessionID is the request's sessionId (may be empty).
	SessionID string
	// Arguments is the arguments object as compact JSON, already validated against the
	// tool's arguments schema for JSON tools. It is never empty ({} when none were sent).
	Arguments jsontext.Value
	// StringArguments is set for flattened-string tools only: the arguments as a string
	// map — strings as they are, numbers and booleans as their JSON text, objects and
	// arrays as compact JSON; members whose value is null are left out.
	StringArguments map[string]string

	app *App

	mu        sync.Mutex
	message   string
	transfers []*transfer
	finished  bool // the outcome is settled: later artifacts are dropped at once
}

// Now returns the time on the app's clock (Options.Clock): results that carry a capture
// time use it, so that tests pinning the clock get reproducible results.
func (c *Call) Now() time.Time { return c.app.clock() }

// SetMessage sets the optional human-readable message of a successful result.
func (c *Call) SetMessage(msg string) {
	c.mu.Lock()
	c.message = msg
	c.mu.Unlock()
}

// SendArtifact queues a binary artifact of exactly size bytes, read from r, for delivery
// over ASFT, and returns the descriptor to put into the tool's result. The bytes are
// streamed in 64 KiB frames (see WithChunkBytes) only after the response announcing them has
// been written, and only if the call succeeds and its result contains the descriptor's
// transfer id; otherwise the artifact is dropped. r is read at the pace the connection
// accepts the frames, never buffered whole. If r is an io.Closer it is closed when the
// transfer ends or is dropped. A read failure, or a reader yielding more or fewer than size
// bytes, ends the transfer with an ASFT error frame.
//
// Where the descriptor may go depends on the host:
//
//   - Our host (package host) receives the transfer of every descriptor it finds, whatever
//     the tool and wherever the descriptor is in the result (nested objects, arrays, batch
//     items, evidence).
//   - The official host registers a transfer only from a call of ui.get_screenshot,
//     artifacts.request or files.begin_binary_download, and only when the descriptor is
//     that call's result object itself (its deliveryMode, wireProtocol, transferId and
//     sizeBytes are members of "result"), whether the call is the request, a batch item or
//     evidence. Frames of any other transfer are dropped and its descriptor stays
//     "queued". So a tool of your own must not send an artifact if it is to work with the
//     official host: make the file an artifact of a provider (app/files's
//     RegisterArtifacts, which serves artifacts.request with the descriptor where the
//     official host looks for it) and return a files.ArtifactRef pointing at it, as
//     app/diag does with its profiles; files.begin_binary_download serves files in
//     directories you choose. apptest.Response.OfficialHost applies the official host's
//     rule in tests.
//
// The name and mime type are the host's hints for the file it writes; the host sanitises
// the name.
func (c *Call) SendArtifact(name, mimeType string, size int64, r io.Reader, opts ...ArtifactOption) wire.TransferDescriptor {
	id := c.app.newTransferID()
	t := &transfer{id: id, size: size, chunk: ChunkSize, r: r}
	for _, o := range opts {
		o(t)
	}
	c.mu.Lock()
	late := c.finished
	if !late {
		c.transfers = append(c.transfers, t)
	}
	c.mu.Unlock()
	if late {
		t.close()
	}
	return wire.TransferDescriptor{
		DeliveryMode: wire.DeliveryModeWebSocketBinary,
		WireProtocol: wire.FileTransferProtocol,
		TransferID:   id,
		SizeBytes:    size,
		FileName:     name,
		MimeType:     mimeType,
		Status:       "queued",
	}
}

// finish hands over the transfers a successful call announced (those whose id appears in
// its result) and drops the others. After finish the call queues nothing more.
func (c *Call) finish(success bool, result []byte) (keep []*transfer) {
	c.mu.Lock()
	ts := c.transfers
	c.transfers, c.finished = nil, true
	c.mu.Unlock()
	for _, t := range ts {
		if success && bytes.Contains(result, []byte(t.id)) {
			keep = append(keep, t)
		} else {
			t.close()
		}
	}
	return keep
}
