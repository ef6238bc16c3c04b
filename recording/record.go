package recording

import (
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Kind says what a record holds. Kinds are stable strings: they appear in queries, in the
// JSON of records and in exported archives.
type Kind string

// Record kinds.
const (
	// KindLog: one log line (client.log, CLIENT_LOG). Level and Text are set.
	KindLog Kind = "log"
	// KindChannel: a metric channel declared by CLIENT_METRIC_CHANNELS (Channel is its id,
	// Text its name).
	KindChannel Kind = "channel"
	// KindMetric: one metric sample (CLIENT_METRICS): Channel and Value.
	KindMetric Kind = "metric"
	// KindEvent: one app event (CLIENT_EVENTS); Text is its label.
	KindEvent Kind = "event"
	// KindTouch: one touch row of an ansight.touches.v1 batch (CLIENT_TOUCH_INPUT).
	KindTouch Kind = "touch"
	// KindNetwork: one HTTP request's metadata (CLIENT_NETWORK_REQUEST), sanitised on
	// intake; Text is "METHOD url status".
	KindNetwork Kind = "network"
	// KindTree: a visual-tree snapshot (CLIENT_VISUAL_TREE); the tree is the blob.
	KindTree Kind = "tree"
	// KindAppState: the app went to foreground or background (app.state, CLIENT_APP_STATE).
	KindAppState Kind = "appState"
	// KindProfile: the device and app profile (device.profile, DeviceAppProfile).
	KindProfile Kind = "profile"
	// KindProperties: the session's custom properties (session.properties).
	KindProperties Kind = "properties"
	// KindState: a change of the session: connected, opened, complete, done, disconnected.
	KindState Kind = "state"
	// KindTraffic: one message of tool traffic (request, response, transfer, denied) with
	// its payload.
	KindTraffic Kind = "traffic"
	// KindArtifact: a file an app tool delivered over ASFT; the file is the blob.
	KindArtifact Kind = "artifact"
	// KindCrash: a crash report the host kept (crash.handoff): Data is the host's listing
	// entry, the report as the app sent it is the blob (the host's own file, linked).
	KindCrash Kind = "crash"
	// KindAnnotation: an annotated-feedback bundle the host kept (annotation.submit): Data
	// is the host's listing entry, the bundle (a zip) is the blob, linked.
	KindAnnotation Kind = "annotation"
	// KindFrame: one live screen frame (ASJP, CLIENT_JPEG); the JPEG is the blob.
	KindFrame Kind = "frame"
	// KindControl: another control request (crash.handoff and annotation.submit as
	// requests, unknown actions, refused requests), verbatim with the host's answer.
	KindControl Kind = "control"
	// KindMessage: an app message of no known type, or one that did not parse, kept
	// verbatim (bounded).
	KindMessage Kind = "message"
)

// Kinds lists every kind, in a stable order.
var Kinds = []Kind{KindLog, KindChannel, KindMetric, KindEvent, KindTouch, KindNetwork, KindTree, KindAppState,
	KindProfile, KindProperties, KindState, KindTraffic, KindArtifact, KindCrash, KindAnnotation, KindFrame, KindControl, KindMessage}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if v == k {
			return true
		}
	}
	return false
}

// Record is one entry of a recording. Which members are set depends on Kind; Data always
// holds the entry as the app (or the host, for traffic and state) described it, unknown
// members included.
type Record struct {
	// Seq orders records in the order the host received them, across all sessions. It
	// never repeats and is the paging cursor of Query.
	Seq     int64  `json:"seq"`
	Session string `json:"session"`
	Kind    Kind   `json:"kind"`
	// At is when the entry happened, by the app's clock when the message says (a metric's
	// capturedAtUtc, a touch's t0 plus delta, a frame's capture time), else when the host
	// received it.
	At time.Time `json:"at"`
	// Level is a log record's level: debug, info, warn or error.
	Level Level `json:"level,omitzero"`
	// Text is a one-line summary that Query.Search matches: the log line, an event's
	// label, "GET url 200", the tool ids of a call, a channel's name.
	Text string `json:"text,omitzero"`
	// Channel is the metric channel of a sample, a channel declaration or an event.
	Channel *int `json:"channel,omitempty"`
	// Value is a metric sample's value.
	Value float64 `json:"value,omitzero"`
	// Data is the entry's JSON object.
	Data jsontext.Value `json:"data,omitzero"`
	// Blob names the record's file (a frame's JPEG, a tree, an artifact, a crash report,
	// a large traffic payload) relative to the recordings directory; open it with
	// Recorder.OpenBlob. BlobBytes is its size. A live frame's JPEG or visual tree is kept
	// with the session's others of its kind in a pack (pack.go): Blob is then the name it
	// has in exports and the control API, and only OpenBlob reads it.
	Blob      string `json:"blob,omitzero"`
	BlobBytes int64  `json:"blobBytes,omitzero"`
	// Size is what the record counts against the budgets: its row and its file.
	Size int64 `json:"size"`

	// pack and packOffset locate a packed frame's JPEG or tree (pack.go).
	pack       string
	packOffset int64
}

// Level is a log level. The zero value means none (records that are not logs).
type Level int

// Log levels, ordered; the numbers are slog's.
const (
	LevelDebug Level = -4
	LevelInfo  Level = 1 // not 0: zero is "no level"
	LevelWarn  Level = 4
	LevelError Level = 8
)

// String returns debug, info, warn, error or "".
func (l Level) String() string {
	switch {
	case l == 0:
		return ""
	case l < LevelInfo:
		return "debug"
	case l < LevelWarn:
		return "info"
	case l < LevelError:
		return "warn"
	}
	return "error"
}

// MarshalText writes the level's name.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads a level name (see ParseLevel).
func (l *Level) UnmarshalText(b []byte) error {
	v, ok := ParseLevel(string(b))
	if !ok {
		return &levelError{string(b)}
	}
	*l = v
	return nil
}

type levelError struct{ s string }

func (e *levelError) Error() string { return "recording: unknown log level " + quote(e.s) }

// ParseLevel reads debug, info, warn or error (and the usual variants: trace, verbose,
// information, warning, err, fatal, critical), in any case.
func ParseLevel(s string) (Level, bool) {
	switch lower(s) {
	case "":
		return 0, true
	case "trace", "verbose", "debug", "dbg", "v", "d":
		return LevelDebug, true
	case "info", "information", "notice", "i":
		return LevelInfo, true
	case "warn", "warning", "w":
		return LevelWarn, true
	case "error", "err", "fatal", "critical", "crit", "panic", "assert", "e", "f", "a":
		return LevelError, true
	}
	return 0, false
}

// MarshalJSONTo writes a metric sample's value even when it is 0: a sample of 0 is a value,
// not a missing one, and readers of the control API may count on it. Other kinds leave a
// zero value out (a request without a known duration).
func (r Record) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Record // the same fields, without this method
	if r.Kind != KindMetric {
		return json.MarshalEncode(enc, plain(r))
	}
	return json.MarshalEncode(enc, struct {
		plain
		Value float64 `json:"value"` // shadows the embedded one, which omits a zero
	}{plain(r), r.Value})
}
