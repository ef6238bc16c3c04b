package hostapi

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/label"
	"github.com/ansight-go/ansight/wire"
)

// Schemas of the API's objects; the CLI prints them as its --json output.
const (
	SchemaStatus      = "ansight.host-status/v1"
	SchemaSessions    = "ansight.sessions/v1"
	SchemaSession     = "ansight.session/v1"
	SchemaTools       = "ansight.app-tools/v1"
	SchemaTool        = "ansight.app-tool/v1"
	SchemaCall        = "ansight.app-call/v1"
	SchemaBatch       = "ansight.app-batch/v1"
	SchemaInvite      = "ansight.pairing-invite/v2"
	SchemaInvites     = "ansight.pairing-invites/v2"
	SchemaGrant       = "ansight.pairing-grant/v1"
	SchemaDisconnect  = "ansight.session-disconnect/v1"
	SchemaPlayer      = "ansight.player/v1"
	SchemaRevoke      = "ansight.pairing-revoke/v1"
	SchemaForget      = "ansight.pairing-forget/v1"
	SchemaRename      = "ansight.session-rename/v1"
	SchemaError       = "ansight.error/v1"
	SchemaCrashes     = "ansight.session-crashes/v1"
	SchemaAnnotations = "ansight.session-annotations/v1"
	SchemaRecords     = "ansight.session-records/v1"
	SchemaRecordings  = "ansight.recordings/v1"
)

