package session

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// Envelope types of the control channel.
const (
	TypeControlRequest  = "CONTROL_REQ"
	TypeControlResponse = "CONTROL_RESP"
)

// TypeClientDone is the legacy end of an app's stream, a text message
// {"type":"CLIENT_DONE",…} that older SDKs send instead of session.complete. It is not
// acknowledged; the official host ends the session as if the app had completed it.
const TypeClientDone = "CLIENT_DONE"

// Control actions an app sends.
const (
	ActionSessionOpen       = "session.open"
	ActionDeviceProfile     = "device.profile"
	ActionAppState          = "app.state"
	ActionSessionProperties = "session.properties"
	ActionClientLog         = "client.log"
	ActionSessionComplete   = "session.complete"
	// ActionCrashHandoff delivers a crash report from the app process after the one that
	// crashed (see CrashHandoff).
	ActionCrashHandoff = "crash.handoff"
	// ActionAnnotationSubmit announces an annotated-feedback bundle whose bytes follow as
	// ASFT frames (see AnnotationSubmit).
	ActionAnnotationSubmit = "annotation.submit"
)

// Limits of the control parser.
const (
	// MaxControlBytes bounds one control message. Profiles are a few KiB, but a
	// crash.handoff carries a report of up to 8 MiB plus a 4 MiB trace. A larger request
	// is still answered, by id: see MaxRequestBytes.
	MaxControlBytes = 16 << 20
	// MaxControlIDLength bounds id, replyTo and action.
	MaxControlIDLength = 256
)

// requestBudget bounds a CONTROL_REQ message by its action: what the action needs, with
// room to spare. Actions not listed (unsupported ones are refused anyway) get
// otherRequestBytes.
var requestBudget = map[string]int{
	ActionSessionOpen:       256 << 10, // customProperties
	ActionSessionProperties: 256 << 10, // Kotlin adds every tool id
	ActionDeviceProfile:     1 << 20,   // the app's icon may be inlined
	ActionAppState:          16 << 10,
	ActionSessionComplete:   16 << 10,
	ActionClientLog:         1 << 20,         // one line, a stack trace at most
	ActionCrashHandoff:      MaxControlBytes, // a report of up to 8 MiB and its traces
	ActionAnnotationSubmit:  64 << 10,        // a descriptor; the file follows as ASFT frames
}

const otherRequestBytes = 64 << 10

// MaxRequestBytes is the largest CONTROL_REQ message, in bytes, ParseControl takes for
// action. A larger request is refused with an error, by id when one is readable, without
// decoding its payload, so that the host answers it at once with success:false.
func MaxRequestBytes(action string) int {
	if n, ok := requestBudget[action]; ok {
		return n
	}
	return otherRequestBytes
}

// minRequestBudget is the smallest bound of requestBudget: a message below it is within
// every action's budget.
const minRequestBudget = 16 << 10

// ControlEnvelope is a CONTROL_REQ or CONTROL_RESP. Field order is the official one. When
// marshaled, an empty ID, ReplyTo or Message is written as null and a nil Payload as null;
// Success is always written, because Kotlin reads a missing value as false.
type ControlEnvelope struct {
	Type    string
	ID      string
	ReplyTo string
	Action  string
	Payload jsontext.Value // a JSON object, or nil for null
	Success bool
	Message string
}

type controlJSON struct {
	Type    string         `json:"type"`
	ID      *string        `json:"id"`
	ReplyTo *string        `json:"replyTo"`
	Action  string         `json:"action"`
	Payload jsontext.Value `json:"payload"`
	Success bool           `json:"success"`
	Message *string        `json:"message"`
}

// Marshal writes all seven keys.
func (e *ControlEnvelope) Marshal() ([]byte, error) {
	p := e.Payload
	if len(p) == 0 {
		p = jsontext.Value("null")
	}
	return encode(controlJSON{
		Type: e.Type, ID: strPtr(e.ID), ReplyTo: strPtr(e.ReplyTo), Action: e.Action,
		Payload: p, Success: e.Success, Message: strPtr(e.Message),
	})
}

// NewControlID returns a request id in the official SDKs' format, client.<32 hex>.
func NewControlID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "client." + hex.EncodeToString(b[:])
}

// NewControlRequest builds a CONTROL_REQ with a fresh id. Success is true, as Kotlin
// writes it. payload must be a JSON object or nil.
func NewControlRequest(action string, payload jsontext.Value) *ControlEnvelope {
	return &ControlEnvelope{Type: TypeControlRequest, ID: NewControlID(), Action: action, Payload: payload, Success: true}
}

// Reply builds the CONTROL_RESP to e: id null, replyTo e's id, the same action.
func (e *ControlEnvelope) Reply(success bool, message string, payload jsontext.Value) *ControlEnvelope {
	return &ControlEnvelope{Type: TypeControlResponse, ReplyTo: e.ID, Action: e.Action, Payload: payload, Success: success, Message: message}
}

