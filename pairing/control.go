package pairing

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
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
	// crash.handoff carries a report of up to 8 MiB plus a 4 MiB trace, and even a request
	// the host does not support must be parsed far enough to be answered.
	MaxControlBytes = 16 << 20
	// MaxControlIDLength bounds id, replyTo and action.
	MaxControlIDLength = 256
)

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
// On error the returned envelope, when non-nil, holds what could be read: a request whose
// id was read but whose action is unusable can still be refused by id.
func ParseControl(data []byte) (*ControlEnvelope, error) {
	if len(data) > MaxControlBytes {
		return nil, malformed("control message of %d bytes exceeds %d", len(data), MaxControlBytes)
	}
	var j controlIn
	if err := decodeStrict(data, &j); err != nil {
		if id, ok := requestID(data); ok {
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

// requestID reads, without the strict rules (the first of duplicate names wins), the
// top-level type and id of a message the strict decoder refused, and returns the id when
// the message claims to be a control request with a usable id.
func requestID(data []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	var typ, id string
	var seenType, seenID bool
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		name := tok.String() // before the next read voids the token
		v, err := dec.ReadValue()
		if err != nil {
			break
		}
		if v.Kind() != '"' {
			continue
		}
		switch {
		case name == "type" && !seenType:
			typ, seenType = unquoted(v), true
		case name == "id" && !seenID:
			id, seenID = unquoted(v), true
		}
	}
	ok := typ == TypeControlRequest && strings.TrimSpace(id) != "" && len(id) <= MaxControlIDLength && utf8.ValidString(id)
	return id, ok
}

func unquoted(v jsontext.Value) string {
	b, err := jsontext.AppendUnquote(nil, v)
	if err != nil {
		return ""
	}
	return string(b)
}