// Status describes the running host.
type Status struct {
	Schema    string    `json:"schema"`
	Version   string    `json:"version"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	// Discovery is the UDP enrollment address apps send ENROLLMENT_CONNECT to.
	Discovery string `json:"discovery"`
	// WebSocket is the address of the WebSocket listener apps upgrade on.
	WebSocket string `json:"webSocket"`
	// WebSocketPorts is the port range the listener's port was taken from ("56500-56599"),
	// when one was given.
	WebSocketPorts string `json:"webSocketPorts,omitzero"`
	LAN            bool   `json:"lan"`
	// DualStack is true when both listeners take IPv4 and IPv6 (bound to "[::]").
	DualStack bool   `json:"dualStack,omitzero"`
	StateDir  string `json:"stateDir"`
	Sessions  int    `json:"sessions"`
	// FileLimit is the host process's open-file limit, raised at start as far as the
	// system allows, and what its session bound needs (FileLimit.Enough).
	FileLimit FileLimit `json:"fileLimit"`
	// Player is the web player's address, without its access token ('ansight player url'
	// prints the URL with it); absent when the host serves no player.
	Player string `json:"player,omitzero"`
	// Recording is the recordings' use of their budgets; absent when the host records
	// nothing (--no-record).
	Recording *RecordingUsage `json:"recording,omitzero"`
	// Archive names the archive a Backend without a host shows ('ansight player --archive'):
	// nothing it serves is live, and the player says so instead of "live".
	Archive string `json:"archive,omitzero"`
}

// FileLimit is the host process's open-file limit and what its session bound needs.
type FileLimit struct {
	// Soft is the limit in force, Hard the most it may be raised to without privilege;
	// both 0 when unknown (the system has no such limit, or it could not be read).
	Soft uint64 `json:"soft"`
	Hard uint64 `json:"hard"`
	// Raised says the host raised the soft limit at start.
	Raised bool `json:"raised,omitzero"`
	// Sessions is the host's bound on sessions; Needed the descriptors that many need.
	Sessions int `json:"sessions"`
	Needed   int `json:"needed"`
}

// RecordingUsage is the recordings' use of their budgets.
type RecordingUsage struct {
	Dir string `json:"dir"`
	// Bytes is what the records count against MaxBytes; DiskBytes what the directory
	// holds (database, its log, blobs).
	Bytes           int64 `json:"bytes"`
	DiskBytes       int64 `json:"diskBytes"`
	MaxBytes        int64 `json:"maxBytes"`
	MaxSessionBytes int64 `json:"maxSessionBytes"`
	Sessions        int   `json:"sessions"`
	Records         int64 `json:"records"`
	// Dropped counts telemetry messages refused because the intake buffer was full,
	// Thinned live frames skipped, Evicted records removed for the budgets — all since
	// the host started.
	Dropped int64 `json:"dropped"`
	Thinned int64 `json:"thinned"`
	Evicted int64 `json:"evicted"`
	// MaskedFrames and MaskedTouches count frames boxed or blacked out and touches not
	// kept for sensitive nodes, since the host started.
	MaskedFrames  int64 `json:"maskedFrames,omitzero"`
	MaskedTouches int64 `json:"maskedTouches,omitzero"`
	// MaskedTyped counts typed values (ui.perform_action) replaced for sensitive fields,
	// since the host started.
	MaskedTyped int64 `json:"maskedTyped,omitzero"`
	// Queued and QueuedBytes are waiting to be written.
	Queued      int   `json:"queued"`
	QueuedBytes int64 `json:"queuedBytes"`
}

// Disconnection says what Disconnect did.
type Disconnection struct {
	Schema    string `json:"schema"`
	SessionID string `json:"sessionId"`
	// Disconnected is false when the session had no connection already.
	Disconnected bool `json:"disconnected"`
}

// PlayerAccess is how to open the web player. URL carries the access token: show it to
// the user, never log it.
type PlayerAccess struct {
	Schema string `json:"schema"`
	// Address is the player's URL without the token, as Status shows it.
	Address string `json:"address"`
	URL     string `json:"url"`
	// Renewed is true when the token was just renewed (pages opened before are locked out).
	Renewed bool `json:"renewed,omitzero"`
}

// Session describes one app session, live or recently disconnected.
type Session struct {
	ID            string      `json:"id"`
	AppID         string      `json:"appId"`
	AppName       string      `json:"appName,omitzero"`
	AppVersion    string      `json:"appVersion,omitzero"`
	DeviceID      string      `json:"deviceId,omitzero"`
	DeviceName    string      `json:"deviceName,omitzero"`
	Platform      string      `json:"platform,omitzero"`
	SDK           string      `json:"sdk,omitzero"`
	State         string      `json:"state"`
	AppState      string      `json:"appState,omitzero"`
	MaxToolPolicy wire.Policy `json:"maxToolPolicy"`
	ConnectedAt   time.Time   `json:"connectedAt"`
	// DisconnectedAt is set once the session's connection ended.
	DisconnectedAt time.Time `json:"disconnectedAt,omitzero"`
	// Revision and AvailabilityRevision are those of the last catalog the host fetched.
	Revision             string `json:"revision,omitzero"`
	AvailabilityRevision string `json:"availabilityRevision,omitzero"`
	ToolCount            int    `json:"toolCount,omitzero"`
	// CrashReports and Annotations count what the app handed over in this session: crash
	// reports of its crashed processes (listed by GET …/crashes) and annotated-feedback
	// bundles (GET …/annotations).
	CrashReports int `json:"crashReports,omitzero"`
	Annotations  int `json:"annotations,omitzero"`
	// Label is the human name a user gave the session (Backend.Rename), kept with its
	// recording; empty when none.
	Label string `json:"label,omitzero"`
	// Host is the fleet host the session is on, in a fleet's listing (package fleet); its
	// ID is then "<session>@<host>". Empty for a host's own listing.
	Host string `json:"host,omitzero"`
	// Recording describes what the host recorded of the session, when it records (set by
	// Session and Recordings, not by Sessions).
	Recording *Recording `json:"recording,omitzero"`
	// Import is what Import read and skipped (set only in Import's answer).
	Import *ImportReport `json:"import,omitzero"`
}

// Recording describes a session's recording: what the host keeps of it, also after the
// app has gone and across restarts of the host (docs/recordings.md).
type Recording struct {
	// Origin is "live" (recorded by this host) or "import" (ansight session import).
	Origin string `json:"origin"`
	// FirstAt and LastAt span what the host received, by its clock.
	FirstAt time.Time `json:"firstAt"`
	LastAt  time.Time `json:"lastAt"`
	Records int64     `json:"records"`
	Bytes   int64     `json:"bytes"`
	// Dropped counts telemetry messages lost to a full intake buffer, Evicted records
	// removed for the budgets.
	Dropped int64 `json:"dropped,omitzero"`
	Evicted int64 `json:"evicted,omitzero"`
}

// RecordsRequest selects records of a session's recording. The zero value of every filter
// selects all; the CLI's browse commands (session logs, network, …) are kind filters.
type RecordsRequest struct {
	// Kinds keeps only these kinds (log, metric, network, …; all when empty).
	Kinds []RecordKind `json:"kinds,omitempty"`
	// Since and Until keep records with Since <= at < Until.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// Level keeps log records of this level or above: debug, info, warn, error.
	Level string `json:"level,omitzero"`
	// Search keeps records whose one-line text contains it (ASCII case ignored).
	Search string `json:"search,omitzero"`
	// Channel keeps records of one metric channel.
	Channel *int `json:"channel,omitzero"`
	// After is the paging cursor: Records.Next of the previous page.
	After int64 `json:"after,omitzero"`
	// Newest returns the newest records first (the tail of a log).
	Newest bool `json:"newest,omitzero"`
	// Limit bounds a page (500 when 0, at most 10,000).
	Limit int `json:"limit,omitzero"`
}

// Values encodes the request as the query parameters of GET …/records: kind (comma
// separated), since and until (RFC 3339), level, search, channel, after, newest, limit.
func (r RecordsRequest) Values() url.Values {
	v := url.Values{}
	if len(r.Kinds) > 0 {
		kinds := make([]string, len(r.Kinds))
		for i, k := range r.Kinds {
			kinds[i] = string(k)
		}
		v.Set("kind", strings.Join(kinds, ","))
	}
	for name, t := range map[string]time.Time{"since": r.Since, "until": r.Until} {
		if !t.IsZero() {
			v.Set(name, t.UTC().Format(time.RFC3339Nano))
		}
	}
	for name, s := range map[string]string{"level": r.Level, "search": r.Search} {
		if s != "" {
			v.Set(name, s)
		}
	}
	if r.Channel != nil {
		v.Set("channel", strconv.Itoa(*r.Channel))
	}
	if r.After != 0 {
		v.Set("after", strconv.FormatInt(r.After, 10))
	}
	if r.Newest {
		v.Set("newest", "true")
	}
	if r.Limit != 0 {
		v.Set("limit", strconv.Itoa(r.Limit))
	}
	return v
}

// ParseRecordsRequest reads the query parameters Values writes (kind may also repeat).
func ParseRecordsRequest(v url.Values) (RecordsRequest, error) {
	var r RecordsRequest
	for _, list := range v["kind"] {
		for k := range strings.SplitSeq(list, ",") {
			if k = strings.TrimSpace(k); k != "" {
				r.Kinds = append(r.Kinds, RecordKind(k))
			}
		}
	}
	var err error
	for name, t := range map[string]*time.Time{"since": &r.Since, "until": &r.Until} {
		if s := v.Get(name); s != "" && err == nil {
			if *t, err = time.Parse(time.RFC3339Nano, s); err != nil {
				err = fmt.Errorf("%s: want an RFC 3339 time, got %q", name, s)
			}
		}
	}
	r.Level, r.Search = v.Get("level"), v.Get("search")
	integer := func(name string, bits int) int64 {
		s := v.Get(name)
		if s == "" || err != nil {
			return 0
		}
		n, perr := strconv.ParseInt(s, 10, bits)
		if perr != nil {
			err = fmt.Errorf("%s: want an integer, got %q", name, s)
		}
		return n
	}
	if v.Has("channel") {
		ch := int(integer("channel", 32))
		r.Channel = &ch
	}
	r.After = integer("after", 64)
	r.Limit = int(integer("limit", 32))
	if s := v.Get("newest"); s != "" && err == nil {
		if r.Newest, err = strconv.ParseBool(s); err != nil {
			err = fmt.Errorf("newest: want true or false, got %q", s)
		}
	}
	return r, err
}

// Records is one page of a session's recording, in the order the host received the
// records (newest first with Newest).
type Records struct {
	Schema    string   `json:"schema"`
	SessionID string   `json:"sessionId"`
	Records   []Record `json:"records"`
	// Next is the cursor of the following page (RecordsRequest.After), absent on the last.
	Next int64 `json:"next,omitzero"`
}

// RecordKind says what a record holds (docs/recordings.md lists what each kind carries).
type RecordKind string

// Record kinds.
const (
	RecordLog        RecordKind = "log"        // one log line: Level and Text
	RecordChannel    RecordKind = "channel"    // a metric channel declared: Channel, Text its name
	RecordMetric     RecordKind = "metric"     // one metric sample: Channel and Value
	RecordEvent      RecordKind = "event"      // one app event; Text is its label
	RecordTouch      RecordKind = "touch"      // one touch
	RecordNetwork    RecordKind = "network"    // one HTTP request's metadata; Text is "METHOD url status"
	RecordTree       RecordKind = "tree"       // a visual-tree snapshot, the blob
	RecordAppState   RecordKind = "appState"   // the app went to foreground or background
	RecordProfile    RecordKind = "profile"    // the device and app profile
	RecordProperties RecordKind = "properties" // the session's custom properties
	RecordState      RecordKind = "state"      // a change of the session: connected, opened, complete, …
	RecordTraffic    RecordKind = "traffic"    // one message of tool traffic with its payload
	RecordArtifact   RecordKind = "artifact"   // a file an app tool delivered, the blob
	RecordCrash      RecordKind = "crash"      // a crash report the host kept: Data is a CrashReport
	RecordAnnotation RecordKind = "annotation" // an annotated-feedback bundle kept: Data is an Annotation
	RecordFrame      RecordKind = "frame"      // one live screen frame, the JPEG blob
	RecordControl    RecordKind = "control"    // another control request, verbatim with the host's answer
	RecordMessage    RecordKind = "message"    // an app message of no known type, verbatim (bounded)
)

// RecordKinds lists every kind, in a stable order.
var RecordKinds = []RecordKind{RecordLog, RecordChannel, RecordMetric, RecordEvent, RecordTouch, RecordNetwork, RecordTree,
	RecordAppState, RecordProfile, RecordProperties, RecordState, RecordTraffic, RecordArtifact, RecordCrash, RecordAnnotation,
	RecordFrame, RecordControl, RecordMessage}

// Record is one entry of a session's recording. Which members are set depends on Kind;
// Data always holds the entry as the app (or the host, for traffic and state) described
// it, unknown members included.
type Record struct {
	// Seq orders records in the order the host received them, across all sessions: the
	// paging cursor (RecordsRequest.After).
	Seq     int64      `json:"seq"`
	Session string     `json:"session"`
	Kind    RecordKind `json:"kind"`
	// At is when the entry happened, by the app's clock when the message says, else when
	// the host received it.
	At time.Time `json:"at"`
	// Level is a log record's level: debug, info, warn or error.
	Level string `json:"level,omitzero"`
	// Text is a one-line summary that RecordsRequest.Search matches.
	Text string `json:"text,omitzero"`
	// Channel is the metric channel of a sample, a channel declaration or an event.
	Channel *int `json:"channel,omitempty"`
	// Value is a metric sample's value (written even when 0 for a metric).
	Value float64 `json:"value,omitzero"`
	// Data is the entry's JSON object.
	Data jsontext.Value `json:"data,omitzero"`
	// Blob names the record's file (Backend.Blob opens it); BlobBytes is its size.
	Blob      string `json:"blob,omitzero"`
	BlobBytes int64  `json:"blobBytes,omitzero"`
	// Size is what the record counts against the budgets: its row and its file.
	Size int64 `json:"size"`
}

// MarshalJSONTo writes a metric sample's value even when it is 0: a sample of 0 is a value,
// not a missing one, and readers of the API may count on it. Other kinds leave a zero
// value out.
func (r Record) MarshalJSONTo(enc *jsontext.Encoder) error {
	type plain Record // the same fields, without this method
	if r.Kind != RecordMetric {
		return json.MarshalEncode(enc, plain(r))
	}
	return json.MarshalEncode(enc, struct {
		plain
		Value float64 `json:"value"` // shadows the embedded one, which omits a zero
	}{plain(r), r.Value})
}

// Blob is a record's file (a frame's JPEG, a tree, an artifact, a crash report), open for
// reading. Close it.
type Blob struct {
	Name      string
	MimeType  string
	SizeBytes int64
	Body      io.ReadCloser
}

// ExportRequest adjusts a session's export.
type ExportRequest struct {
	// Redact lists header and field names whose values are replaced by "<redacted>" in
	// every record and JSON file of the archive (network records are sanitised on intake in
	// any case); "default" stands for the usual credentials (recording.DefaultRedact).
	Redact []string `json:"redact,omitempty"`
	// Format is the archive's format: "ansight" (ours, the default) or "official" (the
	// official host's session archive; docs/recordings.md).
	Format string `json:"format,omitzero"`
	// Sanitize applies the built-in sanitize policy (pii-default) and adds its counts as
	// sanitization/report.json.
	Sanitize bool `json:"sanitize,omitzero"`
}

// PasswordHeader carries ImportRequest.Password on the control socket: a header, so that
// the password is never part of a URL that something could log.
const PasswordHeader = "X-Ansight-Archive-Password"

// ImportRequest adjusts Import.
type ImportRequest struct {
	// Password opens an encrypted archive (an official SDK's offline capture exported
	// with a password). The client sends it in a header, never in the URL.
	Password string `json:"-"`
}

// ImportReport says what an import read and what it left out, as the official import
// leaves entries out (docs/recordings.md).
type ImportReport struct {
	// Format is "ansight", "official" or "offline-capture"; Schema its version.
	Format string `json:"format"`
	Schema string `json:"schema,omitzero"`
	// Skipped counts the entries left out, by reason.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// Crashes lists the crash reports a session keeps, most recent first: each with its files
// (report.json as the app sent it, native.trace and metrickit.json decoded) in the
// session's directory.
type Crashes struct {
	Schema    string        `json:"schema"`
	SessionID string        `json:"sessionId"`
	Crashes   []CrashReport `json:"crashes"`
}

// CrashReport is a crash report an app handed over, as the host keeps it.
type CrashReport struct {
	// ID names the report in its session (one report delivered twice is kept once).
	ID       string `json:"id"`
	ReportID string `json:"reportId"`
	// SessionID is the session that keeps it: the crashed process's when the host still
	// knows it, else the delivering session.
	SessionID string `json:"sessionId"`
	// ProcessSessionID is the processSessionId of the process that crashed.
	ProcessSessionID string `json:"processSessionId"`
	// DeliveredBy is the session of the process that delivered it.
	DeliveredBy string `json:"deliveredBy"`
	Platform    string `json:"platform,omitzero"`
	Kind        string `json:"kind,omitzero"`
	Confidence  string `json:"confidence,omitzero"`
	// Message is the crash's message as the app recorded it, cut for listings.
	Message    string    `json:"message,omitzero"`
	OccurredAt time.Time `json:"occurredAt"`
	ReceivedAt time.Time `json:"receivedAt"`
	// Dir holds report.json and the decoded traces, listed in Files.
	Dir   string       `json:"dir"`
	Files []RecordFile `json:"files"`
}

// RecordFile is one file a host keeps for a session.
type RecordFile struct {
	Name      string `json:"name"`
	Path      string `json:"path"`
	SizeBytes int64  `json:"sizeBytes"`
}

// Annotation is an annotated-feedback bundle an app sent, as the host keeps it.
type Annotation struct {
	// ID is the app's clientAnnotationId (32 hex digits).
	ID         string    `json:"id"`
	SessionID  string    `json:"sessionId"`
	CapturedAt time.Time `json:"capturedAt"`
	ReceivedAt time.Time `json:"receivedAt"`
	// Path is the bundle (a zip: manifest.json, screenshot, visual trees, shapes).
	Path      string `json:"path"`
	FileName  string `json:"fileName,omitzero"` // as the app named it
	MimeType  string `json:"mimeType"`
	SizeBytes int64  `json:"sizeBytes"`
}

// Annotations lists the annotated-feedback bundles a session keeps, most recent first.
type Annotations struct {
	Schema      string       `json:"schema"`
	SessionID   string       `json:"sessionId"`
	Annotations []Annotation `json:"annotations"`
}

// EventKind says what happened to a session.
type EventKind string

// Event kinds.
const (
	EventConnected    EventKind = "connected"    // a session got a connection, new or resumed
	EventUpdated      EventKind = "updated"      // opened, or its profile, state, properties or label changed; or a listing changed as a whole
	EventDisconnected EventKind = "disconnected" // its connection ended (it stays listed, disconnected)
	EventRemoved      EventKind = "removed"      // a disconnected session left the listing
	EventCrashReport  EventKind = "crash-report" // it received a crash report
	EventAnnotation   EventKind = "annotation"   // it received an annotated-feedback bundle
)

// Event is a change of the host's sessions, as Backend.Events reports it: what to refresh,
// not the new state (Sessions and Session give that).
type Event struct {
	Kind EventKind `json:"kind"`
	// SessionID is the session that changed; empty when a listing changed as a whole (a
	// fleet's host joined or left).
	SessionID string `json:"sessionId,omitzero"`
}

// Session states.
const (
	StateConnected    = "connected"
	StateDisconnected = "disconnected"
)

// Sessions is a list of sessions.
type Sessions struct {
	Schema   string    `json:"schema"`
	Sessions []Session `json:"sessions"`
}

// ToolsRequest filters a session's catalog. The host answers from its catalog cache
// (refreshed with a conditional index query), so filtering costs the app nothing.
type ToolsRequest struct {
	// Query and Feature are free text: every term must occur in the tool's id, name,
	// description, category, keywords or prerequisites, or in its schemas (the names,
	// titles, descriptions and enum values of their properties).
	Query   string `json:"query,omitzero"`
	Feature string `json:"feature,omitzero"`
	// Category keeps tools of exactly this category.
	Category string `json:"category,omitzero"`
	// IDPrefix keeps tools whose id starts with it ("ui.").
	IDPrefix string `json:"idPrefix,omitzero"`
	// ToolIDs keeps exactly these tools.
	ToolIDs []string `json:"toolIds,omitempty"`
	// Policy keeps tools of this policy (read, write, critical).
	Policy string `json:"policy,omitzero"`
	// ExecutableOnly keeps only tools the host would call now.
	ExecutableOnly bool `json:"executableOnly,omitzero"`
	// MaxResults caps the list (0: no cap); Truncated says when it cut.
	MaxResults int `json:"maxResults,omitzero"`
	// Detail is "summary" (index entries, no schemas; the default) or "full" (schemas).
	Detail string `json:"detail,omitzero"`
	// IfRevision: when the catalog revision still equals it, the answer is Unchanged and
	// lists nothing.
	IfRevision string `json:"ifRevision,omitzero"`
}

// Detail levels of a ToolsRequest.
const (
	DetailSummary = "summary"
	DetailFull    = "full"
)

// Tools is a (filtered) catalog of one session. Entries carry the host's denial when it
// would refuse to call them.
type Tools struct {
	Schema               string           `json:"schema"`
	SessionID            string           `json:"sessionId"`
	Revision             string           `json:"revision"`
	AvailabilityRevision string           `json:"availabilityRevision,omitzero"`
	Unchanged            bool             `json:"unchanged,omitzero"`
	TotalCount           int              `json:"totalCount"`
	Count                int              `json:"count"`
	Truncated            bool             `json:"truncated,omitzero"`
	Categories           map[string]int   `json:"categories,omitzero"`
	Tools                []wire.ToolEntry `json:"tools"`
}

// Tool is one tool's full definition.
type Tool struct {
	Schema    string         `json:"schema"`
	SessionID string         `json:"sessionId"`
	Revision  string         `json:"revision"`
	Tool      wire.ToolEntry `json:"tool"`
}

// CallRequest is one tool call.
type CallRequest struct {
	ToolID    string         `json:"toolId"`
	Arguments jsontext.Value `json:"arguments,omitzero"`
	CallID    string         `json:"callId,omitzero"`
	After     *wire.After    `json:"after,omitzero"`
	// TimeoutMS is how long the host waits for the app's answer and its files, in
	// milliseconds, up to MaxTimeoutMS. 0: the limit the host derives from the call
	// (ui.wait's timeoutMilliseconds, the tool's hint:duration, the files' size; at least
	// 20 s, see docs/protocol/calls.md#how-long-the-host-waits). Not allowed on the calls
	// of a batch: give the batch's.
	TimeoutMS int64 `json:"timeoutMs,omitzero"`
	// Origin says who asks (OriginCLI, OriginPlayer, OriginFlow, OriginMCP+client name):
	// the host records it with the call's traffic, and 'ansight test record --origin'
	// selects calls by it. Not allowed on the calls of a batch: give the batch's.
	Origin string `json:"origin,omitzero"`
	// IfRevision and IfGrant make the call conditional: the host calls the tool only while
	// the session's catalog revision is IfRevision and its grant IfGrant (each when set),
	// and refuses otherwise with CodeSessionChanged (412) before the app sees anything. A
	// client that judged the call by the session as it looked it up earlier — the MCP
	// bridge refuses critical tools by their policy in that catalog — learns so that its
	// judgement is stale, instead of looking the session up again before every call. Not
	// allowed on the calls of a batch.
	IfRevision string      `json:"ifRevision,omitzero"`
	IfGrant    wire.Policy `json:"ifGrant,omitzero"`
}

// TrafficUIOperation is the type of the traffic record of a ui assert or wait (its request
// as the payload, its outcome and error code): what it checked, which its recorded
// captures do not say. 'ansight test record' turns it into a flow step.
const TrafficUIOperation = "ui.operation"

// Origins of calls: who asked. A client of its own may name itself with another short
// string (at most MaxOriginLength bytes, printable).
const (
	OriginCLI    = "cli"
	OriginPlayer = "player"
	OriginFlow   = "flow"
	// OriginMCP prefixes the name an MCP client gave itself and its MCP session's tag:
	// "mcp:claude-code#1f2e3d4c".
	OriginMCP = "mcp:"
	// OriginInternal is the host's own requests (catalog polls, evidence it gathers).
	OriginInternal  = "internal"
	MaxOriginLength = 128
)

// MaxTimeoutMS bounds CallRequest.TimeoutMS and BatchRequest.TimeoutMS: one hour.
const MaxTimeoutMS = 3600_000

// Call is the outcome of a call: the tool's result, or its error (tool failures are data:
// Success false with Error set; Kind says how to react).
type Call struct {
	Schema    string       `json:"schema"`
	SessionID string       `json:"sessionId"`
	ToolID    string       `json:"toolId"`
	Success   bool         `json:"success"`
	Result    *wire.Result `json:"result,omitzero"`
	Error     *ToolError   `json:"error,omitzero"`
	Artifacts []Artifact   `json:"artifacts,omitempty"`
	// DurationMS is the host-measured round trip, transfers included.
	DurationMS int64 `json:"durationMs"`
}

// BatchRequest is a sequential batch of 1..32 calls.
type BatchRequest struct {
	ContinueOnError bool          `json:"continueOnError,omitzero"`
	Calls           []CallRequest `json:"calls"`
	// TimeoutMS is how long the host waits for the whole batch's answer (see CallRequest).
	TimeoutMS int64 `json:"timeoutMs,omitzero"`
	// Origin says who asks, for every call of the batch (see CallRequest).
	Origin string `json:"origin,omitzero"`
}

// Batch is the outcome of a batch. A batch refused as a whole (or failed before any call
// ran) has Error set and no Result.
type Batch struct {
	Schema     string            `json:"schema"`
	SessionID  string            `json:"sessionId"`
	Success    bool              `json:"success"`
	Result     *wire.BatchResult `json:"result,omitzero"`
	Error      *ToolError        `json:"error,omitzero"`
	Artifacts  []Artifact        `json:"artifacts,omitempty"`
	DurationMS int64             `json:"durationMs"`
	// Refused lists the indexes of the calls the host refused to send (continueOnError:
	// each fails on its own, its item in Result carries the refusal; the others ran).
	Refused []int `json:"refused,omitempty"`
}

// ToolError is a tool.error or a host refusal, with the Kind a script or agent reacts to.
type ToolError struct {
	wire.Error
	// Kind: "denied" (policy, grant, guard), "unavailable" (unknown tool, not available in
	// the app's state), "invalid" (arguments or request), or "failed" (the tool failed):
	// the error's own (wire.Error.Kind), except that a host refusal is never "failed".
	Kind wire.Kind `json:"kind"`
	// RefusedByHost is true when the host refused to send the call (the app saw nothing).
	RefusedByHost bool `json:"refusedByHost,omitzero"`
	// Index and ToolID name the call that made the host refuse a whole batch (nothing ran).
	Index  *int   `json:"index,omitzero"`
	ToolID string `json:"toolId,omitzero"`
}

// Artifact is a file received over ASFT and saved by the host.
type Artifact struct {
	TransferID string `json:"transferId"`
	Path       string `json:"path,omitzero"`
	FileName   string `json:"fileName,omitzero"`
	MimeType   string `json:"mimeType,omitzero"`
	SizeBytes  int64  `json:"sizeBytes"`
	Status     string `json:"status"`
	Error      string `json:"error,omitzero"`
}

// Progress reports an artifact transfer while a call runs.
type Progress struct {
	TransferID    string `json:"transferId"`
	FileName      string `json:"fileName,omitzero"`
	ReceivedBytes int64  `json:"receivedBytes"`
	SizeBytes     int64  `json:"sizeBytes"`
	Done          bool   `json:"done,omitzero"`
}

// InviteRequest issues a pairing invite for a phone or another machine.
type InviteRequest struct {
	// AppID restricts the invite to one app ("" or "*": any app).
	AppID string `json:"appId,omitzero"`
	// AppName labels the invite, as the app's pairing screen shows it (default: AppID).
	AppName string `json:"appName,omitzero"`
	// DurationSeconds is how long the pairing should last (0: the host's default, 30
	// days). The invite itself can be used for at most 24 hours of it (10 minutes for
	// any app); the grant it leads to lasts the whole duration, 90 days at most.
	DurationSeconds int64 `json:"durationSeconds,omitzero"`
	// MaxToolPolicy is the grant of the paired client (default read).
	MaxToolPolicy wire.Policy `json:"maxToolPolicy,omitzero"`
	// HostAddresses, when set, replace the addresses the invite tells apps to try (at
	// most MaxHostAddresses IP addresses or host names).
	HostAddresses []string `json:"hostAddresses,omitempty"`
}

// MaxHostAddresses bounds InviteRequest.HostAddresses.
const MaxHostAddresses = 8

// Invite is an issued invite. Code is the secret: show it once, never log it. Its members
// are named as in the invite document (and the official CLI's output): inviteId, appId,
// appName, expiresAt, grantExpiresAt, maxToolPolicy.
type Invite struct {
	Schema         string      `json:"schema,omitzero"`
	ID             string      `json:"inviteId"`
	AppID          string      `json:"appId,omitzero"`
	AppName        string      `json:"appName,omitzero"`
	MaxToolPolicy  wire.Policy `json:"maxToolPolicy"`
	IssuedAt       time.Time   `json:"issuedAt"`
	ExpiresAt      time.Time   `json:"expiresAt"`
	GrantExpiresAt time.Time   `json:"grantExpiresAt"`
	Uses           int         `json:"uses"`
	MaxUses        int         `json:"maxUses"`
	RevokedAt      time.Time   `json:"revokedAt,omitzero"`
	Code           string      `json:"code,omitzero"`
	// HostAddresses are the addresses the invite tells apps to try.
	HostAddresses []string `json:"hostAddresses,omitempty"`
	// State is "open", "used", "expired" or "revoked".
	State string `json:"state"`
}

// Invites lists issued invites (without their secrets) and the grants the host holds:
// every pairing, local or made with an invite, revoked and expired ones included until the
// host prunes them.
type Invites struct {
	Schema  string   `json:"schema"`
	Invites []Invite `json:"invites"`
	Grants  []Grant  `json:"grants"`
}

// Grant is a pairing: what one app installation (app id and device id) may do, until when.
// Local-mode grants are made on an app's first connection; invite grants when a device
// uses an invite.
type Grant struct {
	Schema        string      `json:"schema,omitzero"`
	ID            string      `json:"grantId"`
	Mode          string      `json:"mode"`              // "local" or "invite"
	InviteID      string      `json:"inviteId,omitzero"` // the invite an invite grant was made with
	AppID         string      `json:"appId"`
	DeviceID      string      `json:"deviceId"`
	DeviceName    string      `json:"deviceName,omitzero"`
	MaxToolPolicy wire.Policy `json:"maxToolPolicy"`
	CreatedAt     time.Time   `json:"createdAt"`
	ExpiresAt     time.Time   `json:"expiresAt"`
	RevokedAt     time.Time   `json:"revokedAt,omitzero"`
	LastUsedAt    time.Time   `json:"lastUsedAt,omitzero"`
	State         string      `json:"state"` // "active", "expired" or "revoked"
}

// Revocation says what a revoke withdrew: an invite (and every grant made with it) or one
// grant, and how many live sessions it ended.
type Revocation struct {
	Schema        string   `json:"schema"`
	ID            string   `json:"id"`
	Revoked       bool     `json:"revoked"`
	Kind          string   `json:"kind"` // "invite" or "grant"
	GrantIDs      []string `json:"grantIds,omitempty"`
	SessionsEnded int      `json:"sessionsEnded"`
}

// Forgetting says which revoked or expired grant a forget removed: the app on that device
// may enroll again (in local mode, as a new grant).
type Forgetting struct {
	Schema    string `json:"schema"`
	ID        string `json:"id"`
	Forgotten bool   `json:"forgotten"`
	Mode      string `json:"mode"`
	AppID     string `json:"appId"`
	DeviceID  string `json:"deviceId"`
}

// MaxLabel bounds a session's label, in bytes.
const MaxLabel = label.MaxBytes

// RenameRequest is the body of POST /v1/sessions/{id}/rename: the session's new label
// (spaces around it trimmed; empty removes the label).
type RenameRequest struct {
	Label string `json:"label"`
}

// Renaming is a session's label as a rename left it.
type Renaming struct {
	Schema    string `json:"schema"`
	SessionID string `json:"sessionId"`
	Label     string `json:"label"`
}

// CheckLabel returns label trimmed of the spaces around it, or the API's refusal of a label
// longer than MaxLabel or holding a control or hidden character (internal/label: a label is
// shown in terminals, the player and agents' session lists, where a bidi override would
// reorder the line around it and a zero-width character make two labels look alike).
func CheckLabel(l string) (string, error) {
	checked, err := label.Check(l)
	if err != nil {
		return "", Errorf(http.StatusBadRequest, wire.CodeBadRequest, "%s", err.Error())
	}
	return checked, nil
}

// Error is the body of every non-2xx answer of the HTTP API.
type Error struct {
	Schema  string    `json:"schema"`
	Code    wire.Code `json:"code"`
	Message string    `json:"message"`
}