type controlIn struct {
	Type    raw `json:"type"`
	ID      raw `json:"id"`
	ReplyTo raw `json:"replyTo"`
	Action  raw `json:"action"`
	Payload raw `json:"payload"`
	Success raw `json:"success"`
	Message raw `json:"message"`
}

// ParseControl reads a control message.
//
// A CONTROL_REQ needs a non-blank string id and a non-blank string action. Its payload is
// kept raw and not checked here, so that a request with an unusable payload can still be
// answered with success:false (the official host leaves such a request unanswered, and the
// SDK then tears the session down after 10–15 s); see DecodePayload.
//
// A CONTROL_RESP needs a non-blank replyTo, a string action and an explicit boolean
// success; id may be null.
//
// A CONTROL_REQ larger than MaxRequestBytes of its action is an error; the envelope then
// holds its id and action, read without decoding the payload.
//
// On error the returned envelope, when non-nil, holds what could be read: a request whose
// id was read but whose action is unusable can still be refused by id.
func ParseControl(data []byte) (*ControlEnvelope, error) {
	if len(data) > minRequestBudget {
		// Read id and action leniently first: a request over its action's budget is
		// refused by id without decoding (or, above MaxControlBytes, even validating) it.
		if id, action, ok := requestHeader(data); ok && len(data) > MaxRequestBytes(action) {
			return &ControlEnvelope{Type: TypeControlRequest, ID: id, Action: action},
				malformed("%s request of %d bytes exceeds the %d bytes allowed", action, len(data), MaxRequestBytes(action))
		}
	}
	if len(data) > MaxControlBytes {
		return nil, malformed("control message of %d bytes exceeds %d", len(data), MaxControlBytes)
	}
	var j controlIn
	if err := decodeStrict(data, &j); err != nil {
		if id, _, ok := requestHeader(data); ok {
			// Refused, but answerable: the SDK gives up on a session whose request goes
			// unanswered for 10–15 s.
			return &ControlEnvelope{Type: TypeControlRequest, ID: id}, err
		}
		return nil, err
	}
	e := &ControlEnvelope{}
	var err error
	if e.Type, err = requiredString("type", j.Type); err != nil {
		return nil, err
	}
	if e.ID, err = optionalString("id", j.ID); err != nil {
		return nil, err
	}
	if len(e.ID) > MaxControlIDLength {
		return nil, malformed("id is longer than %d bytes", MaxControlIDLength)
	}
	switch e.Type {
	case TypeControlRequest:
		if strings.TrimSpace(e.ID) == "" {
			return nil, malformed("control request without an id")
		}
	case TypeControlResponse:
	default:
		return nil, malformed("type %q is not a control message", e.Type)
	}
	if !isNull(j.Payload) {
		e.Payload = j.Payload
	}
	if e.Action, err = requiredString("action", j.Action); err != nil {
		return e, err
	}
	if len(e.Action) > MaxControlIDLength {
		return e, malformed("action is longer than %d bytes", MaxControlIDLength)
	}
	if e.Type == TypeControlRequest {
		if strings.TrimSpace(e.Action) == "" {
			return e, malformed("control request without an action")
		}
		return e, nil
	}
	if e.ReplyTo, err = optionalString("replyTo", j.ReplyTo); err != nil {
		return nil, err
	}
	if strings.TrimSpace(e.ReplyTo) == "" {
		return nil, malformed("control response without replyTo")
	}
	switch string(j.Success) {
	case "true":
		e.Success = true
	case "false":
	default:
		return nil, malformed("control response without a boolean success")
	}
	if e.Message, err = optionalString("message", j.Message); err != nil {
		return nil, err
	}
	return e, nil
}

// DecodePayload decodes e's payload into v (a pointer to one of the payload types). The
// payload must be a JSON object; null or absent is an error, as is a member of the wrong
// JSON type. Unknown members are ignored.
func (e *ControlEnvelope) DecodePayload(v any) error {
	if len(e.Payload) == 0 {
		return malformed("%s needs a payload object", e.Action)
	}
	if e.Payload.Kind() != '{' {
		return malformed("%s payload is not a JSON object", e.Action)
	}
	return decodeStrict(e.Payload, v)
}

// headerNames are the members requestHeader reads.
var headerNames = []string{"type", "id", "action"}

// requestHeader reads, without the strict rules (jsonscan.TopStrings: the first of
// duplicate names wins), the top-level type, id and action of a message, skipping other
// values unread, and returns the id and action when the message claims to be a control
// request with a usable id. The action is "" when it is not a string.
func requestHeader(data []byte) (id, action string, ok bool) {
	var v [3]string
	jsonscan.TopStrings(data, headerNames, v[:], nil)
	typ, id, action := v[0], v[1], v[2]
	ok = typ == TypeControlRequest && strings.TrimSpace(id) != "" && len(id) <= MaxControlIDLength && utf8.ValidString(id)
	if len(action) > MaxControlIDLength {
		action = ""
	}
	return id, action, ok
}
