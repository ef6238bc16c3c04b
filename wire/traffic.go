package wire

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"
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
	// TrafficDenied: a call or batch the client refused before sending (host/tools'
	// RefusalError: a tool above the grant, unknown, not executable, or arguments off the
	// schema).
	TrafficDenied TrafficKind = "denied"
)

// Outcomes of a TrafficEvent.
const (
	TrafficOK        = "ok"        // a request sent, a successful response, a complete transfer
	TrafficError     = "error"     // a tool.error, a result with success false, a failed transfer
	TrafficMalformed = "malformed" // a response that could not be decoded
)

// TrafficEvent describes one message of a session's tool traffic, or one finished ASFT
// transfer, as the host's protocol client reports it (host/tools' Options.OnTraffic): what
// a traffic log, a recorder or a protocol inspector shows. It lives here, beside the
// messages it describes, so that whoever records or shows traffic needs no host package.
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
	// Origin is who asked for a call or batch, and for its response: "cli", "player",
	// "mcp:<client name>#<MCP session tag>", "flow", or "internal" for the host's own
	// requests (catalog polls, evidence); "" when a client of the host API did not say.
	Origin string
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
	// Outcome is TrafficOK, TrafficError or TrafficMalformed; ErrorCode is the tool.error
	// code (or, for a failed transfer, its error text).
	Outcome   string
	ErrorCode string
	// Payload is the request's payload as sent, the response's payload decompressed, or a
	// denied request's calls. The reporter does not reuse it; a recorder may keep it.
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
