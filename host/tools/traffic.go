package tools

import (
	"bytes"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// TrafficKind says what a TrafficEvent describes.
type TrafficKind string

// Traffic kinds.
const (
	// TrafficRequest: a request the client sent (tool.query, tool.call, tool.batch).
	TrafficRequest TrafficKind = "request"
	// TrafficResponse: a response that answered one of the client's requests.
	TrafficResponse TrafficKind = "response"
	// TrafficTransfer: an ASFT transfer that ended (complete or failed).
	TrafficTransfer TrafficKind = "transfer"
	// TrafficDenied: a call or batch the client refused before sending (RefusalError: a
	// tool above the grant, unknown, not executable, or arguments off the schema).
	TrafficDenied TrafficKind = "denied"
)

// Outcomes of a TrafficEvent.
const (
	OutcomeOK        = "ok"        // a request sent, a successful response, a complete transfer
	OutcomeError     = "error"     // a tool.error, a result with success false, a failed transfer
	OutcomeMalformed = "malformed" // a response that could not be decoded
)

// TrafficEvent describes one message of a session's tool traffic, or one finished ASFT
// transfer, for Options.OnTraffic: what a traffic log or a protocol inspector shows.
type TrafficEvent struct {
	SessionID string
	// At is when the message was sent or received, or when the transfer ended.
	At   time.Time
	Kind TrafficKind
	// Type is the envelope type (tool.query, tool.catalog, tool.result, …); "asft" for
	// transfers.
	Type string
	// RequestID is the request's envelope id; a response carries the id it answers.
	RequestID string
	// ToolIDs are the tools a call or batch names, in order (empty for queries).
	ToolIDs []string
	// Bytes is the whole message as it travelled. PayloadBytes is the payload once
	// decompressed and EncodedBytes the payload as it travelled: they differ only when
	// Compressed (gzip-base64-json), and the difference is the saving.
	Bytes        int
	PayloadBytes int
	EncodedBytes int
	Compressed   bool
	// Duration is, for a response, the time since its request was sent and, for a
	// transfer, the time from its announcement to its end.
	Duration time.Duration
	// Outcome is OutcomeOK, OutcomeError or OutcomeMalformed; ErrorCode is the tool.error
	// code (or, for a failed transfer, its error text).
	Outcome   string
	ErrorCode string
	// Payload is the request's payload as sent, the response's payload decompressed, or a
	// denied request's calls. The client does not reuse it; a recorder may keep it.
	Payload jsontext.Value

	// Transfer members: the file as announced and saved, the bytes received and the ASFT
	// chunk frames they came in.
	TransferID    string
	FileName      string
	MimeType      string
	Path          string
	ReceivedBytes int64
	SizeBytes     int64
	Frames        int
}

// trafficRequest reports a request just before it is written. body is in a pooled buffer
// that is reused once the request is written: the event gets a copy, which a recorder may
// keep.
func (c *Client) trafficRequest(p *pending, msgBytes int, body []byte) {
	if c.opts.OnTraffic == nil {
		return
	}
	c.opts.OnTraffic(TrafficEvent{
		SessionID: c.opts.SessionID, At: p.sent, Kind: TrafficRequest, Type: p.op, RequestID: p.id,
		ToolIDs: p.tools, Bytes: msgBytes, PayloadBytes: len(body), EncodedBytes: len(body), Outcome: OutcomeOK,
		Payload: bytes.Clone(body),
	})
}

// trafficDenied reports a call or batch refused before sending.
func (c *Client) trafficDenied(op string, calls []wire.Call, err error) {
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
	c.opts.OnTraffic(TrafficEvent{
		SessionID: c.opts.SessionID, At: time.Now(), Kind: TrafficDenied, Type: op, ToolIDs: toolsOf(payload),
		PayloadBytes: len(body), EncodedBytes: len(body), Outcome: OutcomeError, ErrorCode: string(r.Err.Code), Payload: body,
	})
}

// trafficResponse reports a response matched to p, once decoded (or not) into r.
func (c *Client) trafficResponse(p *pending, env *wire.Envelope, msgBytes int, r *response) {
	if c.opts.OnTraffic == nil {
		return
	}
	ev := TrafficEvent{
		SessionID: c.opts.SessionID, At: time.Now(), Kind: TrafficResponse, Type: env.Type, RequestID: p.id,
		ToolIDs: p.tools, Bytes: msgBytes, EncodedBytes: len(env.Payload), PayloadBytes: len(env.Payload),
		Duration: time.Since(p.sent), Outcome: OutcomeOK, Payload: env.Payload,
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
			ev.Outcome = OutcomeError
		}
	case *wire.Error:
		ev.Outcome, ev.ErrorCode = OutcomeError, string(e.Code)
	default:
		ev.Outcome = OutcomeMalformed
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
		ev := TrafficEvent{
			SessionID: tc.c.opts.SessionID, At: now, Kind: TrafficTransfer, Type: "asft", Duration: now.Sub(st.at),
			Outcome: OutcomeOK, TransferID: p.TransferID, FileName: p.FileName, MimeType: p.MimeType, Path: p.Path,
			ReceivedBytes: p.ReceivedBytes, SizeBytes: p.SizeBytes, Frames: st.frames,
		}
		if p.Status == StatusFailed {
			ev.Outcome = OutcomeError
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
