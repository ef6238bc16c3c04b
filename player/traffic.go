package player

import (
	"slices"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// TrafficEntry is one line of a session's traffic log, as the page shows it.
type TrafficEntry struct {
	// Seq orders entries across the player (the page merges the log and the live stream
	// by it).
	Seq       int64     `json:"seq"`
	SessionID string    `json:"sessionId"`
	At        time.Time `json:"at"`
	// Kind is request, response or transfer; Type the envelope type ("asft" for
	// transfers).
	Kind      string   `json:"kind"`
	Type      string   `json:"type"`
	RequestID string   `json:"requestId,omitzero"`
	ToolIDs   []string `json:"toolIds,omitempty"`
	// Bytes is the message as it travelled; PayloadBytes its payload decompressed,
	// EncodedBytes as it travelled (smaller when Compressed).
	Bytes        int     `json:"bytes"`
	PayloadBytes int     `json:"payloadBytes"`
	EncodedBytes int     `json:"encodedBytes"`
	Compressed   bool    `json:"compressed,omitzero"`
	DurationMS   float64 `json:"durationMs,omitzero"`
	// Outcome is ok, error or malformed.
	Outcome   string `json:"outcome"`
	ErrorCode string `json:"errorCode,omitzero"`

	TransferID     string  `json:"transferId,omitzero"`
	FileName       string  `json:"fileName,omitzero"`
	MimeType       string  `json:"mimeType,omitzero"`
	ReceivedBytes  int64   `json:"receivedBytes,omitzero"`
	SizeBytes      int64   `json:"sizeBytes,omitzero"`
	Frames         int     `json:"frames,omitzero"`
	BytesPerSecond float64 `json:"bytesPerSecond,omitzero"`
	// ArtifactURL serves a received file to the page.
	ArtifactURL string `json:"artifactUrl,omitzero"`
}

// Traffic is a session's traffic log, oldest first.
type Traffic struct {
	Schema    string         `json:"schema"`
	SessionID string         `json:"sessionId"`
	Capacity  int            `json:"capacity"`
	Entries   []TrafficEntry `json:"entries"`
	// Source is "live" (what the player saw) or "recording" (read from the session's
	// recording: another fleet host's session, an earlier run's, an imported one).
	Source string `json:"source"`
}

// FrameInfo describes a session's latest live frame; the image is at URL.
type FrameInfo struct {
	SessionID       string    `json:"sessionId"`
	Seq             int64     `json:"seq"`
	CapturedAt      time.Time `json:"capturedAt"`
	Width           int32     `json:"width"`
	Height          int32     `json:"height"`
	Quality         uint8     `json:"quality"`
	Bytes           int       `json:"bytes"`
	KeyboardVisible bool      `json:"keyboardVisible,omitzero"`
	URL             string    `json:"url"`
}

// Schemas of the player's own objects.
const (
	SchemaTraffic  = "ansight.player-traffic/v1"
	SchemaToolForm = "ansight.player-tool/v1"
	SchemaCall     = "ansight.player-call/v1"
	SchemaBatch    = "ansight.player-batch/v1"
	SchemaValidate = "ansight.player-validation/v1"
	SchemaRecords  = "ansight.player-records/v1"
)

// ring is a bounded log: the newest entries win.
type ring struct {
	buf  []TrafficEntry // grows up to its capacity, then wraps
	next int            // oldest entry once full
}

func (r *ring) add(e TrafficEntry) {
	if len(r.buf) < cap(r.buf) {
		r.buf = append(r.buf, e)
		return
	}
	r.buf[r.next] = e
	r.next = (r.next + 1) % len(r.buf)
}

func (r *ring) entries() []TrafficEntry {
	out := make([]TrafficEntry, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// liveFrame is the latest ASJP frame of a session.
type liveFrame struct {
	info FrameInfo
	jpeg []byte
}

// OnTraffic records one event of the host's tool traffic and streams it to the pages.
// Give it to the host as tools.Options.OnTraffic; it returns quickly.
func (p *Player) OnTraffic(ev wire.TrafficEvent) {
	e := TrafficEntry{
		SessionID: ev.SessionID, At: ev.At, Kind: string(ev.Kind), Type: ev.Type, RequestID: ev.RequestID,
		ToolIDs: ev.ToolIDs, Bytes: ev.Bytes, PayloadBytes: ev.PayloadBytes, EncodedBytes: ev.EncodedBytes,
		Compressed: ev.Compressed, DurationMS: float64(ev.Duration.Microseconds()) / 1000, Outcome: ev.Outcome,
		ErrorCode: ev.ErrorCode, TransferID: ev.TransferID, FileName: ev.FileName, MimeType: ev.MimeType,
		ReceivedBytes: ev.ReceivedBytes, SizeBytes: ev.SizeBytes, Frames: ev.Frames,
	}
	if ev.Kind == wire.TrafficTransfer {
		if secs := ev.Duration.Seconds(); secs > 0 {
			e.BytesPerSecond = float64(ev.ReceivedBytes) / secs
		}
		if ev.Outcome == wire.TrafficOK {
			e.ArtifactURL = p.artifactURL(ev.Path)
		}
	}
	p.mu.Lock()
	p.seq++
	e.Seq = p.seq
	r := p.traffic[ev.SessionID]
	if r == nil {
		r = &ring{buf: make([]TrafficEntry, 0, p.opts.TrafficPerSession)}
		p.traffic[ev.SessionID] = r
		p.trackLocked(ev.SessionID)
	}
	r.add(e)
	p.mu.Unlock()
	p.hub.publish(eventTraffic, e)
	if ev.Type == wire.TypeCatalog {
		// The session's catalog revision may have moved.
		p.markDirty()
	}
}

// OnFrame keeps a session's latest live screenshot frame and tells the pages. Give it to
// the host as host.Options.OnFrame; it returns quickly.
func (p *Player) OnFrame(sessionID string, f wire.ASJPFrame) {
	visible, known := f.KeyboardVisible()
	p.mu.Lock()
	p.seq++
	lf := &liveFrame{
		info: FrameInfo{SessionID: sessionID, Seq: p.seq, CapturedAt: f.CapturedAt, Width: f.Width, Height: f.Height,
			Quality: f.Quality, Bytes: len(f.JPEG), KeyboardVisible: visible && known, URL: frameURL(sessionID, p.seq)},
		jpeg: f.JPEG, // the host hands over the message; nothing else holds it
	}
	if _, ok := p.frames[sessionID]; !ok {
		p.trackLocked(sessionID)
	}
	p.frames[sessionID] = lf
	p.mu.Unlock()
	p.hub.publish(eventFrame, lf.info)
}

// trackLocked remembers that a session has state here, forgetting the oldest tracked
// session beyond maxTracked.
func (p *Player) trackLocked(id string) {
	if slices.Contains(p.order, id) {
		return
	}
	p.order = append(p.order, id)
	if len(p.order) > maxTracked {
		old := p.order[0]
		p.order = p.order[1:]
		delete(p.traffic, old)
		delete(p.frames, old)
	}
}

// forget drops what the player keeps about a session the host evicted.
func (p *Player) forget(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.traffic, id)
	delete(p.frames, id)
	if i := slices.Index(p.order, id); i >= 0 {
		p.order = slices.Delete(p.order, i, i+1)
	}
}

// trafficOf returns a copy of a session's log.
func (p *Player) trafficOf(id string) []TrafficEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.traffic[id]; r != nil {
		return r.entries()
	}
	return []TrafficEntry{}
}

func (p *Player) frameOf(id string) *liveFrame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frames[id]
}

// latestFrames describes the latest live frame of every session that streamed one.
func (p *Player) latestFrames() []FrameInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]FrameInfo, 0, len(p.frames))
	for _, f := range p.frames {
		out = append(out, f.info)
	}
	return out
}
