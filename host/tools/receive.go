package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Incoming is a transfer an app announces outside a tool response: in a control request,
// such as annotation.submit, whose answer lets the app send the frames.
type Incoming struct {
	// TransferID is the id the frames carry: 32 lower-case hex digits.
	TransferID string
	// FileName names the file in Dir (sanitized, and made unique there).
	FileName string
	MimeType string
	// SizeBytes is the exact size announced; more or fewer bytes fail the transfer.
	SizeBytes int64
	// Dir receives the file (created when missing); the artifact directory when empty.
	Dir string
}

// Receive registers in, so that the ASFT frames that follow on the connection are received
// as a result's are: same frame checks, Options.MaxArtifactBytes, a stall longer than
// Options.Timeout fails it, and Close aborts it. Register before answering the request
// that announced it: the frames follow the answer at once. done is called once, on the
// goroutine that feeds HandleMessage (or Close's), when the transfer has ended: complete
// with its Path, or failed with its Err. Receive returns an error, and never calls done,
// when the transfer cannot start (a bad id, a size over the limit, an id in use, too many
// transfers, no file).
func (c *Client) Receive(in Incoming, done func(TransferProgress)) error {
	if in.SizeBytes < 0 {
		return errors.New("tools: a transfer's size cannot be negative")
	}
	// The transfer may end on another goroutine (Close) as soon as it is registered;
	// done is owed only once Receive has said it started.
	var started atomic.Bool
	var once sync.Once
	t := c.transfers.start(descriptor{transferID: in.TransferID, fileName: in.FileName, mimeType: in.MimeType,
		size: in.SizeBytes, dir: in.Dir}, func(p TransferProgress) {
		if p.Status != StatusReceiving && started.Load() {
			once.Do(func() { done(p) })
		}
	})
	t.mu.Lock()
	status, err := t.status, t.err
	started.Store(status == StatusReceiving)
	t.mu.Unlock()
	if status == StatusFailed {
		return fmt.Errorf("tools: transfer %s: %w", in.TransferID, err)
	}
	// A goroutine per transfer watches for stalls; it ends with the transfer.
	go c.waitTransfers(context.Background(), []*transfer{t}, nil, "")
	return nil
}
