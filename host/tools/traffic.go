package tools

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// trafficRequest reports a request just before it is written. body is in a pooled buffer
// that is reused once the request is written: the event gets a copy, which a recorder may
// keep.
func (c *Client) trafficRequest(p *pending, msgBytes int, body []byte) {
	if c.opts.OnTraffic == nil {
		return
	}
	c.opts.OnTraffic(wire.TrafficEvent{
		SessionID: c.opts.SessionID, At: p.sent, Kind: wire.TrafficRequest, Type: p.op, RequestID: p.id, Origin: OriginOf(p.ctx),
		ToolIDs: p.tools, Bytes: msgBytes, PayloadBytes: len(body), EncodedBytes: len(body), Outcome: wire.TrafficOK,
		Payload: bytes.Clone(body),
	})
}

// trafficDenied reports a call or batch refused before sending.
func (c *Client) trafficDenied(ctx context.Context, op string, calls []wire.Call, err error) {
	r, ok := err.(*RefusalError)
	if c.opts.OnTraffic == nil || !ok {
		return
	}
	var payload any = wire.Batch{}
	if op == wire.TypeCall && len(calls) == 1 {
		payload = calls[0]
	} else {
		b := wire.Batch{Calls: make([]jsontext.Value, 0, len(calls))}
		for _, call := range calls {
			if raw, err := wire.Marshal(call); err == nil {
				b.Calls = append(b.Calls, raw)
			}
		}
		payload = b
	}
	body, _ := wire.Marshal(payload)
	c.opts.OnTraffic(wire.TrafficEvent{
		SessionID: c.opts.SessionID, At: time.Now(), Kind: wire.TrafficDenied, Type: op, ToolIDs: toolsOf(payload), Origin: OriginOf(ctx),
		PayloadBytes: len(body), EncodedBytes: len(body), Outcome: wire.TrafficError, ErrorCode: string(r.Err.Code), Payload: body,
	})
}

// trafficResponse reports a response matched to p, once decoded (or not) into r.
func (c *Client) trafficResponse(p *pending, env *wire.Envelope, msgBytes int, r *response) {
	if c.opts.OnTraffic == nil {
		return
	}
	ev := wire.TrafficEvent{
		SessionID: c.opts.SessionID, At: time.Now(), Kind: wire.TrafficResponse, Type: env.Type, RequestID: p.id, Origin: OriginOf(p.ctx),
		ToolIDs: p.tools, Bytes: msgBytes, EncodedBytes: len(env.Payload), PayloadBytes: len(env.Payload),
		Duration: time.Since(p.sent), Outcome: wire.TrafficOK, Payload: env.Payload,
	}
	if n := r.inflatedLen(); n > 0 {
		if pj := r.payloadJSON(); pj != nil {
			ev.Payload = pj
		}
		ev.PayloadBytes = n
		// A wrapper is only ever used when it is smaller than what it wraps.
		ev.Compressed = n > len(env.Payload)
	}
	switch e := r.err.(type) {
	case nil:
		if r.result != nil && !r.result.Payload.Success || r.batch != nil && !r.batch.Success {
			ev.Outcome = wire.TrafficError
		}
	case *wire.Error:
		ev.Outcome, ev.ErrorCode = wire.TrafficError, string(e.Code)
	default:
		ev.Outcome = wire.TrafficMalformed
	}
	c.opts.OnTraffic(ev)
}

// inflatedLen is the length of the response's payload JSON.
func (r *response) inflatedLen() int {
	if r.payload != nil {
		return len(r.payload)
	}
	return r.inflated
}

// toolsOf returns the tool ids a request payload names.
func toolsOf(payload any) []string {
	switch p := payload.(type) {
	case wire.Call:
		return []string{p.ToolID}
	case wire.Batch:
		ids := make([]string, 0, len(p.Calls))
		for _, raw := range p.Calls {
			var call struct {
				ToolID string `json:"toolId"`
			}
			_ = wire.Unmarshal(raw, &call) // the client encoded it: it reads back
			ids = append(ids, call.ToolID)
		}
		return ids
	}
	return nil
}

// transferClock turns transfer progress into one TrafficEvent per finished transfer,
// timing it from its announcement, and forwards every report to next.
type transferClock struct {
	c    *Client
	next func(TransferProgress)

	mu     sync.Mutex
	starts map[string]transferStart // active transfers only (at most MaxTransfers)
}

type transferStart struct {
	at     time.Time
	frames int
}

// observeTransfers wraps Options.OnTransfer when OnTraffic is set.
func (c *Client) observeTransfers() {
	if c.opts.OnTraffic == nil {
		return
	}
	tc := &transferClock{c: c, next: c.opts.OnTransfer, starts: make(map[string]transferStart)}
	c.opts.OnTransfer = tc.progress
}

func (tc *transferClock) progress(p TransferProgress) {
	now := time.Now()
	tc.mu.Lock()
	st, ok := tc.starts[p.TransferID]
	if !ok {
		st.at = now
	} else if p.Status == StatusReceiving {
		st.frames++
	}
	if p.Status == StatusReceiving {
		tc.starts[p.TransferID] = st
	} else {
		delete(tc.starts, p.TransferID)
	}
	tc.mu.Unlock()
	if p.Status != StatusReceiving {
		ev := wire.TrafficEvent{
			SessionID: tc.c.opts.SessionID, At: now, Kind: wire.TrafficTransfer, Type: "asft", Duration: now.Sub(st.at),
			Outcome: wire.TrafficOK, TransferID: p.TransferID, FileName: p.FileName, MimeType: p.MimeType, Path: p.Path,
			ReceivedBytes: p.ReceivedBytes, SizeBytes: p.SizeBytes, Frames: st.frames,
		}
		if p.Status == StatusFailed {
			ev.Outcome = wire.TrafficError
			if p.Err != nil {
				ev.ErrorCode = p.Err.Error()
			}
		}
		tc.c.opts.OnTraffic(ev)
	}
	if tc.next != nil {
		tc.next(p)
	}
}
